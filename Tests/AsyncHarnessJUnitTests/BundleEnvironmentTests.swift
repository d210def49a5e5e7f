import Foundation
import HarnessTestSupport
import XCTest

/// A package's tests see under `harness test` the environment `swift test` gives them, in
/// both libraries: none of the harness's variables, the Swift runtime's backtracer and
/// AddressSanitizer's options as the run had them (the harness sets them for the bundle's
/// start alone, and its preloaded library puts them back), and `NO_COLOR=1` when the output
/// is not a terminal, as SwiftPM sets it. Before, tests saw `SWIFT_BACKTRACE=enable=no` and
/// `ASAN_OPTIONS=verify_asan_link_order=0`, and so did every process they started, and no
/// `NO_COLOR`. The fixture's `Environment.swift` (Tests/Fixtures/ExistingTests).
final class BundleEnvironmentTests: ReportTestCase {
  private static let package = FixturePackage("ExistingTests", scratch: "existing-tests-scratch")

  /// The environment each library's test saw, run by `tool` with `arguments`.
  private func environments(_ tool: URL, _ arguments: [String], run: String,
                            given environment: [String: String]) throws -> [String: [String]] {
    var environment = environment
    environment["EXISTING_TESTS_ENVIRONMENT"] = path(run)
    let ended = try runToEnd(tool, arguments, environment: environment, limit: 300)
    XCTAssertEqual(ended.status, 0, ended.output + ended.errors)
    var seen: [String: [String]] = [:]
    for library in ["xctest", "swift-testing"] {
      seen[library] = try String(contentsOfFile: path("\(run).\(library)"), encoding: .utf8).split(separator: "\n")
        .map(String.init).filter { !$0.hasPrefix("EXISTING_TESTS_ENVIRONMENT=") }
    }
    return seen
  }

  func testTheTestsSeeTheEnvironmentSwiftTestGivesThem() throws {
    try Self.package.build()
    let package = ["--package-path", Self.package.directory.path, "--skip-build", "--filter", "\\.Environment"]
    let scratch = ["--scratch-path", Self.package.scratch.path]
    // The run's own environment, without what this test process was started with for the harness.
    var given = ProcessInfo.processInfo.environment
    for name in ["SWIFT_BACKTRACE", "ASAN_OPTIONS", "NO_COLOR"] { given[name] = nil }
    for (withOwn, extra) in [(false, [:]), (true, ["SWIFT_BACKTRACE": "enable=no,interactive=no", "ASAN_OPTIONS": "detect_leaks=0"])] {
      let environment = given.merging(extra) { $1 }
      let expected = try environments(URL(fileURLWithPath: "/usr/bin/env"), ["swift", "test"] + package + scratch,
                                       run: "swift-test-\(withOwn)", given: environment)
      let seen = try environments(try builtHarness(), ["test"] + package + ["--"] + scratch,
                                  run: "harness-test-\(withOwn)", given: environment)
      XCTAssertEqual(seen, expected, "with the run's own SWIFT_BACKTRACE and ASAN_OPTIONS: \(withOwn)")
      XCTAssertTrue(expected["xctest"]?.contains("NO_COLOR=1") == true, "\(expected)")
    }
  }
}
