import AsyncHarness
import Foundation
import HarnessTestSupport
import XCTest

/// A test that closes every descriptor above 2 (the fixture's `Descriptors.swift`, with
/// EXISTING_TESTS_DESCRIPTORS=1) passes under `swift test`, and the tests after it in its
/// process run as they would: the second fails at its line, the third passes. Under `harness
/// test` the test bundle's channel to the harness survives it (the library preloaded into the
/// bundle keeps `close` off it), so every verdict is `swift test`'s; before, the closing test
/// errored as a crash (`ended with exit status 1`) and the others ran again in a new process.
final class ClosedDescriptorsTests: ReportTestCase {
  private static let package = FixturePackage("ExistingTests", scratch: "existing-tests-scratch")

  func testATestThatClosesEveryDescriptorKeepsItsVerdictAndItsNeighbours() throws {
    try Self.package.build()
    for flags in [[], ["--workers", "2"]] {
      let json = path("events.jsonl")
      var environment = ProcessInfo.processInfo.environment
      environment["EXISTING_TESTS_DESCRIPTORS"] = "1"
      let run = try runToEnd(try builtHarness(), [
        "test", "--package-path", Self.package.directory.path, "--skip-build", "--json", json, "--filter", "ClosesDescriptors",
      ] + flags + ["--", "--scratch-path", Self.package.scratch.path], environment: environment, limit: 300)
      XCTAssertEqual(run.status, 1, run.output + run.errors)
      var verdicts: [String: Verdict] = [:]
      var outsideFailures = 0
      let recorder = try EventRecorder(jsonLines: String(contentsOfFile: json, encoding: .utf8))
      for (test, result, _) in recorder.results { verdicts[test.path] = result.verdict }
      for event in recorder.events { if case .outsideFailure = event.kind { outsideFailures += 1 } }
      XCTAssertEqual(outsideFailures, 0)
      XCTAssertEqual(verdicts, [
        "LedgerTests.ClosesDescriptorsXCTests/testA_ClosesEveryDescriptorAbove2": .passed,
        "LedgerTests.ClosesDescriptorsXCTests/testB_FailsAfterIt": .failed,
        "LedgerTests.ClosesDescriptorsXCTests/testC_PassesAfterIt": .passed,
        "LedgerTests.ClosesDescriptorsSwiftTests/closesEveryDescriptorAbove2()": .passed,
        "LedgerTests.ClosesDescriptorsSwiftTests/failsAfterIt()": .failed,
        "LedgerTests.ClosesDescriptorsSwiftTests/passesAfterIt()": .passed,
      ])
      XCTAssertTrue(run.output.contains("/LedgerTests/Descriptors.swift:22: XCTAssertFalse failed - the ledger after the "
        + "descriptors closed\n"), run.output)
      XCTAssertTrue(run.output.contains("/LedgerTests/Descriptors.swift:28: Expectation failed: (closesDescriptors → true) == "
        + "false - the ledger after the descriptors closed\n"), run.output)
      XCTAssertTrue(run.output.contains("Result: 4 passed, 2 failed, 0 skipped in "), run.output)
    }
  }
}
