@testable @_spi(ForToolsIntegrationOnly) import AsyncHarness
import Foundation
import HarnessTestSupport
import XCTest

/// A bundle's listing kept beside it (`ListingCache`): read back as it was listed for the very
/// same bundle, and never once the bundle, or what was asked of its listing, changed.
final class ListingCacheTests: TemporaryDirectoryTestCase {
  private var bundle: String { directory.appendingPathComponent("PkgPackageTests.xctest").path }

  private let listed = [
    ExistingTest(library: .xctest, suite: "Pkg.ATests", name: "testB", id: "Pkg.ATests/testB", isParameterized: false),
    ExistingTest(library: .xctest, suite: "Pkg.ATests", name: "testA", id: "Pkg.ATests/testA", isParameterized: false),
    ExistingTest(library: .swiftTesting, suite: "Pkg.Suite", suiteDisplayName: "A suite", name: "runs(amount:)",
                 displayName: "Runs", id: "Pkg.Suite/runs(amount:)/File.swift:3:4", isParameterized: true,
                 sourceLocation: SourceLocation(fileID: "Pkg/File.swift", filePath: "/p/File.swift", line: 3, column: 4),
                 isSerialized: true, serializedSuite: "Pkg.Suite"),
  ]

  override func setUpWithError() throws {
    try super.setUpWithError()
    XCTAssertTrue(FileManager.default.createFile(atPath: bundle, contents: Data("built".utf8)))
  }

  private func cache(withSerialization: Bool = false) throws -> ListingCache {
    try XCTUnwrap(ListingCache(bundle: bundle, withSerialization: withSerialization))
  }

  func testTheSameBundleReadsBackItsListingInItsOrder() throws {
    XCTAssertNil(try cache().read(), "nothing kept yet")
    try cache().write(listed)
    XCTAssertEqual(try cache().read(), listed)
    XCTAssertTrue(FileManager.default.fileExists(atPath: directory.appendingPathComponent("asyncharness-listing.json").path))
  }

  func testABundleWrittenAgainIsListedAgain() throws {
    try cache().write(listed)
    // Rebuilt with the same bytes: a new file identity all the same.
    try FileManager.default.removeItem(atPath: bundle)
    XCTAssertTrue(FileManager.default.createFile(atPath: bundle, contents: Data("built".utf8)))
    XCTAssertNil(try cache().read())
    try cache().write(listed)
    // Written in place.
    let handle = try XCTUnwrap(FileHandle(forWritingAtPath: bundle))
    try handle.seekToEnd()
    try handle.write(contentsOf: Data("!".utf8))
    try handle.close()
    XCTAssertNil(try cache().read())
  }

  func testAListingAskedOtherwiseIsListedAgain() throws {
    try cache().write(listed)
    XCTAssertNil(try cache(withSerialization: true).read(), "a plain listing says nothing of .serialized")
  }

  /// A bundle's code runs as it lists (static initializers, its tests' declarations), and may
  /// read the environment: another environment lists again.
  func testAnotherEnvironmentListsAgain() throws {
    let environment = ["PATH": "/usr/bin", "LEDGER": "1"]
    try XCTUnwrap(ListingCache(bundle: bundle, withSerialization: false, environment: environment)).write(listed)
    XCTAssertEqual(ListingCache(bundle: bundle, withSerialization: false, environment: ["LEDGER": "1", "PATH": "/usr/bin"])?.read(),
                   listed)
    XCTAssertNil(ListingCache(bundle: bundle, withSerialization: false, environment: ["PATH": "/usr/bin"])?.read())
    XCTAssertNil(ListingCache(bundle: bundle, withSerialization: false, environment: ["PATH": "/usr/bin", "LEDGER": "2"])?.read())
  }

  func testAFileThatIsNotAListingIsListedAgain() throws {
    try cache().write(listed)
    let path = directory.appendingPathComponent("asyncharness-listing.json").path
    for text in ["", "{", #"{"key":"other","tests":[]}"#] {
      XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(text.utf8)))
      XCTAssertNil(try cache().read(), text)
    }
  }

  func testNoBundleNoCache() {
    XCTAssertNil(ListingCache(bundle: directory.appendingPathComponent("missing").path, withSerialization: false))
  }
}
