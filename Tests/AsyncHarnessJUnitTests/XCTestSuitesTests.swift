import AsyncHarness
import Foundation
import HarnessTestSupport
import XCTest

/// swift-corelibs-xctest's functional tests Observation/All and Observation/Selected, as a
/// package's tests: an observer a package adds before XCTest runs sees the suites `swift test`
/// shows it. A run of `harness test` that chooses none of the tests (no `--filter`, `--only`,
/// shard …) runs XCTest's in one invocation of the bundle under `All tests` and the bundle's
/// suite, as `swift test` does; a run that chooses runs them under `Selected tests`, as
/// `swift test --filter` does, and so does a worker that runs only some of them. The fixture's `XCTestSuites.swift` (Tests/Fixtures/ExistingTests)
/// checks which, as EXISTING_TESTS_SUITES says.
final class XCTestSuitesTests: ReportTestCase {
  private static let package = FixturePackage("ExistingTests", scratch: "existing-tests-scratch")
  private static let test = "LedgerTests.SuitesXCTests/testSeesTheSuitesOfItsRun"

  /// Runs the fixture with EXISTING_TESTS_SUITES=`kind` and `flags`: the test's verdict and
  /// the messages of its issues.
  private func run(_ kind: String, _ flags: [String]) throws -> (verdict: Verdict?, issues: [String]) {
    try Self.package.build()
    let json = path("events.jsonl")
    var environment = ProcessInfo.processInfo.environment
    environment["EXISTING_TESTS_SUITES"] = kind
    let run = try runToEnd(try builtHarness(), [
      "test", "--package-path", Self.package.directory.path, "--skip-build", "--json", json,
    ] + flags + ["--", "--scratch-path", Self.package.scratch.path], environment: environment, limit: 300)
    XCTAssertNotEqual(run.status, 2, run.errors)
    var verdict: Verdict?
    var issues: [String] = []
    for line in try String(contentsOfFile: json, encoding: .utf8).split(separator: "\n") {
      switch try Event(jsonLine: line).kind {
      case .issueRecorded(let test, let issue) where test.path == Self.test: issues.append(issue.message)
      case .testEnded(let test, let end) where test.path == Self.test: verdict = end.verdict
      default: break
      }
    }
    return (verdict, issues)
  }

  func testARunThatChoosesNoTestShowsAllTestsAndTheBundlesSuite() throws {
    let run = try run("all", [])
    XCTAssertEqual(run.issues, [])
    XCTAssertEqual(run.verdict, .passed)
  }

  func testARunThatChoosesItsTestsShowsSelectedTests() throws {
    let run = try run("selected", ["--filter", "SuitesXCTests"])
    XCTAssertEqual(run.issues, [])
    XCTAssertEqual(run.verdict, .passed)
  }
}
