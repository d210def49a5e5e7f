import AsyncHarness
import Foundation
import HarnessTestSupport
import XCTest

/// A type of Swift Testing tests written without `@Suite` is a suite as Swift Testing runs it
/// (`swift test` prints `✘ Suite UnmarkedTwinTests failed`, and `--filter UnmarkedTwinTests`
/// runs its tests), though Swift Testing's listing declares no suite for it. `harness test`
/// names its tests under it, `Module.Type/test()`, as it names those of a suite written so:
/// before, they went under the module, two tests of the same name in two such types were told
/// apart only as `opens()` and `opens()#01`, and `--filter` by the type matched nothing.
/// The fixture's `UnmarkedSuites.swift` (Tests/Fixtures/ExistingTests) fails the twin's test
/// only with EXISTING_TESTS_UNMARKED=1.
final class SwiftTestingUnmarkedSuitesTests: ReportTestCase {
  private static let package = FixturePackage("ExistingTests", scratch: "existing-tests-scratch")

  /// Runs the fixture's tests that `filter` selects, the twin's test failing, with `flags`:
  /// its status, its console, and the verdict of each test by path.
  private func run(_ filter: String, flags: [String] = []) throws -> (status: Int32, output: String, verdicts: [String: Verdict]) {
    try Self.package.build()
    let json = path("events.jsonl")
    var environment = ProcessInfo.processInfo.environment
    environment["EXISTING_TESTS_UNMARKED"] = "1"
    let run = try runToEnd(try builtHarness(), [
      "test", "--package-path", Self.package.directory.path, "--skip-build", "--json", json, "--filter", filter,
    ] + flags + ["--", "--scratch-path", Self.package.scratch.path], environment: environment, limit: 300)
    var verdicts: [String: Verdict] = [:]
    for (test, result, _) in try EventRecorder(jsonLines: String(contentsOfFile: json, encoding: .utf8)).results {
      verdicts[test.path] = result.verdict
    }
    return (run.status, run.output + run.errors, verdicts)
  }

  func testATypeWithoutSuiteIsTheSuiteOfItsTests() throws {
    for flags in [[], ["--workers", "2"]] {
      let run = try run("\\.Unmarked", flags: flags)
      XCTAssertEqual(run.status, 1, run.output)
      XCTAssertEqual(run.verdicts, ["LedgerTests.UnmarkedLedgerTests/opens()": .passed,
                                    "LedgerTests.UnmarkedTwinTests/opens()": .failed])
      XCTAssertTrue(run.output.contains("PASS  LedgerTests.UnmarkedLedgerTests/opens() [swift-testing] ("), run.output)
      XCTAssertTrue(run.output.contains("FAIL  LedgerTests.UnmarkedTwinTests/opens() [swift-testing] ("), run.output)
      XCTAssertTrue(run.output.contains("/LedgerTests/UnmarkedSuites.swift:18: Expectation failed: (unmarkedFails → true) == "
        + "false - the twin's ledger does not open\n"), run.output)
      XCTAssertFalse(run.output.contains("opens()#01"), run.output)
      XCTAssertFalse(run.output.contains("suite \"LedgerTests\" has"), run.output)
    }
  }

  /// `--filter` by the type runs its tests, as `swift test --filter UnmarkedTwinTests` does.
  func testAFilterNamingTheTypeRunsItsTests() throws {
    let run = try run("UnmarkedTwinTests")
    XCTAssertEqual(run.status, 1, run.output)
    XCTAssertEqual(run.verdicts, ["LedgerTests.UnmarkedTwinTests/opens()": .failed])
  }
}
