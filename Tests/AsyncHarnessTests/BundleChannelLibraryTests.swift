@testable import AsyncHarness
import Foundation
import HarnessTestSupport
import XCTest

/// The library `harness test` preloads into a test bundle: compiled once per directory with
/// the `swiftc` on the `PATH`, reused after, refused by name without a compiler; and the
/// variables a worker starts with.
final class BundleChannelLibraryTests: TemporaryDirectoryTestCase {
  func testItIsCompiledOnceAndReusedAfter() throws {
    let environment = ProcessInfo.processInfo.environment
    guard HarnessTestCommand.executable(named: "swiftc", environment: environment) != nil else {
      throw XCTSkip("no swiftc on the PATH")
    }
    let library = try BundleChannelLibrary.path(in: directory.path, environment: environment)
    XCTAssertTrue(library.hasPrefix(directory.path + "/asyncharness-bundle-channel-"), library)
    XCTAssertTrue(library.hasSuffix(".so"), library)
    let built = try FileManager.default.attributesOfItem(atPath: library)[.modificationDate] as? Date
    XCTAssertEqual(try BundleChannelLibrary.path(in: directory.path, environment: environment), library)
    XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: library)[.modificationDate] as? Date, built)
    // Nothing but the library is left behind.
    XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), [(library as NSString).lastPathComponent])
  }

  func testWithoutSwiftcTheRunIsRefusedByName() {
    XCTAssertThrowsError(try BundleChannelLibrary.path(in: directory.path, environment: ["PATH": directory.path])) {
      XCTAssertEqual("\($0)", "harness test needs swiftc on the PATH (the toolchain that builds the package) to hear its tests")
    }
  }

  func testACompilerThatFailsIsNamedWithWhatItSaid() throws {
    let compiler = directory.appendingPathComponent("swiftc")
    try "#!/bin/sh\necho 'error: no such module XCTest' >&2\nexit 1\n".write(to: compiler, atomically: true, encoding: .utf8)
    try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: compiler.path)
    XCTAssertThrowsError(try BundleChannelLibrary.path(in: directory.path, environment: ["PATH": directory.path])) {
      XCTAssertEqual("\($0)", "\(compiler.path) cannot compile the library that hears the bundle's tests (exit status 1):\n"
        + "error: no such module XCTest\n")
    }
  }

  func testAWorkerPreloadsTheLibraryAfterTheRunsOwnAndIsToldItsLibraryAndMarker() {
    XCTAssertEqual(
      BundleChannelLibrary.environment(library: "/b/lib.so", testing: .xctest, marker: "M", inherited: ["LD_PRELOAD": "/u/own.so"]),
      ["LD_PRELOAD": "/u/own.so:/b/lib.so", "ASYNC_HARNESS_BUNDLE_PRELOAD": "/b/lib.so", "ASYNC_HARNESS_BUNDLE_CHANNEL": "3",
       "ASYNC_HARNESS_BUNDLE_LIBRARY": "xctest", "ASYNC_HARNESS_BUNDLE_MARKER": "M"])
    XCTAssertEqual(
      BundleChannelLibrary.environment(library: "/b/lib.so", testing: .swiftTesting, marker: "M", inherited: [:])["LD_PRELOAD"],
      "/b/lib.so")
  }
}
