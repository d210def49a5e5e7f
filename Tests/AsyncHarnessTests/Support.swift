@testable import AsyncHarness
import XCTest

/// Runs suites in-process and returns what the reporters saw.
func runSuites(_ suites: [Suite], configure: (inout Configuration) -> Void = { _ in }) throws -> EventRecorder {
  let recorder = EventRecorder()
  var configuration = Configuration()
  configure(&configuration)
  try Runner(suites: suites, configuration: configuration, reporters: [recorder]).run()
  return recorder
}

/// The single result of a run of one test.
func onlyResult(of suites: [Suite], file: StaticString = #filePath, line: UInt = #line,
                configure: (inout Configuration) -> Void = { _ in }) throws -> TestResult {
  let results = try runSuites(suites, configure: configure).results
  XCTAssertEqual(results.count, 1, file: file, line: line)
  return try XCTUnwrap(results.first?.result, file: file, line: line)
}
