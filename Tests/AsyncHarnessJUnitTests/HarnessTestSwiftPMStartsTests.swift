import Foundation
import XCTest

/// Issue 51: `harness test` starts SwiftPM once, to build, and not at all with `--skip-build`:
/// it finds the test bundle by SwiftPM's layout. Each run here has a `PATH` whose first `swift`
/// writes down its arguments and then runs the real one, so every start of SwiftPM is counted.
final class HarnessTestSwiftPMStartsTests: ReportTestCase {
  private static let package = FixturePackage("ExistingTests", scratch: "existing-tests-scratch")

  func testSkipBuildStartsNoSwiftPM() throws {
    let run = try runCountingSwiftStarts(["--skip-build"])
    XCTAssertEqual(run.status, 0, run.errors)
    XCTAssertEqual(run.starts, [])
  }

  func testABuildStartsSwiftPMOnce() throws {
    let run = try runCountingSwiftStarts([])
    XCTAssertEqual(run.status, 0, run.errors)
    XCTAssertEqual(run.starts, ["build --build-tests --package-path \(Self.package.directory.path) --scratch-path "
      + Self.package.scratch.path])
  }

  /// A build flag the layout does not know could move the products: SwiftPM says where they are.
  func testABuildFlagTheLayoutDoesNotKnowAsksSwiftPM() throws {
    let run = try runCountingSwiftStarts(["--skip-build"], buildFlags: ["--build-system", "native"])
    XCTAssertEqual(run.status, 0, run.errors)
    XCTAssertEqual(run.starts, ["build --show-bin-path --package-path \(Self.package.directory.path) --scratch-path "
      + "\(Self.package.scratch.path) --build-system native"])
  }

  /// `swift test -c release` compiles the package for testing, so that `@testable import`
  /// builds in release too; `harness test` asks its build for the same. (This `swift` stops
  /// there: the build is not run.)
  func testAReleaseBuildIsCompiledForTesting() throws {
    let run = try runCountingSwiftStarts([], buildFlags: ["-c", "release"], swiftRuns: false)
    XCTAssertEqual(run.status, 2, run.errors)
    XCTAssertEqual(run.starts, ["build --build-tests --package-path \(Self.package.directory.path) --scratch-path "
      + "\(Self.package.scratch.path) -c release -Xswiftc -enable-testing"])
    XCTAssertTrue(run.errors.contains("swift build --build-tests failed (exit status 1):\nnot built here"), run.errors)
  }

  /// Without `--package-path`, the package is the nearest directory holding Package.swift
  /// from the working directory up, as `swift test` finds it: run in a test target's folder,
  /// the fixture's tests build and run there; where no directory up holds one, the run says so.
  func testWithoutAPackagePathThePackageIsFoundFromTheWorkingDirectoryUp() throws {
    let inside = Self.package.directory.appendingPathComponent("Tests/LedgerTests")
    let run = try runCountingSwiftStarts([], packagePath: nil, in: inside)
    XCTAssertEqual(run.status, 0, run.errors)
    XCTAssertEqual(run.starts, ["build --build-tests --package-path \(Self.package.directory.path) --scratch-path "
      + Self.package.scratch.path])
    // The bundle runs where `swift test` runs it: in the working directory, where the package's
    // file a test reads by a relative path is not (it is, in the package's directory).
    let reads = ["--skip-build", "--filter", "FilesXCTests", "--", "--scratch-path", Self.package.scratch.path]
    let fromInside = try runToEnd(try builtHarness(), ["test"] + reads, in: inside, limit: 300)
    XCTAssertEqual(fromInside.status, 1, fromInside.errors)
    XCTAssertTrue(fromInside.output.contains("run in \(inside.path)"), fromInside.output)
    let fromThePackage = try runToEnd(try builtHarness(), ["test", "--package-path", Self.package.directory.path] + reads,
                                      in: inside, limit: 300)
    XCTAssertEqual(fromThePackage.status, 0, fromThePackage.output)
    let outside = try runToEnd(try builtHarness(), ["test", "--skip-build"], in: URL(fileURLWithPath: "/"), limit: 60)
    XCTAssertEqual(outside.status, 2, outside.errors)
    XCTAssertEqual(outside.errors, "error: no Package.swift in / or any directory above it: run harness test in a package, "
      + "or name one with --package-path\n")
  }

  // MARK: Helpers

  /// Runs one passing test of the fixture with `harness test` and `flags`, the fixture's
  /// scratch path and `buildFlags` after `--`; returns its status, what it wrote to standard
  /// error, and the arguments of each `swift` it started (which then runs the real one, unless
  /// `swiftRuns` is false: it then fails, saying `not built here`); with `--package-path
  /// packagePath` unless it is `nil`, in `workingDirectory` when given.
  private func runCountingSwiftStarts(_ flags: [String], buildFlags: [String] = [], swiftRuns: Bool = true,
                                      packagePath: String? = package.directory.path, in workingDirectory: URL? = nil) throws
    -> (status: Int32, errors: String, starts: [String]) {
    try Self.package.build()
    let harness = try builtHarness()
    var environment = ProcessInfo.processInfo.environment
    let path = environment["PATH"] ?? "/usr/bin:/bin"
    let swift = try XCTUnwrap(path.split(separator: ":").lazy.map { "\($0)/swift" }
      .first { FileManager.default.isExecutableFile(atPath: $0) }, "no swift on the PATH")
    let bin = directory.appendingPathComponent("bin")
    let log = self.path("swift-starts.log")
    try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
    let script = bin.appendingPathComponent("swift").path
    let then = swiftRuns ? "exec '\(swift)' \"$@\"" : "echo 'not built here'; exit 1"
    try "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '\(log)'\n\(then)\n".write(toFile: script, atomically: true, encoding: .utf8)
    try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script)
    environment["PATH"] = "\(bin.path):\(path)"
    let run = try runToEnd(harness, ["test"] + (packagePath.map { ["--package-path", $0] } ?? [])
                                     + ["--filter", "LedgerXCTests/testPasses"] + flags
                                     + ["--", "--scratch-path", Self.package.scratch.path] + buildFlags,
                           environment: environment, in: workingDirectory, limit: 300)
    let starts = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    return (run.status, run.errors, starts)
  }
}
