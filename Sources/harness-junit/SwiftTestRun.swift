import AsyncHarness
import AsyncHarnessJUnit
import Foundation

/// How a `swift test` run for one merged report ended.
struct SwiftTestOutcome {
  /// `swift test`'s exit status (1 when it was killed by a signal).
  var status: Int32
  /// What the user should know about the report (a part that is missing).
  var notes: [String]
}

/// Runs `swift test arguments…` with the XCTest observer's variable set and Swift Testing's
/// event stream on (version 6.3 with its underscored fields, ``SwiftTestingRecord/runVersion``:
/// an older version turns warnings off inside the run, which changes what tests see), then writes one report from both: the XCTest report
/// (`AsyncHarnessXCTestJUnit`) and the converted event stream, merged.
///
/// The parts are written to a temporary directory that is removed afterwards.
/// - Throws: ``JUnitError`` when a part cannot be read or the report cannot be written;
///   ``NoResults`` when `swift test` wrote neither part (it could not build, or start).
func runSwiftTest(arguments: [String], report: String, profile: JUnitProfile) throws -> SwiftTestOutcome {
  // Fails early, before the tests run, when the report cannot be written.
  if let reason = ReportDestination.problem(with: report) {
    throw JUnitError.destinationUnusable(path: report, reason: reason)
  }
  let parts = FileManager.default.temporaryDirectory.appendingPathComponent("harness-junit-\(UUID().uuidString)")
  try FileManager.default.createDirectory(at: parts, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: parts) }
  let xctest = parts.appendingPathComponent("xctest.xml").path
  let events = parts.appendingPathComponent("swift-testing.jsonl").path
  let swiftTesting = parts.appendingPathComponent("swift-testing.xml").path

  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
  process.arguments = ["swift", "test"] + arguments
    + ["--event-stream-output-path", events, "--event-stream-version", SwiftTestingRecord.runVersion]
  var environment = ProcessInfo.processInfo.environment
  environment[SwiftTestingRecord.experimentalFieldsVariable] = "1"
  environment["ASYNCHARNESS_JUNIT"] = xctest
  environment["ASYNCHARNESS_JUNIT_PROFILE"] = profile.name
  process.environment = environment
  try process.run()
  process.waitUntilExit()
  let status = process.terminationReason == .exit ? process.terminationStatus : 1

  var inputs: [String] = []
  var notes: [String] = []
  if FileManager.default.fileExists(atPath: xctest) {
    inputs.append(xctest)
  } else {
    notes.append("no XCTest results: no XCTest tests ran, or no test target links AsyncHarnessXCTestJUnit")
  }
  if FileManager.default.fileExists(atPath: events) {
    try convertSwiftTestingEvents(events, toJUnit: swiftTesting, profile: profile)
    inputs.append(swiftTesting)
  } else {
    notes.append("no Swift Testing results: swift test wrote no event stream")
  }
  guard !inputs.isEmpty else {
    throw NoResults(status: status)
  }
  try mergeJUnitReports(inputs, into: report)
  return SwiftTestOutcome(status: status, notes: notes)
}

/// `swift test` ended without writing any results: nothing to report.
struct NoResults: Error, CustomStringConvertible {
  var status: Int32

  var description: String {
    "swift test exited with status \(status) and wrote no test results (did it build?); no JUnit report was written"
  }
}
