@_spi(ForToolsIntegrationOnly) @testable import AsyncHarness
import Foundation
import HarnessTestSupport
import XCTest

/// The library `harness test` preloads into a test bundle: compiled once into a cache with the
/// `swiftc` on the `PATH`, reused after, refused by name without a compiler or when it cannot
/// compile, its files removed when a run ends first; and the variables a worker starts with.
final class BundleChannelLibraryTests: TemporaryDirectoryTestCase {
  func testItIsCompiledOnceAndReusedAfter() throws {
    let environment = ProcessInfo.processInfo.environment
    guard HarnessTestCommand.executable(named: "swiftc", environment: environment) != nil else {
      throw XCTSkip("no swiftc on the PATH")
    }
    let library = try BundleChannelLibrary.prepare(in: directory.path, environment: environment).ready()
    XCTAssertTrue(library.hasPrefix(directory.path + "/asyncharness-bundle-channel-"), library)
    XCTAssertTrue(library.hasSuffix(".so"), library)
    let built = try FileManager.default.attributesOfItem(atPath: library)[.modificationDate] as? Date
    XCTAssertEqual(try BundleChannelLibrary.prepare(in: directory.path, environment: environment).ready(), library)
    XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: library)[.modificationDate] as? Date, built)
    // Nothing but the library is left behind.
    XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), [(library as NSString).lastPathComponent])
  }

  func testWithoutSwiftcTheRunIsRefusedByName() {
    XCTAssertThrowsError(try BundleChannelLibrary.prepare(in: directory.path, environment: ["PATH": directory.path])) {
      XCTAssertEqual("\($0)", "harness test needs swiftc on the PATH (the toolchain that builds the package) to hear its tests")
    }
  }

  func testACompilerThatFailsIsNamedWithWhatItSaid() throws {
    let compiler = directory.appendingPathComponent("swiftc")
    try "#!/bin/sh\necho 'error: no such module XCTest' >&2\nexit 1\n".write(to: compiler, atomically: true, encoding: .utf8)
    try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: compiler.path)
    XCTAssertThrowsError(try BundleChannelLibrary.prepare(in: directory.path, environment: ["PATH": directory.path]).ready()) {
      XCTAssertEqual("\($0)", "\(compiler.path) cannot compile the library that hears the bundle's tests (exit status 1):\n"
        + "error: no such module XCTest\n")
    }
  }

  func testARunThatEndsBeforeItsTestsLeavesNoFileOfTheCompile() throws {
    let compiler = directory.appendingPathComponent("swiftc")
    try "#!/bin/sh\nexec sleep 30\n".write(to: compiler, atomically: true, encoding: .utf8)
    try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: compiler.path)
    let cache = directory.appendingPathComponent("cache")
    try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
    let start = ContinuousClock().now
    try BundleChannelLibrary.prepare(in: cache.path, environment: ["PATH": directory.path]).abandon()
    XCTAssertLessThan(start.duration(to: .now), .seconds(10), "the compile is stopped, not waited for")
    XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: cache.path), [])
  }

  func testAWorkerPreloadsTheLibraryAfterTheRunsOwnAndIsToldItsLibraryAndMarker() {
    // Its own variables, and AddressSanitizer told not to refuse a library preloaded before it.
    XCTAssertEqual(
      BundleChannelLibrary.environment(library: "/b/lib.so", testing: .xctest, marker: "M",
                                       inherited: ["LD_PRELOAD": "/u/own.so", "NO_COLOR": "0"]),
      ["LD_PRELOAD": "/u/own.so:/b/lib.so", "ASYNC_HARNESS_BUNDLE_PRELOAD": "/b/lib.so", "ASYNC_HARNESS_BUNDLE_CHANNEL": "3",
       "ASYNC_HARNESS_BUNDLE_LIBRARY": "xctest", "ASYNC_HARNESS_BUNDLE_MARKER": "M",
       "ASAN_OPTIONS": "verify_asan_link_order=0", "ASYNC_HARNESS_BUNDLE_PUT_BACK": "ASAN_OPTIONS,SWIFT_BACKTRACE"])
    XCTAssertEqual(
      BundleChannelLibrary.environment(library: "/b/lib.so", testing: .xctest, marker: "M",
                                       inherited: ["ASAN_OPTIONS": "detect_leaks=1"])["ASAN_OPTIONS"],
      "detect_leaks=1:verify_asan_link_order=0")
    // The run's own values of what is set for the bundle's start alone, for the library to put back.
    let own = BundleChannelLibrary.environment(library: "/b/lib.so", testing: .xctest, marker: "M",
                                               inherited: ["ASAN_OPTIONS": "detect_leaks=1", "SWIFT_BACKTRACE": "enable=yes"])
    XCTAssertEqual(own["ASYNC_HARNESS_BUNDLE_WAS_ASAN_OPTIONS"], "detect_leaks=1")
    XCTAssertEqual(own["ASYNC_HARNESS_BUNDLE_WAS_SWIFT_BACKTRACE"], "enable=yes")
    XCTAssertEqual(
      BundleChannelLibrary.environment(library: "/b/lib.so", testing: .swiftTesting, marker: "M", inherited: [:])["LD_PRELOAD"],
      "/b/lib.so")
  }

  /// Under a schedule the worker is told it, with the scheduled strategy's quiet period and the
  /// steps to say.
  func testAScheduledWorkerIsToldItsScheduleAndQuietPeriod() {
    let variables = BundleChannelLibrary.environment(library: "/b/lib.so", testing: .xctest, marker: "M",
                                                     schedule: Schedule(seed: 7, policy: .pct(depth: 3)), inherited: [:])
    XCTAssertEqual(variables["ASYNC_HARNESS_BUNDLE_SCHEDULE"], "7:pct3:200:0")
    // Under --trace, with the most steps a test's events hold.
    XCTAssertEqual(BundleChannelLibrary.environment(library: "/b/lib.so", testing: .xctest, marker: "M",
                                                    schedule: Schedule(seed: 1, policy: .randomWalk), saysSteps: true,
                                                    inherited: [:])["ASYNC_HARNESS_BUNDLE_SCHEDULE"], "1:random:200:10000")
    XCTAssertNil(BundleChannelLibrary.environment(library: "/b/lib.so", testing: .xctest, marker: "M",
                                                  inherited: [:])["ASYNC_HARNESS_BUNDLE_SCHEDULE"])
  }

  /// Issues 50 and 52: what the library and the core share is compiled into both from one
  /// source. Every file of Sources/AsyncHarness/Shared (the module AsyncHarnessShared) is among
  /// the library's sources, byte for byte; the library keeps no copy of a generator, a picker,
  /// a record's JSON or the executors, and never reads a task from a job's description.
  func testTheLibraryIsCompiledFromEverySharedSourceAndKeepsNoCopyOfIt() throws {
    let shared = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("Sources/AsyncHarness/Shared")
    let files = try FileManager.default.contentsOfDirectory(atPath: shared.path).filter { $0.hasSuffix(".swift") }.sorted()
    XCTAssertTrue(Set(["ChannelRecord.swift", "JSONEscape.swift", "RoutedExecutors.swift", "SchedulePicking.swift"])
      .isSubset(of: files), "\(files)")
    for file in files {
      let embedded = try XCTUnwrap(BundleChannelLibrary.sources.first { $0.0 == file }?.1, "\(file) is not compiled into the library")
      XCTAssertEqual(Data(embedded), try Data(contentsOf: shared.appendingPathComponent(file)), file)
    }
    let own = BundleChannelLibrary.sources.filter { !files.contains($0.0) }.map { String(decoding: $0.1, as: UTF8.self) }
      .joined(separator: "\n")
    XCTAssertFalse(own.contains("0x9E37_79B9_7F4A_7C15"), "the library keeps a generator of its own")
    XCTAssertFalse(own.contains("changePoints"), "the library keeps a picker of its own")
    XCTAssertTrue(own.contains("SchedulePicking(seed:"))
    XCTAssertFalse(own.contains(#""record":"#), "the library writes a record by hand")
    XCTAssertNil(own.range(of: #"class \w+: [^{]*(TaskExecutor|MainExecutor)"#, options: .regularExpression),
                 "the library keeps executors of its own")
    XCTAssertFalse(own.contains(".description"), "the library reads something from a description's text")
  }
}
