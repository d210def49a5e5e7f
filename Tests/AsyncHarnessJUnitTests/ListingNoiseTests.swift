import AsyncHarness
import Foundation
import HarnessTestSupport
import XCTest

/// A test bundle that prints as it loads (a C library's banner) and as it exits: `swift test`
/// runs its tests as without it, and so does `harness test`, which refused the bundle before
/// (`error: line 1 is not Module.Class/method: libledger 1.0 loaded`, exit status 2). The
/// fixture's `Banner.swift` (Tests/Fixtures/ExistingTests) prints only with EXISTING_TESTS_BANNER=1.
final class ListingNoiseTests: ReportTestCase {
  private static let package = FixturePackage("ExistingTests", scratch: "existing-tests-scratch")

  func testABannerAroundTheXCTestListingIsNotTheListing() throws {
    try Self.package.build()
    var environment = ProcessInfo.processInfo.environment
    environment["EXISTING_TESTS_BANNER"] = "1"
    let list = try runToEnd(try builtHarness(), [
      "test", "--package-path", Self.package.directory.path, "--skip-build", "--list", "--",
      "--scratch-path", Self.package.scratch.path,
    ], environment: environment, limit: 300)
    XCTAssertEqual(list.status, 0, list.errors)
    XCTAssertEqual(list.output.split(separator: "\n").count, HarnessTestCommandTests.verdicts.count, list.output)
    XCTAssertFalse(list.output.contains("libledger"), list.output)
    let run = try runToEnd(try builtHarness(), [
      "test", "--package-path", Self.package.directory.path, "--skip-build", "--filter", "LedgerXCTests/testPasses",
      "--filter", "LedgerSuite/passes()", "--", "--scratch-path", Self.package.scratch.path,
    ], environment: environment, limit: 300)
    XCTAssertEqual(run.status, 0, run.output + run.errors)
    XCTAssertTrue(run.output.contains("PASS  LedgerTests.LedgerXCTests/testPasses [xctest] ("), run.output)
    XCTAssertTrue(run.output.contains("PASS  LedgerTests.LedgerSuite/passes() [swift-testing] ("), run.output)
    XCTAssertTrue(run.output.contains("Result: 2 passed, 0 failed, 0 skipped in "), run.output)
  }
}
