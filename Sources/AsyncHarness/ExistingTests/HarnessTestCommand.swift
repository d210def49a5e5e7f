import ArgumentParser
import Foundation

/// `harness test [FLAGS] [--package-path DIR] [--skip-build] [-- BUILD FLAGS]` (``HarnessCommand``,
/// ``HarnessTestSubcommand``): builds a
/// package's tests (`swift build --build-tests`; not with `--skip-build`, as `swift test
/// --skip-build`, which runs the bundle an earlier build left), lists the XCTest and Swift Testing tests of its test
/// bundle, and runs them under the harness's runner with the flags, reporters and exit
/// statuses of a suites executable (``HarnessMain``): a ``Catalog`` of the listed tests, each
/// XCTest class and each Swift Testing suite a group whose tests a ``BundleExecutor`` runs
/// under their own library.
package enum HarnessTestCommand {
  /// The synopsis.
  static let usage = "harness test [--package-path <dir>] [--skip-build] [<options>] [-- <build flags>]"

  /// Runs the `harness` executable's command line (without the executable) and returns its
  /// exit status: that of a suites executable, and 2 when the package cannot be built or
  /// has no test.
  package static func status(arguments: [String], junit: JUnitSupport?, interrupts: StopRequest? = StopRequest(),
                             environment: [String: String] = ProcessInfo.processInfo.environment) -> Int32 {
    let output: @Sendable (String) -> Void = { FileHandleOutput.standardOutput.write($0) }
    let errors: @Sendable (String) -> Void = { FileHandleOutput.standardError.write($0) }
    let command: HarnessTestSubcommand
    switch parse(arguments, output: output, errors: errors) {
    case .command(let parsed): command = parsed
    case .exit(let status): return status
    }
    if let flag = command.run.scheduleFlag, !ConcurrencyCapture.isAvailable {
      errors("error: \(flag) needs Swift concurrency executors of the harness's own (Swift 6.3 or later), which this "
        + "toolchain lacks: the tests' orders cannot be explored here\n")
      return 2
    }
    guard var options = try? HarnessOptions.parse([]) else { return 2 }
    options.run = command.run
    return HarnessMain.withBazel(environment: environment, interrupts: interrupts) { bazel in
      // Compiled (once a machine and toolchain) while the package builds.
      let channelLibrary: BundleChannelLibrary
      do {
        channelLibrary = try BundleChannelLibrary.prepare(environment: environment)
      } catch {
        errors("error: \(error)\n")
        return 2
      }
      defer { channelLibrary.abandon() }
      let bundle: TestBundle
      do {
        // With several workers, the library preloaded into the Swift Testing listing says which
        // tests are serialized (LaneBalance cuts only suites that are not).
        bundle = try TestBundle.build(packagePath: command.packagePath, buildFlags: command.buildFlags,
                                      skipBuild: command.skipBuild,
                                      discovery: command.run.workers > 1 ? { try channelLibrary.ready() } : nil,
                                      errors: errors)
      } catch {
        errors("error: \(error)\n")
        return 2
      }
      // The record of the last run, for --rerun-failed, is the build's, beside its bundle; it
      // keeps the run's flags, not the package's or the build's.
      let record = "\(bundle.directory)/asyncharness-last-run.json"
      var flags = HarnessTestSubcommand.runFlags(of: arguments)
      if let status = HarnessMain.applyRerunFailed(to: &flags, &options, record: record, usage: usage,
                                                   command: "harness test", output: output, errors: errors) {
        return status
      }
      let library: String
      do {
        library = try channelLibrary.ready()
      } catch {
        errors("error: \(error)\n")
        return 2
      }
      return HarnessMain.run(
        bundle.catalog, options: options, registry: .builtIn, defaultWaiters: .suiteDefault, junit: junit,
        console: .forStandardOutput(), output: output, errors: errors, interrupts: interrupts, bazel: bazel,
        recorder: RunRecorder(path: record, executable: "harness test", arguments: flags, warn: errors)
      ) { _, configuration in
        // A bundle whose own entry point lists no test runs whole, in this process.
        guard !bundle.runsWhole else { return { InProcessExecutor(capturesOutput: true) } }
        let allXCTests = configuration.choosesTests ? nil : bundle.xctestCount
        return {
          BundleExecutor(bundle: bundle.path, directory: bundle.packageDirectory, channelLibrary: library,
                         allXCTests: allXCTests, stop: interrupts)
        }
      }
    }
  }

  /// What parsing the command line gave: `harness test`'s flags, or the status to exit with now.
  enum Parsed {
    case command(HarnessTestSubcommand)
    case exit(Int32)
  }

  /// Parses the command line as `harness` and its `test` command, printing the help or a
  /// usage error. A flag of suites executables alone (`--waiter`, `--jitter` …) is named as
  /// one that does not apply.
  static func parse(_ arguments: [String], output: @Sendable (String) -> Void,
                    errors: @Sendable (String) -> Void) -> Parsed {
    do {
      switch try HarnessCommand.parseAsRoot(HarnessOptions.expandingOptionalSeeds(arguments)) {
      case let command as HarnessTestSubcommand:
        return .command(command)
      case is HarnessCommand:
        errors("error: no command; the command is test\nUSAGE: \(usage)\n  See 'harness test --help' for more information.\n")
        return .exit(2)
      default:
        // ArgumentParser's help command: the help of the command it was asked for.
        let asked: any ParsableCommand.Type = arguments.first == "test" ? HarnessTestSubcommand.self : HarnessCommand.self
        output(HarnessOptions.showingOptionalSeed(HarnessCommand.helpMessage(for: asked)) + "\n")
        return .exit(0)
      }
    } catch {
      if HarnessCommand.exitCode(for: error) == .success {
        output(HarnessOptions.showingOptionalSeed(HarnessCommand.fullMessage(for: error)) + "\n")
        return .exit(0)
      }
      var message = HarnessCommand.message(for: error)
      if let flag = suitesOnlyFlag(in: message) {
        message = "\(flag) does not apply to harness test: the package's tests run in its test bundle, under its own "
          + "testing library"
      }
      errors("error: \(message)\nUSAGE: \(usage)\n  See 'harness test --help' for more information.\n")
      return .exit(2)
    }
  }

  /// The flag an "Unknown option '--flag'" message names, when a suites executable has it
  /// (``HarnessOptions``'s own, which `harness test` does not share).
  private static func suitesOnlyFlag(in message: String) -> String? {
    guard let quoted = message.firstRange(of: "Unknown option '") else { return nil }
    let flag = message[quoted.upperBound...].prefix { $0 != "'" && $0 != "=" }
    return HarnessOptions.synopsis.contains("[\(flag) ") || HarnessOptions.synopsis.contains("[\(flag)]") ? String(flag) : nil
  }

  /// The executable `name` in the first directory of the `PATH` that has one.
  static func executable(named name: String, environment: [String: String]) -> String? {
    (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").lazy
      .map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
  }
}

/// A package's built test bundle and the catalog of its tests.
struct TestBundle {
  /// The bundle's path (on Linux, an executable).
  let path: String
  /// The directory it was built into.
  var directory: String { (path as NSString).deletingLastPathComponent }
  /// The package's directory, absolute: the bundle runs there, as under `swift test`.
  let packageDirectory: String
  /// The tests (``Catalog/init(existing:)``): a group per XCTest class (`Module.Class`), in
  /// the order XCTest runs them; then one per Swift Testing suite (its ID), its tests in
  /// declaration order.
  let catalog: Catalog
  /// How many XCTest tests it lists.
  let xctestCount: Int
  /// Whether it runs whole, as one test of this process: its main is the package's own, and
  /// does not call `XCTMain` (``OwnEntryPoint``).
  var runsWhole = false

  /// Builds the package's tests (unless `skipBuild`), finds the bundle where SwiftPM's layout puts
  /// it (``binDirectory(of:buildFlags:packageFlags:)``) and lists its tests; with `discovery`
  /// (the preloaded library's path, once it is ready), which Swift Testing tests are serialized
  /// (``ExistingTest/isSerialized``).
  /// - Throws: ``UsageError`` for a directory without Package.swift, a failed build (with
  ///   the tail of its output), no bundle, or no test at all; what `discovery` throws.
  static func build(packagePath: String, buildFlags: [String], skipBuild: Bool = false,
                    discovery: (() throws -> String)? = nil, errors: @Sendable (String) -> Void) throws -> TestBundle {
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
    let directory = try binDirectory(of: package, buildFlags: buildFlags, packageFlags: packageFlags)
    let bundles = bundles(in: directory)
    guard bundles.count == 1, let bundle = bundles.first.map({ "\(directory)/\($0)" }) else {
      throw UsageError(bundles.isEmpty
        ? "no test bundle (*PackageTests.xctest) in \(directory): does the package have a test target?"
          + (skipBuild ? " Were its tests built (--skip-build builds nothing)?" : "")
        : "several test bundles in \(directory): \(bundles.joined(separator: ", "))")
    }
    // A bundle built from an entry point of the package's own runs as `swift test` runs it:
    // whole, when that entry point does not call XCTMain; else its XCTest tests alone.
    let ownEntryPoint = SwiftPMLayout.ownTestEntryPoint(ofBundle: bundle).map { OwnEntryPoint(bundle: bundle, source: $0) }
    if let ownEntryPoint, !ownEntryPoint.callsXCTMain {
      return TestBundle(path: bundle, packageDirectory: package.path, runningWhole: ownEntryPoint)
    }
    // A bundle listed before, by this harness, is not listed again.
    let cache = ListingCache(bundle: bundle, withSerialization: discovery != nil)
    if let tests = cache?.read() { return TestBundle(path: bundle, packageDirectory: package.path, listed: tests) }
    // The two listings run at once: Swift Testing's writes into files, XCTest's into a pipe.
    // A listing that fails is a failure of the run; the tests the other one listed still run.
    // Swift Testing never runs in a bundle built from the package's own entry point.
    let swiftTestingListing = ownEntryPoint == nil
      ? SwiftTestingListing(bundle: bundle, directory: package, library: try discovery?()) : nil
    let listing = try Self.run(bundle, ["--list-tests"], in: package)
    let swiftTesting = swiftTestingListing?.tests(errors: errors) ?? (tests: [], failure: nil)
    var failures = swiftTesting.failure.map { [$0] } ?? []
    var xctest: [ExistingTest] = []
    if listing.status == 0 {
      xctest = try ExistingTest.xctestListing(listing.output)
    } else {
      failures.insert(listingFailure(of: bundle, library: .xctest, command: "--list-tests", ending: listing.ending,
                                     output: listing.output), at: 0)
    }
    guard !xctest.isEmpty || !swiftTesting.tests.isEmpty else {
      throw UsageError(failures.isEmpty ? "no tests found in \(bundle)" : failures.map(\.issue.message).joined(separator: "\n"))
    }
    if failures.isEmpty { cache?.write(xctest + swiftTesting.tests) }
    return TestBundle(path: bundle, packageDirectory: package.path, listed: xctest + swiftTesting.tests, failures: failures)
  }

  /// The bundle at `path`, of the package in `packageDirectory`, that listed `tests` (its
  /// XCTest tests first), and the listings that failed.
  init(path: String, packageDirectory: String, listed tests: [ExistingTest], failures: [OutsideFailure] = []) {
    self.path = path
    self.packageDirectory = packageDirectory
    catalog = Catalog(existing: tests, listingFailures: failures)
    xctestCount = tests.count { $0.library == .xctest }
  }

  /// The bundle at `path`, of the package in `packageDirectory`, whose own entry point lists
  /// no test: one test runs it whole (``OwnEntryPoint/suite(directory:)``).
  init(path: String, packageDirectory: String, runningWhole entryPoint: OwnEntryPoint) {
    self.path = path
    self.packageDirectory = packageDirectory
    catalog = Catalog(suites: [entryPoint.suite(directory: packageDirectory)])
    xctestCount = 0
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
      let binPath = try Self.run("/usr/bin/env", ["swift", "build", "--show-bin-path"] + packageFlags)
      return binPath.output.split(separator: "\n").last.map { String($0).trimmingCharacters(in: .whitespaces) } ?? ""
    }
  }

  /// The most lines of a failed listing's output its failure quotes: the first, where a crash
  /// says what it was.
  static let listingLinesQuoted = 20

  /// A listing of `library`'s tests (`bundle COMMAND`) that ended with `ending` having printed
  /// `output`: a failure outside every test, under the bundle's name.
  static func listingFailure(of bundle: String, library: TestLibrary, command: String, ending: ProcessEnding,
                             output: String) -> OutsideFailure {
    let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
    let quoted = lines.prefix(listingLinesQuoted).joined(separator: "\n")
      + (lines.count > listingLinesQuoted ? "\n… (\(lines.count - listingLinesQuoted) more lines)" : "")
    let name = (bundle as NSString).lastPathComponent
    return OutsideFailure(
      place: .listing, suite: SuiteRun(suite: name.hasSuffix(".xctest") ? String(name.dropLast(".xctest".count)) : name,
                                       host: library.name),
      issue: Issue(kind: .crashed, message: "The \(library == .xctest ? "XCTest" : "Swift Testing") tests of the test bundle "
        + "could not be listed: \(name) \(command) ended with \(ending)"
        + (quoted.isEmpty ? "; it printed nothing" : ":\n\(quoted)")),
      afterTests: false)
  }

  /// The test bundles in `directory`, by name.
  private static func bundles(in directory: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix("PackageTests.xctest") }
      .sorted()
  }

  /// Runs `executable` to its end, in `directory` when given, and returns its status and
  /// what it wrote (standard output and standard error together).
  static func run(_ executable: String, _ arguments: [String], in directory: URL? = nil) throws
    -> (status: Int32, ending: ProcessEnding, output: String) {
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
    return (status(of: process), processEnding(of: process), output)
  }

  /// How a process that ended did.
  static func processEnding(of process: Process) -> ProcessEnding {
    process.terminationReason == .uncaughtSignal ? .signaled(process.terminationStatus) : .exited(process.terminationStatus)
  }

  /// A process's exit status, or 128 + the signal that ended it.
  static func status(of process: Process) -> Int32 {
    process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
  }
}

/// The `harness` executable's command: its one subcommand, `test`, runs a package's own tests.
struct HarnessCommand: ParsableCommand {
  static var configuration: CommandConfiguration {
    CommandConfiguration(commandName: "harness", abstract: "Runs a package's own XCTest and Swift Testing tests under AsyncHarness.",
                         subcommands: [HarnessTestSubcommand.self])
  }
}

/// `harness test`'s flags: the package, its build, and the flags of a run it shares with
/// suites executables (``RunFlags``); those of harness suites alone are not its own, so its
/// help does not show them.
struct HarnessTestSubcommand: ParsableCommand {
  static var configuration: CommandConfiguration {
    CommandConfiguration(
      commandName: "test",
      abstract: "Builds the package's tests (swift build --build-tests and the build flags after --), lists its "
        + "XCTest and Swift Testing tests and runs them in worker processes of its test bundle, so that a crash, an "
        + "exit or a hang ends only its test.",
      usage: HarnessTestCommand.usage,
      discussion: "Exit status: 0 when every test passed, 1 when a test failed, 2 for a usage error, a package that "
        + "does not build, or one with no test.")
  }

  @Option(help: ArgumentHelp("The package's directory.", valueName: "dir"))
  var packagePath = "."

  @Flag(help: "Run the tests an earlier build left, without building them (as swift test --skip-build).")
  var skipBuild = false

  @OptionGroup var run: RunFlags

  @Argument(parsing: .postTerminator, help: ArgumentHelp("Flags for swift build, after --.", valueName: "build flags"))
  var buildFlags: [String] = []

  /// The run's flags of a `harness test` command line (`test` and its flags): without
  /// `test`, the package's (`--package-path`, `--skip-build`) and the build's (after `--`),
  /// as the last run's record keeps them for `--rerun-failed`.
  static func runFlags(of arguments: [String]) -> [String] {
    var flags: [String] = []
    var rest = arguments.drop { $0 == "test" }.prefix { $0 != "--" }[...]
    while let flag = rest.popFirst() {
      if flag == "--package-path" { _ = rest.popFirst() } else if flag != "--skip-build" && !flag.hasPrefix("--package-path=") {
        flags.append(flag)
      }
    }
    return flags
  }
}
