import Foundation
import XCTest

/// A package whose test bundle lists no test (Tests/Fixtures/NoTests: an XCTest class without
/// a test method, no Swift Testing test) passes under `swift test` (`Executed 0 tests`, exit
/// status 0): `harness test` passes it too, with a warning, where it refused it as a usage
/// error that `--allow-empty` could not lift.
final class EmptyBundleTests: ReportTestCase {
  private static let package = FixturePackage("NoTests", scratch: "no-tests-scratch")

  func testABundleOfNoTestIsAnEmptyGreenRun() throws {
    try Self.package.build()
    let bundle = try XCTUnwrap(FileManager.default.enumerator(atPath: Self.package.scratch.path)?
      .compactMap { $0 as? String }.first { $0.hasSuffix("debug/NoTestsPackageTests.xctest") })
    let bundlePath = URL(fileURLWithPath: Self.package.scratch.path).appendingPathComponent(bundle).resolvingSymlinksInPath().path
    for flags in [[], ["--workers", "2"]] {
      let run = try runToEnd(try builtHarness(), [
        "test", "--package-path", Self.package.directory.path, "--skip-build",
      ] + flags + ["--", "--scratch-path", Self.package.scratch.path], limit: 300)
      XCTAssertEqual(run.status, 0, run.output + run.errors)
      XCTAssertTrue(run.output.hasPrefix("Result: 0 passed, 0 failed, 0 skipped in "), run.output)
      XCTAssertEqual(run.errors, "warning: the test bundle \(bundlePath) has no tests\n")
    }
  }
}
