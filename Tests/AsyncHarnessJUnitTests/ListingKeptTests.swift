import AsyncHarness
import Foundation
import HarnessTestSupport
import XCTest

/// `harness test` lists a bundle once: what it listed is kept beside the bundle, and the next
/// run of the same bundle reads it (Tests/Fixtures/ExistingTests).
final class ListingKeptTests: ReportTestCase {
  private static let package = FixturePackage("ExistingTests", scratch: "existing-tests-scratch")
  private static var fixture: URL { package.directory }
  private static var scratch: URL { package.scratch }

  /// A bundle's listing is kept beside it (`asyncharness-listing.json`, ListingCacheTests): the
  /// next run of the same bundle reads it, and lists the same tests in the same order.
  func testTheListingKeptForTheSameBundleListsTheSameTests() throws {
    try Self.package.build()
    let kept = Self.scratch.path + "/debug/asyncharness-listing.json"  // beside the bundle
    try? FileManager.default.removeItem(atPath: kept)
    let list = { try runToEnd(try builtHarness(), ["test", "--package-path", Self.fixture.path, "--skip-build", "--list", "--",
                                                   "--scratch-path", Self.scratch.path], limit: 300) }
    let listed = try list()
    XCTAssertEqual(listed.status, 0, listed.errors)
    XCTAssertTrue(FileManager.default.fileExists(atPath: kept), "the listing was not kept")
    let again = try list()
    XCTAssertEqual(again.status, 0, again.errors)
    XCTAssertEqual(again.output, listed.output)
    XCTAssertEqual(listed.output.split(separator: "\n").count, HarnessTestCommandTests.verdicts.count)
  }
}
