import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A package's built test bundle and the catalog of its tests.
struct TestBundle {
  /// The bundle's path (on Linux, an executable).
  let path: String
  /// The directory it was built into.
  var directory: String { (path as NSString).deletingLastPathComponent }
  /// Where the bundle runs, as under `swift test`: the package's directory when
  /// `--package-path` names it, else the directory `harness test` runs in.
  let runDirectory: String
  /// The tests (``Catalog/init(existing:)``): a group per XCTest class (`Module.Class`), in
  /// the order XCTest runs them; then one per Swift Testing suite (its ID), its tests in
  /// declaration order.
  let catalog: Catalog
  /// How many tests of each library it lists.
  let counts: [TestLibrary: Int]
  /// Whether it lists no test at all.
  let listsNone: Bool
  /// Whether it runs whole, as one test of this process: its main is the package's own, and
  /// does not call `XCTMain` (``OwnEntryPoint``).
  var runsWhole = false

  /// Builds the tests of the package in `packagePath` (else the nearest directory holding
  /// Package.swift, from the working directory up, as SwiftPM finds a package) unless
  /// `skipBuild`, finds the bundle where SwiftPM's layout puts
  /// it (``binDirectory(of:buildFlags:packageFlags:)``) and lists its tests; with `discovery`
  /// (the preloaded library's path, once it is ready), which Swift Testing tests are serialized
  /// (``ExistingTest/isSerialized``).
  /// - Throws: ``UsageError`` for a directory without Package.swift, a failed build (with
  ///   the tail of its output), or no bundle; what `discovery` throws.
  static func build(packagePath given: String?, buildFlags: [String], skipBuild: Bool = false, listingLimit: Duration? = nil,
                    discovery: (() throws -> String)? = nil, errors: @Sendable (String) -> Void) throws -> TestBundle {
    let workingDirectory = FileManager.default.currentDirectoryPath
    let packagePath = try given ?? enclosingPackage(of: workingDirectory)
    let package = URL(fileURLWithPath: packagePath).standardizedFileURL
    let manifest = package.appendingPathComponent("Package.swift")
    guard FileManager.default.fileExists(atPath: manifest.path) else {
      throw UsageError("no Package.swift in \(packagePath): --package-path names the package whose tests to run")
    }
    let packageFlags = ["--package-path", packagePath] + buildFlags
    if !skipBuild {
      errors("Building the tests of \(packagePath)…\n")
      // `swift test` compiles a release build for testing too, so that `@testable import` builds.
      let testing = SwiftPMLayout.configuration(in: buildFlags) == "release" ? ["-Xswiftc", "-enable-testing"] : []
      let build = try runSwift(["build", "--build-tests"] + packageFlags + testing)
      guard build.status == 0 else {
        let tail = build.output.split(separator: "\n", omittingEmptySubsequences: false).suffix(30).joined(separator: "\n")
        throw UsageError("swift build --build-tests failed (\(build.ending)):\n\(tail)")
      }
    }
    let directory = try binDirectory(of: package, buildFlags: buildFlags, packageFlags: packageFlags)
    let bundles = bundles(in: directory)
    guard bundles.count == 1, let bundle = bundles.first.map({ "\(directory)/\($0)" }) else {
      throw UsageError(bundles.isEmpty
        ? "no test bundle (*PackageTests.xctest) in \(directory): does the package have a test target?"
          + (skipBuild ? " Were its tests built (--skip-build builds nothing)?" : "")
        : "several test bundles in \(directory): \(bundles.joined(separator: ", "))")
    }
    let runDirectory = given == nil ? URL(fileURLWithPath: workingDirectory) : package
    // A bundle built from an entry point of the package's own runs as `swift test` runs it:
    // whole, when that entry point does not call XCTMain; else its XCTest tests alone.
    let ownEntryPoint = SwiftPMLayout.ownTestEntryPoint(ofBundle: bundle).map { OwnEntryPoint(bundle: bundle, source: $0) }
    if let ownEntryPoint, !ownEntryPoint.callsXCTMain {
      return TestBundle(path: bundle, runDirectory: runDirectory.path, runningWhole: ownEntryPoint)
    }
    // A bundle listed before, by this harness, is not listed again.
    let cache = ListingCache(bundle: bundle, withSerialization: discovery != nil)
    if let tests = cache?.read() { return TestBundle(path: bundle, runDirectory: runDirectory.path, listed: tests) }
    // The two listings run at once: Swift Testing's writes into files, XCTest's into a pipe.
    // A listing that fails is a failure of the run; the tests the other one listed still run.
    // Swift Testing never runs in a bundle built from the package's own entry point.
    let swiftTestingListing = ownEntryPoint == nil
      ? SwiftTestingListing(bundle: bundle, directory: runDirectory, library: try discovery?(), limit: listingLimit) : nil
    let listing = try Self.run(bundle, ["--list-tests"], in: runDirectory, limit: listingLimit)
    let swiftTesting = swiftTestingListing?.tests(errors: errors) ?? (tests: [], failure: nil)
    var failures = swiftTesting.failure.map { [$0] } ?? []
    var xctest: [ExistingTest] = []
    if listing.status == 0 {
      xctest = try ExistingTest.xctestListing(listing.output)
    } else {
      failures.insert(listingFailure(of: bundle, library: .xctest, command: "--list-tests",
                                     ending: listing.stopped ? nil : listing.ending, limit: listingLimit,
                                     output: listing.output), at: 0)
    }
    if failures.isEmpty { cache?.write(xctest + swiftTesting.tests) }
    return TestBundle(path: bundle, runDirectory: runDirectory.path, listed: xctest + swiftTesting.tests, failures: failures)
  }

  /// The bundle at `path`, run in `runDirectory`, that listed `tests` (its XCTest tests
  /// first), and the listings that failed.
  init(path: String, runDirectory: String, listed tests: [ExistingTest], failures: [OutsideFailure] = []) {
    self.path = path
    self.runDirectory = runDirectory
    catalog = Catalog(existing: tests, listingFailures: failures)
    counts = Dictionary(grouping: tests, by: \.library).mapValues(\.count)
    listsNone = tests.isEmpty
  }

  /// The nearest directory holding Package.swift from `directory` up, as SwiftPM finds the
  /// package it builds when no `--package-path` names one.
  static func enclosingPackage(of directory: String) throws -> String {
    var candidate = URL(fileURLWithPath: directory).standardizedFileURL
    while true {
      if FileManager.default.fileExists(atPath: candidate.appendingPathComponent("Package.swift").path) { return candidate.path }
      let parent = candidate.deletingLastPathComponent()
      guard parent.path != candidate.path else { break }
      candidate = parent
    }
    throw UsageError("no Package.swift in \(directory) or any directory above it: run harness test in a package, or "
      + "name one with --package-path")
  }

  /// The bundle at `path`, run in `runDirectory`, whose own entry point lists no test: one
  /// test runs it whole (``OwnEntryPoint/suite(directory:)``).
  init(path: String, runDirectory: String, runningWhole entryPoint: OwnEntryPoint) {
    self.path = path
    self.runDirectory = runDirectory
    catalog = Catalog(suites: [entryPoint.suite(directory: runDirectory)])
    counts = [:]
    listsNone = false
    runsWhole = true
  }

  /// The directory of the package's built products: by SwiftPM's layout (``SwiftPMLayout``),
  /// so that a run starts SwiftPM once to build and not at all with `--skip-build`; as
  /// `swift build --show-bin-path` says when the build flags (or SwiftPM's environment) could
  /// move them where the layout cannot tell.
  private static func binDirectory(of package: URL, buildFlags: [String], packageFlags: [String]) throws -> String {
    switch SwiftPMLayout.binPath(package: package.path, buildFlags: buildFlags,
                                 workingDirectory: FileManager.default.currentDirectoryPath,
                                 environment: ProcessInfo.processInfo.environment) {
    case .directory(let directory):
      return SwiftPMLayout.followingLink(directory)
    case .askSwiftPM:
      let binPath = try runSwift(["build", "--show-bin-path"] + packageFlags)
      return binPath.output.split(separator: "\n").last.map { String($0).trimmingCharacters(in: .whitespaces) } ?? ""
    }
  }

  /// The most lines of a failed listing's output its failure quotes: the first, where a crash
  /// says what it was.
  static let listingLinesQuoted = 20

  /// A listing of `library`'s tests (`bundle COMMAND`) that ended with `ending` having printed
  /// `output`: a failure outside every test, under the bundle's name.
  static func listingFailure(of bundle: String, library: TestLibrary, command: String, ending: ProcessEnding?,
                             limit: Duration? = nil, output: String) -> OutsideFailure {
    let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
    let quoted = lines.prefix(listingLinesQuoted).joined(separator: "\n")
      + (lines.count > listingLinesQuoted ? "\n… (\(lines.count - listingLinesQuoted) more lines)" : "")
    let name = (bundle as NSString).lastPathComponent
    return OutsideFailure(
      place: .listing, suite: SuiteRun(suite: name.hasSuffix(".xctest") ? String(name.dropLast(".xctest".count)) : name,
                                       host: library.name),
      issue: Issue(kind: .crashed, message: "The \(library == .xctest ? "XCTest" : "Swift Testing") tests of the test bundle "
        + "could not be listed: \(name) \(command) "
        + (ending.map { "ended with \($0)" } ?? "did not end within \(limit?.secondsDescription ?? "the") seconds "
          + "(--time-limit), so it was stopped with SIGKILL")
        + (quoted.isEmpty ? "; it printed nothing" : ":\n\(quoted)")),
      afterTests: false)
  }

  /// The test bundles in `directory`, by name.
  private static func bundles(in directory: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix("PackageTests.xctest") }
      .sorted()
  }

  /// Runs `executable` to its end, in `directory` when given, and returns its status and
  /// what it wrote (standard output and standard error together). It is reaped as it ends
  /// (`waitpid`), where Foundation's `Process.waitUntilExit` looks every 50 ms on Linux: a
  /// quarter of a run of 50 small tests, once for the build and once for each listing.
  static func run(_ executable: String, _ arguments: [String], in directory: URL? = nil, limit: Duration? = nil) throws
    -> (status: Int32, ending: ProcessEnding, output: String, stopped: Bool) {
    let child = try ChildProcess(executable: executable, arguments: arguments, environment: [:], directory: directory?.path,
                                 keepsBacktracer: true)
    let start = ContinuousClock.now
    let stopping = stop(child, after: limit)
    let output = String(decoding: child.readOutputToEnd(), as: UTF8.self)
    let ending = child.waitForExit()
    stopping?.cancel()
    return (status(of: ending), ending, output, wasStopped(ending, at: limit, since: start))
  }

  /// Runs SwiftPM's `swift` with `arguments` to its end (``run(_:_:in:limit:)``): the first
  /// `swift` on the `PATH`, else as `/usr/bin/env swift` finds it (and says when it cannot).
  static func runSwift(_ arguments: [String]) throws -> (status: Int32, ending: ProcessEnding, output: String, stopped: Bool) {
    if let swift = HarnessTestCommand.executable(named: "swift", environment: ProcessInfo.processInfo.environment) {
      return try run(swift, arguments)
    }
    return try run("/usr/bin/env", ["swift"] + arguments)
  }

  /// Stops `child`, with SIGKILL to its group, once it has run `limit` (a listing that
  /// hangs); what is returned, cancelled once it ended, stops it no more.
  static func stop(_ child: ChildProcess, after limit: Duration?) -> DispatchWorkItem? {
    guard let limit else { return nil }
    let group = child.pid
    let stopping = DispatchWorkItem { _ = kill(-group, SIGKILL) }
    DispatchQueue.global().asyncAfter(deadline: .now() + limit.timeInterval, execute: stopping)
    return stopping
  }

  /// Whether a process that ended with `ending` was stopped at `limit` (``stop(_:after:)``),
  /// having run since `start`.
  static func wasStopped(_ ending: ProcessEnding, at limit: Duration?, since start: ContinuousClock.Instant) -> Bool {
    guard let limit else { return false }
    return ending == .signaled(SIGKILL) && start.duration(to: .now) >= limit
  }

  /// How a process that ended did.
  static func processEnding(of process: Process) -> ProcessEnding {
    process.terminationReason == .uncaughtSignal ? .signaled(process.terminationStatus) : .exited(process.terminationStatus)
  }

  /// A process's exit status, or 128 + the signal that ended it.
  static func status(of ending: ProcessEnding) -> Int32 {
    switch ending {
    case .exited(let status): status
    case .signaled(let signal): 128 + signal
    }
  }
}
