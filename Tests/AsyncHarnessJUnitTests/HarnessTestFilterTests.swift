import AsyncHarness
import Foundation
import HarnessTestSupport
import XCTest

/// `harness test --filter` and `--skip` select what `swift test` selects with the same flags
/// (regular expressions, Tests/Fixtures/ExistingTests; each case checked against `swift test`
/// 6.3.1): before, `--filter` was a substring, so `^LedgerTests\.LedgerXCTests/testPasses$` or
/// `Unmarked\.swift` matched nothing and the run failed with status 2, where `swift test`
/// ran the tests. Filters that match nothing make an empty, green run, as under `swift test`.
final class HarnessTestFilterTests: ReportTestCase {
  private static let package = FixturePackage("ExistingTests", scratch: "existing-tests-scratch")

  /// `harness test` on the fixture with `flags`: its status, output and errors.
  private func harnessTest(_ flags: [String]) throws -> (status: Int32, output: String, errors: String) {
    try Self.package.build()
    let run = try runToEnd(try builtHarness(), ["test", "--package-path", Self.package.directory.path, "--skip-build"]
      + flags + ["--", "--scratch-path", Self.package.scratch.path], limit: 300)
    return (run.status, run.output, run.errors)
  }

  /// The tests `flags` select, as `--list` prints them.
  private func listed(_ flags: [String]) throws -> [String] {
    let run = try harnessTest(["--list"] + flags)
    XCTAssertEqual(run.status, 0, run.errors)
    return run.output.split(separator: "\n").map(String.init)
  }

  func testFiltersAndSkipsSelectWhatSwiftTestSelects() throws {
    XCTAssertEqual(try listed(["--filter", "^LedgerTests\\.LedgerXCTests/test(Passes|Prints)$"]),
                   ["LedgerTests.LedgerXCTests/testPasses", "LedgerTests.LedgerXCTests/testPrints"])
    // A suite's ID selects the suites in it too; a file's name, the tests declared in it.
    XCTAssertEqual(try listed(["--filter", "LedgerSuite/Nested$"]),
                   ["LedgerTests.LedgerSuite\\/Nested/insideNested()", "LedgerTests.LedgerSuite\\/Nested\\/Deeper/insideDeeper()"])
    XCTAssertEqual(try listed(["--filter", "Unmarked\\.swift"]),
                   ["LedgerTests.HoldsUnmarked\\/First/same()", "LedgerTests.HoldsUnmarked\\/Second/same()"])
    XCTAssertEqual(try listed(["--filter", "LedgerSuite/", "--skip", "Nested", "--skip", "parameterized|twoArguments|name"]),
                   ["LedgerTests.LedgerSuite/passes()", "LedgerTests.LedgerSuite/failsWithExpect()",
                    "LedgerTests.LedgerSuite/throwsAnError()", "LedgerTests.LedgerSuite/disabled()",
                    "LedgerTests.LedgerSuite/knownIssue()", "LedgerTests.LedgerSuite/prints()",
                    "LedgerTests.LedgerSuite/asyncPasses()", "LedgerTests.LedgerSuite/asyncFails()"])
  }

  func testFiltersThatMatchNothingMakeAnEmptyGreenRunWithAWarning() throws {
    let run = try harnessTest(["--filter", "LedgerXCTests$", "--skip", "x"])
    XCTAssertEqual(run.status, 0, run.errors)
    XCTAssertTrue(run.errors.contains("warning: no test matches --filter \"LedgerXCTests$\", --skip \"x\": the run is empty\n"),
                  run.errors)
    XCTAssertTrue(run.output.contains("Result: 0 passed, 0 failed, 0 skipped"), run.output)
  }

  func testAPatternThatIsNotARegularExpressionIsAUsageError() throws {
    let run = try harnessTest(["--filter", "passes(", "--list"])
    XCTAssertEqual(run.status, 2)
    XCTAssertEqual(run.errors, "error: --filter \"passes(\" is not a regular expression: expected ')'\n")
    XCTAssertEqual(run.output, "")
  }
}
