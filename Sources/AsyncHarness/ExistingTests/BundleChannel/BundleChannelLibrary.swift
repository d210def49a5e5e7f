import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The library `harness test` preloads into a package's own test bundle so that each testing
/// library is heard on a channel of its own, never through what the tests print
/// (`AsyncHarnessBundleChannel.swift` beside this file, embedded in the harness as text).
///
/// It is compiled with the package's own toolchain (`swiftc` on the `PATH`, the one that
/// built the bundle) the first time a bundle directory needs it, and kept there under a name
/// that holds a hash of its source and of that compiler, so a new harness or a new toolchain
/// compiles it again. Compiled into a temporary name and renamed, so runs side by side (shards)
/// never load a half-written file.
enum BundleChannelLibrary {
  /// The variable naming the descriptor the channel is handed over as.
  static let channelVariable = "ASYNC_HARNESS_BUNDLE_CHANNEL"
  /// The variable naming the library the bundle runs (`xctest` or `swift-testing`).
  static let libraryVariable = "ASYNC_HARNESS_BUNDLE_LIBRARY"
  /// The variable holding the text of the marker lines the library writes to the bundle's
  /// standard output before each record.
  static let markerVariable = "ASYNC_HARNESS_BUNDLE_MARKER"
  /// The variable naming the library's path, which it removes from `LD_PRELOAD`.
  static let preloadVariable = "ASYNC_HARNESS_BUNDLE_PRELOAD"
  /// The descriptor the channel is handed over as.
  static let channelDescriptor: Int32 = 3

  /// The library for bundles in `directory`, compiled there first when it is not.
  /// - Throws: ``UsageError`` when there is no `swiftc` or it cannot compile the library.
  static func path(in directory: String, environment: [String: String]) throws -> String {
    #if os(Linux)
    guard let compiler = HarnessTestCommand.executable(named: "swiftc", environment: environment) else {
      throw UsageError("harness test needs swiftc on the PATH (the toolchain that builds the package) to hear its tests")
    }
    let resolved = URL(fileURLWithPath: compiler).resolvingSymlinksInPath().path
    let modified = ((try? FileManager.default.attributesOfItem(atPath: resolved))?[.modificationDate] as? Date)
      .map { "\($0.timeIntervalSince1970)" } ?? ""
    let source = PackageResources.AsyncHarnessBundleChannel_swift
    let key = String(StableHash.fnv1a64(continuing: StableHash.fnv1a64("\(resolved) \(modified)"), source), radix: 16)
    let library = "\(directory)/asyncharness-bundle-channel-\(key).so"
    if FileManager.default.fileExists(atPath: library) { return library }
    let scratch = "\(directory)/asyncharness-bundle-channel-\(key)-\(getpid())-\(UUID().uuidString)"
    defer {
      try? FileManager.default.removeItem(atPath: scratch + ".swift")
      try? FileManager.default.removeItem(atPath: scratch + ".so")
    }
    guard FileManager.default.createFile(atPath: scratch + ".swift", contents: Data(source)) else {
      throw UsageError("cannot write \(scratch).swift: the bundle's directory \(directory) is not writable")
    }
    // _GNU_SOURCE: C's `fopencookie`, through which Swift Testing's stream reaches the channel.
    let compile = try TestBundle.run(compiler, [
      "-emit-library", "-parse-as-library", "-O", "-Xcc", "-D_GNU_SOURCE", "-module-name", "AsyncHarnessBundleChannel",
      scratch + ".swift", "-o", scratch + ".so",
    ])
    guard compile.status == 0, rename(scratch + ".so", library) == 0 else {
      throw UsageError("\(compiler) cannot compile the library that hears the bundle's tests (\(compile.ending)):\n"
        + compile.output)
    }
    return library
    #else
    throw UsageError("harness test runs a package's tests on Linux only for now")
    #endif
  }

  /// The variables a bundle worker of `library` starts with: the library preloaded (after
  /// any the run was given), and what it reads at load time.
  static func environment(library path: String, testing library: ExistingTest.Library, marker: String,
                          inherited: [String: String] = ProcessInfo.processInfo.environment) -> [String: String] {
    let preload = inherited["LD_PRELOAD"].map { "\($0):\(path)" } ?? path
    return [
      "LD_PRELOAD": preload, preloadVariable: path, channelVariable: String(channelDescriptor),
      libraryVariable: library.name, markerVariable: marker,
    ]
  }
}
