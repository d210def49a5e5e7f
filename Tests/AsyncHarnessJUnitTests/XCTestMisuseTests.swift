import AsyncHarness
import Foundation
import HarnessTestSupport
import XCTest

/// Cases of swift-corelibs-xctest's own functional tests (Asynchronous/Misuse,
/// SkippingTestCase) as a package's tests: `harness test` says what `swift test` says, in
/// XCTest's words. The fixture's `XCTestMisuse.swift` (Tests/Fixtures/ExistingTests) misuses
/// XCTest only with EXISTING_TESTS_MISUSE=1; its header holds the lines `swift test` prints.
final class XCTestMisuseTests: ReportTestCase {
  private static let package = FixturePackage("ExistingTests", scratch: "existing-tests-scratch")

  /// What a run of the fixture's `MisuseXCTests` with EXISTING_TESTS_MISUSE=1 gave: its status
  /// and console, and each test's issues and end by name.
  private func runTheMisuse() throws -> (status: Int32, output: String, issues: [String: [Issue]], ends: [String: TestEnd]) {
    try Self.package.build()
    let json = path("events.jsonl")
    var environment = ProcessInfo.processInfo.environment
    environment["EXISTING_TESTS_MISUSE"] = "1"
    let run = try runToEnd(try builtHarness(), [
      "test", "--package-path", Self.package.directory.path, "--skip-build", "--json", json, "--filter", "MisuseXCTests",
      "--", "--scratch-path", Self.package.scratch.path,
    ], environment: environment, limit: 300)
    var issues: [String: [Issue]] = [:]
    var ends: [String: TestEnd] = [:]
    for line in try String(contentsOfFile: json, encoding: .utf8).split(separator: "\n") {
      switch try Event(jsonLine: line).kind {
      case .issueRecorded(let test, let issue): issues[test.name, default: []].append(issue)
      case .testEnded(let test, let end): ends[test.name] = end
      default: break
      }
    }
    return (run.status, run.output + run.errors, issues, ends)
  }

  /// A failure XCTest counts as unexpected but places at a line (expectations never waited
  /// for, an API violation) fails its test at that line, as `swift test` prints it; only a
  /// thrown error, which XCTest places nowhere (`<EXPR>:0`), has no line.
  func testAFailureXCTestCountsAsUnexpectedFailsAtItsLine() throws {
    let run = try runTheMisuse()
    XCTAssertEqual(run.status, 1, run.output)
    let expected: [(test: String, line: Int, message: String)] = [
      ("testA_LeavesTwoExpectationsUnwaited", 22, "Failed due to unwaited expectations 'the first', 'the second'"),
      ("testB_WaitsWithoutExpectations", 28, "API violation - call made to wait without any expectations having been set."),
    ]
    for (test, line, message) in expected {
      XCTAssertEqual(run.ends[test]?.verdict, .failed, test)
      let issue = try XCTUnwrap(run.issues[test]?.first, test)
      XCTAssertEqual(run.issues[test]?.count, 1, test)
      XCTAssertEqual(issue.kind, .expectationFailed, test)
      XCTAssertEqual(issue.message, message, test)
      XCTAssertEqual(issue.sourceLocation?.fileID, "LedgerTests/XCTestMisuse.swift", test)
      XCTAssertEqual(issue.sourceLocation?.line, line, test)
      // The console: the test, then its failure at the fixture's file and line.
      XCTAssertTrue(run.output.contains("FAIL  LedgerTests.MisuseXCTests/\(test) [xctest] ("), run.output)
      XCTAssertTrue(run.output.contains("/LedgerTests/XCTestMisuse.swift:\(line): \(message)\n"), run.output)
    }
  }

  /// A skip says what XCTest says after `Test skipped`: what `XCTSkipIf` found, then the
  /// skip's message.
  func testASkipSaysWhatXCTestFoundAndItsMessage() throws {
    let run = try runTheMisuse()
    let test = "testC_SkipsIfTheLedgerIsClosed"
    XCTAssertEqual(run.ends[test]?.verdict, .skipped)
    XCTAssertEqual(run.ends[test]?.reason, "required true value but got false - the ledger is closed")
    XCTAssertTrue(run.output.contains("SKIP  LedgerTests.MisuseXCTests/\(test) [xctest] (0.")
      && run.output.contains(") - required true value but got false - the ledger is closed\n"), run.output)
  }
}
