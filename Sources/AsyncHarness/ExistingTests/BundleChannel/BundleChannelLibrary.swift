import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The library `harness test` preloads into a package's own test bundle so that each testing
/// library is heard on a channel of its own, never through what the tests print
/// (`AsyncHarnessBundleChannel.swift` beside this file), and, under `--explore` and
/// `--schedule`, the bundle's Swift concurrency runs in a schedule's order on virtual time
/// (`AsyncHarnessBundleExplorer.swift`): both embedded in the harness as text, compiled into
/// one library.
///
/// It is compiled with the package's own toolchain (`swiftc` on the `PATH`, the one that
/// builds the bundle) once per machine and toolchain, into the user's cache
/// (`$XDG_CACHE_HOME/asyncharness`, else `~/.cache/asyncharness`, else the temporary directory),
/// under a name that holds a hash of its source and of that compiler, so a new harness or a
/// new toolchain compiles it again. The compile (about 2 s, unoptimized: the library only
/// writes a few records a test) starts in the background as `harness test` starts, beside the
/// package's build and listing; it goes into a temporary name and is renamed, so runs side by
/// side (shards) never load a half-written file.
struct BundleChannelLibrary {
  /// The variable naming the descriptor the channel is handed over as.
  static let channelVariable = "ASYNC_HARNESS_BUNDLE_CHANNEL"
  /// The variable naming the library the bundle runs (`xctest` or `swift-testing`).
  static let libraryVariable = "ASYNC_HARNESS_BUNDLE_LIBRARY"
  /// The variable holding the text of the marker lines the library writes to the bundle's
  /// standard output before each record.
  static let markerVariable = "ASYNC_HARNESS_BUNDLE_MARKER"
  /// The variable naming the library's path, which it removes from `LD_PRELOAD`.
  static let preloadVariable = "ASYNC_HARNESS_BUNDLE_PRELOAD"
  /// The variable naming the schedule the bundle's Swift concurrency runs in, how long it
  /// waits for work from outside before it calls a test stuck (the scheduled strategy's quiet
  /// period, ``ScheduledWaiter/quietPeriod``, in milliseconds) and how many of each test's
  /// steps it says as they are taken (``Event/scheduleStepLimit`` under `--trace`, else 0):
  /// `SEED:POLICY:MILLISECONDS:STEPS`.
  static let scheduleVariable = "ASYNC_HARNESS_BUNDLE_SCHEDULE"
  /// The variable naming the file where the library writes, during a Swift Testing listing,
  /// each test and suite the bundle declares and whether it is `.serialized`
  /// (`AsyncHarnessBundleDiscovery.swift`; ``ExistingTest/withSerialization(_:of:)``).
  static let discoveryVariable = "ASYNC_HARNESS_BUNDLE_DISCOVERY"
  /// The variable naming, comma-separated, the variables set for the bundle's start alone
  /// (``startOnly``), which the library puts back as the run had them: each one's value is in
  /// the variable of its name after ``originalPrefix``, unset when that is absent.
  static let putBackVariable = "ASYNC_HARNESS_BUNDLE_PUT_BACK"
  static let originalPrefix = "ASYNC_HARNESS_BUNDLE_WAS_"
  /// The variables the bundle's runtimes read as it loads, set for that alone: the Swift
  /// runtime's backtracer is off (``ChildProcess``), and AddressSanitizer accepts a library
  /// preloaded before it. The tests, and the processes they start, see them as the run had them.
  static let startOnly = ["ASAN_OPTIONS", "SWIFT_BACKTRACE"]
  /// The library's sources, in the order they are compiled: its own, and what it shares
  /// with the core (`Sources/AsyncHarness/Shared`, the module AsyncHarnessShared),
  /// from the very files the core is built from.
  static let sources = [
    ("AsyncHarnessBundleChannel.swift", PackageResources.AsyncHarnessBundleChannel_swift),
    ("AsyncHarnessBundleXCTestObserver.swift", PackageResources.AsyncHarnessBundleXCTestObserver_swift),
    ("AsyncHarnessBundleExplorer.swift", PackageResources.AsyncHarnessBundleExplorer_swift),
    ("AsyncHarnessBundleDispatch.swift", PackageResources.AsyncHarnessBundleDispatch_swift),
    ("AsyncHarnessBundleOutsideWork.swift", PackageResources.AsyncHarnessBundleOutsideWork_swift),
    ("AsyncHarnessBundleScheduleState.swift", PackageResources.AsyncHarnessBundleScheduleState_swift),
    ("AsyncHarnessBundleDispatchQueues.swift", PackageResources.AsyncHarnessBundleDispatchQueues_swift),
    ("AsyncHarnessBundleExecutors.swift", PackageResources.AsyncHarnessBundleExecutors_swift),
    ("AsyncHarnessBundleDiscovery.swift", PackageResources.AsyncHarnessBundleDiscovery_swift),
    ("AsyncHarnessBundleWorkLeft.swift", PackageResources.AsyncHarnessBundleWorkLeft_swift),
    ("SchedulePicking.swift", PackageResources.SchedulePicking_swift),
    ("ReadyOrder.swift", PackageResources.ReadyOrder_swift),
    ("ChannelRecord.swift", PackageResources.ChannelRecord_swift),
    ("ChannelRecord+Reading.swift", PackageResources.ChannelRecord_Reading_swift),
    ("RoutedExecutors.swift", PackageResources.RoutedExecutors_swift),
    ("JSONEscape.swift", PackageResources.JSONEscape_swift),
    ("LineSplitter.swift", PackageResources.LineSplitter_swift),
  ]
  /// The descriptor the channel is handed over as.
  static let channelDescriptor: Int32 = 3
  /// How long a schedule with nothing to run waits for work from outside before it calls the
  /// running test stuck: the scheduled strategy's.
  static let quietPeriod = ScheduledWaiter().quietPeriod
  /// How long a job may keep the schedule's thread while other work waits to run beside it
  /// before the schedule gives every job back: a quarter of the quiet period (keep in step
  /// with `BundleExplorer.longStep`).
  static let longStep = quietPeriod / 4

  /// Where the library is, once compiled.
  let path: String
  /// The compile running, when the cache lacked the library: the compiler, the process, and
  /// the scratch files' common path (a directory of the sources, then `.so`, `.log`).
  private let compile: (compiler: String, process: Process, scratch: String)?

  /// The library in `cache` (by default the user's), its compile started when it is not there.
  /// - Throws: ``UsageError`` when there is no `swiftc` or nowhere to write.
  static func prepare(in cache: String? = nil, environment: [String: String]) throws -> BundleChannelLibrary {
    #if os(Linux)
    guard let compiler = HarnessTestCommand.executable(named: "swiftc", environment: environment) else {
      throw UsageError("harness test needs swiftc on the PATH (the toolchain that builds the package) to hear its tests")
    }
    let directory = try cache ?? userCache(environment: environment)
    let resolved = URL(fileURLWithPath: compiler).resolvingSymlinksInPath().path
    let modified = ((try? FileManager.default.attributesOfItem(atPath: resolved))?[.modificationDate] as? Date)
      .map { "\($0.timeIntervalSince1970)" } ?? ""
    let key = String(sources.reduce(StableHash.fnv1a64("\(resolved) \(modified)")) { hash, source in
      StableHash.fnv1a64(continuing: hash, source.1)
    }, radix: 16)
    let library = "\(directory)/asyncharness-bundle-channel-\(key).so"
    if FileManager.default.fileExists(atPath: library) { return BundleChannelLibrary(path: library, compile: nil) }
    let scratch = "\(directory)/asyncharness-bundle-channel-\(key)-\(getpid())-\(UUID().uuidString)"
    try? FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: false)
    let files = sources.map { "\(scratch)/\($0.0)" }
    guard zip(files, sources).allSatisfy({ FileManager.default.createFile(atPath: $0, contents: Data($1.1)) }),
      FileManager.default.createFile(atPath: scratch + ".log", contents: nil),
      let log = FileHandle(forWritingAtPath: scratch + ".log")
    else {
      throw UsageError("cannot write the library's sources in \(scratch): the directory \(directory) is not writable")
    }
    defer { try? log.close() }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: compiler)
    // _GNU_SOURCE: C's `fopencookie`, through which Swift Testing's stream reaches the channel.
    // -package-name: the shared sources' declarations are `package`, as in the core.
    process.arguments = ["-emit-library", "-parse-as-library", "-Onone", "-Xcc", "-D_GNU_SOURCE",
                         "-module-name", "AsyncHarnessBundleChannel", "-package-name", "AsyncHarness"]
      + files + ["-o", scratch + ".so"]
    process.standardOutput = log
    process.standardError = log
    try process.run()
    return BundleChannelLibrary(path: library, compile: (compiler, process, scratch))
    #else
    throw UsageError("harness test runs a package's tests on Linux only for now")
    #endif
  }

  /// The library's path, once its compile (if one runs) ended; asked again, the same.
  /// - Throws: ``UsageError`` with what the compiler said when it could not compile it.
  func ready() throws -> String {
    guard let compile else { return path }
    compile.process.waitUntilExit()
    if !FileManager.default.fileExists(atPath: compile.scratch + ".so") && FileManager.default.fileExists(atPath: path) {
      return path
    }
    defer {
      for suffix in ["", ".so", ".log"] { try? FileManager.default.removeItem(atPath: compile.scratch + suffix) }
    }
    compile.process.waitUntilExit()
    guard compile.process.terminationStatus == 0, compile.process.terminationReason == .exit,
      rename(compile.scratch + ".so", path) == 0
    else {
      let said = (try? String(contentsOfFile: compile.scratch + ".log", encoding: .utf8)) ?? ""
      throw UsageError("\(compile.compiler) cannot compile the library that hears the bundle's tests "
        + "(\(TestBundle.processEnding(of: compile.process))):\n\(said)")
    }
    return path
  }

  /// Stops the compile, if one still runs, and removes its files: what a run that ends before
  /// its tests (a failed build, nothing to rerun) leaves behind.
  func abandon() {
    guard let compile else { return }
    if compile.process.isRunning {
      compile.process.terminate()
      compile.process.waitUntilExit()
    }
    for suffix in ["", ".so", ".log"] { try? FileManager.default.removeItem(atPath: compile.scratch + suffix) }
  }

  /// The user's cache of the harness, made when missing: `$XDG_CACHE_HOME/asyncharness`, else
  /// `$HOME/.cache/asyncharness`, else one in the temporary directory.
  private static func userCache(environment: [String: String]) throws -> String {
    let candidates = [environment["XDG_CACHE_HOME"], environment["HOME"].map { "\($0)/.cache" }].compactMap(\.self)
      .filter { !$0.isEmpty }.map { "\($0)/asyncharness" } + [FileManager.default.temporaryDirectory.path + "/asyncharness-\(getuid())"]
    for candidate in candidates {
      if (try? FileManager.default.createDirectory(atPath: candidate, withIntermediateDirectories: true)) != nil,
        access(candidate, W_OK) == 0 {
        return candidate
      }
    }
    throw UsageError("harness test has nowhere to keep the library that hears the bundle's tests: none of "
      + candidates.joined(separator: ", ") + " is writable")
  }

  /// The variables a bundle worker of `library` starts with: the library preloaded (after
  /// any the run was given), and what it reads at load time; with `schedule`, the order the
  /// bundle's Swift concurrency runs in, its steps said when `saysSteps` (`--trace`).
  static func environment(library path: String, testing library: TestLibrary, marker: String, schedule: Schedule? = nil,
                          saysSteps: Bool = false,
                          inherited: [String: String] = ProcessInfo.processInfo.environment) -> [String: String] {
    var variables = preloading(path, inherited: inherited).merging([
      channelVariable: String(channelDescriptor), libraryVariable: library.name, markerVariable: marker,
    ]) { $1 }
    let quiet = quietPeriod.components.seconds * 1000 + quietPeriod.components.attoseconds / 1_000_000_000_000_000
    variables[scheduleVariable] = schedule.map { "\($0):\(quiet):\(saysSteps ? Event.scheduleStepLimit : 0)" }
    return variables
  }

  /// The variables a Swift Testing listing starts with to have the library write what the
  /// bundle declares to `output`.
  static func listingEnvironment(library path: String, output: String,
                                 inherited: [String: String] = ProcessInfo.processInfo.environment) -> [String: String] {
    preloading(path, inherited: inherited).merging([discoveryVariable: output]) { $1 }
  }

  /// The variables that preload the library at `path` (after any the run was given).
  private static func preloading(_ path: String, inherited: [String: String]) -> [String: String] {
    let preload = inherited["LD_PRELOAD"].map { "\($0):\(path)" } ?? path
    // A bundle built with `-sanitize=address` refuses to start when a library is preloaded
    // before its runtime, unless told not to check.
    let sanitizer = inherited["ASAN_OPTIONS"].map { "\($0):verify_asan_link_order=0" } ?? "verify_asan_link_order=0"
    var variables = ["LD_PRELOAD": preload, preloadVariable: path, "ASAN_OPTIONS": sanitizer,
                     putBackVariable: startOnly.joined(separator: ",")]
    for name in startOnly { variables[originalPrefix + name] = inherited[name] }
    // As `swift test` tells the tests when its own output is not a terminal.
    if inherited["NO_COLOR"] == nil, isatty(STDOUT_FILENO) == 0 { variables["NO_COLOR"] = "1" }
    return variables
  }
}
