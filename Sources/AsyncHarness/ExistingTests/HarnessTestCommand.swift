import Foundation

/// `harness test [FLAGS] [--package-path DIR] [--skip-build] [-- BUILD FLAGS]`: builds a
/// package's tests (`swift build --build-tests`; not with `--skip-build`, as `swift test
/// --skip-build`, which runs the bundle an earlier build left), lists the XCTest and Swift Testing tests of its test
/// bundle, and runs them under the harness's runner with the flags, reporters and exit
/// statuses of a suites executable (``HarnessMain``), each XCTest class and each Swift
/// Testing suite a serialized suite run by a ``BundleExecutor``.
package enum HarnessTestCommand {
  /// The synopsis.
  static let usage = "harness test [--package-path <dir>] [--skip-build] [<options>] [-- <build flags>]"

  /// The first flag given of a suites executable's that do not apply to a package's own
  /// tests, which run in their test bundle under their own library.
  private static func inapplicableFlag(in options: HarnessOptions) -> String? {
    let given: [(String, Bool)] = [
      ("--waiter", options.waiter != nil), ("--isolation", options.isolation != nil), ("--no-capture", options.noCapture),
      ("--timeout", options.timeout != nil), ("--explore", options.explore != nil),
      ("--explore-policy", options.explorePolicy != nil), ("--schedule", options.schedule != nil),
      ("--jitter", options.jitter != nil),
    ]
    return given.first { $0.1 }?.0
  }

  /// Runs the `harness` executable's command line (without the executable) and returns its
  /// exit status: that of a suites executable, and 2 when the package cannot be built or
  /// has no test.
  package static func status(arguments: [String], junit: JUnitSupport?, interrupts: StopRequest? = StopRequest(),
                             environment: [String: String] = ProcessInfo.processInfo.environment) -> Int32 {
    let output: @Sendable (String) -> Void = { FileHandleOutput.standardOutput.write($0) }
    let errors: @Sendable (String) -> Void = { FileHandleOutput.standardError.write($0) }
    guard arguments.first == "test" else {
      errors("error: \(arguments.first.map { "unknown command \($0)" } ?? "no command"); the command is test\n"
        + "USAGE: \(usage)\n  See 'harness test --help' for more information.\n")
      return 2
    }
    var flags = Array(arguments.dropFirst())
    var buildFlags: [String] = []
    if let index = flags.firstIndex(of: "--") {
      buildFlags = Array(flags[(index + 1)...])
      flags.removeSubrange(index...)
    }
    if flags.contains("--help") || flags.contains("-h") {
      output("USAGE: \(usage)\n\nBuilds the package's tests (swift build --build-tests and the build flags after --), lists "
        + "its XCTest and Swift Testing tests and runs them, each XCTest class and each Swift Testing suite in order "
        + "in a worker process of the test bundle, so that a crash, an exit or a hang ends only its test.\n\n  --package-path <dir>    The package (default: the current directory).\n"
        + "  --skip-build            Run the tests an earlier build left, without building them (as swift test "
        + "--skip-build).\n\n"
        + "The other options are those of a suites executable:\n\n")
    }
    var packagePath = "."
    let skipBuild = flags.contains("--skip-build")
    flags.removeAll { $0 == "--skip-build" }
    do {
      packagePath = try takePackagePath(from: &flags) ?? "."
    } catch {
      errors("error: \(error)\n")
      return 2
    }
    var options: HarnessOptions
    switch HarnessMain.parse(flags, usage: usage, command: "harness test", output: output, errors: errors) {
    case .options(let parsed): options = parsed
    case .exit(let status): return status
    }

    if let flag = inapplicableFlag(in: options) {
      errors("error: \(flag) does not apply to harness test: the package's tests run in its test bundle, under its "
        + "own testing library\nUSAGE: \(usage)\n")
      return 2
    }
    return HarnessMain.withBazel(environment: environment, interrupts: interrupts) { bazel in
      let bundle: TestBundle
      do {
        bundle = try TestBundle.build(packagePath: packagePath, buildFlags: buildFlags, skipBuild: skipBuild, errors: errors)
      } catch {
        errors("error: \(error)\n")
        return 2
      }
      // The record of the last run, for --rerun-failed, is the build's, beside its bundle.
      let record = "\(bundle.directory)/asyncharness-last-run.json"
      if let status = HarnessMain.applyRerunFailed(to: &flags, &options, record: record, usage: usage,
                                                   command: "harness test", output: output, errors: errors) {
        return status
      }
      let channelLibrary: String
      do {
        channelLibrary = try BundleChannelLibrary.path(in: bundle.directory, environment: environment)
      } catch {
        errors("error: \(error)\n")
        return 2
      }
      return HarnessMain.run(
        bundle.suites, options: options, registry: .builtIn, defaultWaiters: .suiteDefault, junit: junit,
        console: .forStandardOutput(), output: output, errors: errors, interrupts: interrupts, bazel: bazel,
        recorder: RunRecorder(path: record, executable: "harness test", arguments: flags, warn: errors)
      ) { _ in
        {
          BundleExecutor(bundle: bundle.path, directory: bundle.packageDirectory, tests: bundle.tests,
                         channelLibrary: channelLibrary, stop: interrupts)
        }
      }
    }
  }

  /// Removes `--package-path DIR` (or `--package-path=DIR`) from `flags` and returns DIR.
  private static func takePackagePath(from flags: inout [String]) throws -> String? {
    guard let index = flags.firstIndex(where: { $0 == "--package-path" || $0.hasPrefix("--package-path=") }) else {
      return nil
    }
    if flags[index] != "--package-path" {
      defer { flags.remove(at: index) }
      return String(flags[index].dropFirst("--package-path=".count))
    }
    guard index + 1 < flags.count else { throw UsageError("--package-path needs a directory") }
    defer { flags.removeSubrange(index...(index + 1)) }
    return flags[index + 1]
  }

  /// The executable `name` in the first directory of the `PATH` that has one.
  static func executable(named name: String, environment: [String: String]) -> String? {
    (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").lazy
      .map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
  }
}

/// A package's built test bundle and the suites that stand for its tests.
struct TestBundle {
  /// The bundle's path (on Linux, an executable).
  let path: String
  /// The directory it was built into.
  var directory: String { (path as NSString).deletingLastPathComponent }
  /// The package's directory, absolute: the bundle runs there, as under `swift test`.
  let packageDirectory: String
  /// One serialized suite per XCTest class (`Module.Class`, under the waiter `xctest`), in
  /// the order XCTest runs them; then one per Swift Testing suite (its ID, under the waiter
  /// `swift-testing`), its tests in declaration order, the order `--no-parallel` runs them in.
  let suites: [Suite]
  /// The tests the suites' tests stand for, by their path (`Suite/name`).
  let tests: [String: ExistingTest]

  /// Builds the package's tests (unless `skipBuild`), finds the bundle and lists its tests.
  /// - Throws: ``UsageError`` for a directory without Package.swift, a failed build (with
  ///   the tail of its output), no bundle, or no test at all.
  static func build(packagePath: String, buildFlags: [String], skipBuild: Bool = false,
                    errors: @Sendable (String) -> Void) throws -> TestBundle {
    let package = URL(fileURLWithPath: packagePath).standardizedFileURL
    let manifest = package.appendingPathComponent("Package.swift")
    guard FileManager.default.fileExists(atPath: manifest.path) else {
      throw UsageError("no Package.swift in \(packagePath): --package-path names the package whose tests to run")
    }
    let packageFlags = ["--package-path", packagePath] + buildFlags
    if !skipBuild {
      errors("Building the tests of \(packagePath)…\n")
      let build = try Self.run("/usr/bin/env", ["swift", "build", "--build-tests"] + packageFlags)
      guard build.status == 0 else {
        let tail = build.output.split(separator: "\n", omittingEmptySubsequences: false).suffix(30).joined(separator: "\n")
        throw UsageError("swift build --build-tests failed (\(build.ending)):\n\(tail)")
      }
    }
    // Without build flags the products are where SwiftPM puts them by default, which saves a
    // second start of SwiftPM; with any, SwiftPM says where.
    var directory = package.appendingPathComponent(".build/debug").path
    if !buildFlags.isEmpty || bundles(in: directory).isEmpty {
      let binPath = try Self.run("/usr/bin/env", ["swift", "build", "--show-bin-path"] + packageFlags)
      directory = binPath.output.split(separator: "\n").last.map { String($0).trimmingCharacters(in: .whitespaces) } ?? ""
    }
    let bundles = bundles(in: directory)
    guard bundles.count == 1, let bundle = bundles.first.map({ "\(directory)/\($0)" }) else {
      throw UsageError(bundles.isEmpty
        ? "no test bundle (*PackageTests.xctest) in \(directory): does the package have a test target?"
          + (skipBuild ? " Were its tests built (--skip-build builds nothing)?" : "")
        : "several test bundles in \(directory): \(bundles.joined(separator: ", "))")
    }
    // The two listings run at once: Swift Testing's writes into files, XCTest's into a pipe.
    let swiftTestingListing = SwiftTestingListing(bundle: bundle, directory: package)
    let listing = try Self.run(bundle, ["--list-tests"], in: package)
    let swiftTesting = swiftTestingListing.tests(errors: errors)
    guard listing.status == 0 else { throw UsageError("\(bundle) --list-tests failed (\(listing.ending)):\n\(listing.output)") }
    let xctest = try ExistingTest.xctestListing(listing.output)
    guard !xctest.isEmpty || !swiftTesting.isEmpty else { throw UsageError("no tests found in \(bundle)") }
    let (xctestSuites, xctestTests) = suites(of: xctest, waiter: ExistingTest.Library.xctest.name)
    let (swiftTestingSuites, swiftTestingTests) = suites(of: swiftTesting, waiter: ExistingTest.Library.swiftTesting.name)
    return TestBundle(path: bundle, packageDirectory: package.path, suites: xctestSuites + swiftTestingSuites,
                      tests: xctestTests.merging(swiftTestingTests) { first, _ in first })
  }

  /// The test bundles in `directory`, by name.
  private static func bundles(in directory: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix("PackageTests.xctest") }
      .sorted()
  }

  /// One serialized suite per test suite of `tests`, in first-seen order, under the waiter
  /// named `waiter`, and the test each of their tests stands for, by its path (`Suite/name`).
  /// A test is named by its display name when it has one (`@Test("Adds two amounts")`), else
  /// as its library names it; names a suite repeats (overloads, display names) are numbered
  /// as for harness suites (`f(x:)#01`). The tests' bodies never run here: their test
  /// bundle runs them.
  static func suites(of tests: [ExistingTest], waiter: String) -> (suites: [Suite], tests: [String: ExistingTest]) {
    var order: [String] = []
    var bySuite: [String: [ExistingTest]] = [:]
    for test in tests {
      if bySuite[test.suite] == nil { order.append(test.suite) }
      bySuite[test.suite, default: []].append(test)
    }
    var byPath: [String: ExistingTest] = [:]
    let suites = order.map { name in
      let existing = bySuite[name]!
      let suite = Suite(name, traits: [.serialized], waiter: LibraryWaiter(name: waiter)) {
        existing.map { test in
          let module = String(test.suite.prefix { $0 != "." && $0 != "/" })
          return Test(test.displayName ?? test.name, traits: [],
                      body: .blocking { _ in throw UsageError("\(test.id) runs in its test bundle") },
                      sourceLocation: test.sourceLocation ?? SourceLocation(fileID: module, filePath: module, line: 0, column: 0))
        }
      }
      for (test, stands) in zip(suite.tests, existing) { byPath["\(name)/\(test.name)"] = stands }
      return suite
    }
    return (suites, byPath)
  }

  /// Runs `executable` to its end, in `directory` when given, and returns its status and
  /// what it wrote (standard output and standard error together).
  static func run(_ executable: String, _ arguments: [String], in directory: URL? = nil) throws
    -> (status: Int32, ending: String, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    if let directory { process.currentDirectoryURL = directory }
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (status(of: process), ending(of: process), output)
  }

  /// A process's exit status, or 128 + the signal that ended it.
  fileprivate static func status(of process: Process) -> Int32 {
    process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
  }

  /// `exit status N` or `signal N`, as messages say how a process ended.
  fileprivate static func ending(of process: Process) -> String {
    process.terminationReason == .uncaughtSignal ? "signal \(process.terminationStatus)" : "exit status \(process.terminationStatus)"
  }
}

/// The Swift Testing listing of a test bundle, running beside the XCTest one: its event
/// stream and its other output go into files of their own, so nothing waits on a pipe.
private struct SwiftTestingListing {
  let bundle: String
  let stream = FileManager.default.temporaryDirectory.appendingPathComponent("harness-list-\(UUID().uuidString).jsonl")
  let log = FileManager.default.temporaryDirectory.appendingPathComponent("harness-list-\(UUID().uuidString).log")
  let process = Process()
  /// Why it could not start, if it could not.
  private var failure: (any Error)?

  /// Starts the listing in `directory`.
  init(bundle: String, directory: URL) {
    self.bundle = bundle
    process.executableURL = URL(fileURLWithPath: bundle)
    process.currentDirectoryURL = directory
    process.arguments = ["--testing-library", "swift-testing", "--list-tests", "--event-stream-output-path", stream.path,
                         "--event-stream-version", "0"]
    do {
      guard FileManager.default.createFile(atPath: log.path, contents: nil) else {
        throw UsageError("cannot create \(log.path)")
      }
      let output = try FileHandle(forWritingTo: log)
      defer { try? output.close() }
      process.standardOutput = output
      process.standardError = output
      try process.run()
    } catch {
      failure = error
    }
  }

  /// The tests listed, once the listing ended; none when the bundle has none (Swift Testing
  /// then exits with status 69, `EX_UNAVAILABLE`: a package of XCTest tests only), and none
  /// with a warning when they cannot be listed.
  func tests(errors: @Sendable (String) -> Void) -> [ExistingTest] {
    defer {
      try? FileManager.default.removeItem(at: stream)
      try? FileManager.default.removeItem(at: log)
    }
    do {
      if let failure { throw failure }
      process.waitUntilExit()
      if TestBundle.status(of: process) == 69 { return [] }
      guard TestBundle.status(of: process) == 0 else {
        let output = String(decoding: (try? Data(contentsOf: log)) ?? Data(), as: UTF8.self)
        throw UsageError("it ended with \(TestBundle.ending(of: process)): \(output)")
      }
      return try ExistingTest.swiftTestingListing(String(decoding: try Data(contentsOf: stream), as: UTF8.self))
    } catch {
      errors("warning: the Swift Testing tests of \(bundle) cannot be listed: \(error)\n")
      return []
    }
  }
}
