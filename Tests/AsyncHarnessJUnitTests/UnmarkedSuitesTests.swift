import AsyncHarness
import Foundation
import HarnessTestSupport
import XCTest

@testable import AsyncHarnessJUnit

/// A type without `@Suite` that holds Swift Testing tests is a suite as Swift Testing runs them
/// (`◇ Suite First started.`), though its listing has no record of it (swift-snapshot-testing
/// 1.19.7's `BaseSuite.AssertSnapshotTests` and `BaseSuite.MainActorTests`, each with a
/// `dump()`): each test is reported in it, not as a repeat in the suite around it
/// (`BaseSuite/dump()#01`). The fixture's `HoldsUnmarked` (Tests/Fixtures/ExistingTests).
final class UnmarkedSuitesTests: ReportTestCase {
  private static let package = FixturePackage("ExistingTests", scratch: "existing-tests-scratch")

  func testATypeWithoutSuiteThatHoldsTestsIsTheirSuite() throws {
    try Self.package.build()
    for flags in [[], ["--workers", "2"]] {
      let json = path("events.jsonl")
      let run = try runToEnd(try builtHarness(), [
        "test", "--package-path", Self.package.directory.path, "--skip-build", "--json", json, "--junit", path("report.xml"),
        "--filter", "HoldsUnmarked",
      ] + flags + ["--", "--scratch-path", Self.package.scratch.path], limit: 300)
      XCTAssertEqual(run.status, 0, run.output + run.errors)
      var verdicts: [String: Verdict] = [:]
      for line in try String(contentsOfFile: json, encoding: .utf8).split(separator: "\n") {
        if case .testEnded(let test, let end) = try Event(jsonLine: line).kind { verdicts[test.path] = end.verdict }
      }
      XCTAssertEqual(verdicts, ["LedgerTests.HoldsUnmarked/First/same()": .passed,
                                "LedgerTests.HoldsUnmarked/Second/same()": .passed], "\(flags)")
      XCTAssertTrue(run.output.contains("LedgerTests.HoldsUnmarked/First   1/1\n"), run.output)
      XCTAssertTrue(run.output.contains("LedgerTests.HoldsUnmarked/Second  1/1\n"), run.output)
      let cases = try XMLReader.readDocument(path("report.xml")).testCases
      // The two run side by side (Swift Testing runs them in parallel): either may end first.
      XCTAssertEqual(cases.map { [$0.attribute("classname") ?? "", $0.attribute("name") ?? ""] }.sorted { $0[0] < $1[0] }, [
        ["LedgerTests.HoldsUnmarked/First [swift-testing]", "same()"],
        ["LedgerTests.HoldsUnmarked/Second [swift-testing]", "same()"],
      ])
    }
  }
}
