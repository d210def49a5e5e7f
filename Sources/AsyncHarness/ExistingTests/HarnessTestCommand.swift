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
  /// has no test bundle; a bundle of no test is an empty run, as under `swift test`.
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
    do {
      try SwiftTestPatterns.validate(command.run.filter, flag: "--filter")
      try SwiftTestPatterns.validate(command.run.skip, flag: "--skip")
    } catch {
      errors("error: \(error)\n")
      return 2
    }
    // As under `swift test`, the directory must exist; it is named whole, as the bundle runs in the package's.
    var isDirectory: ObjCBool = false
    if let path = command.attachmentsPath,
       !FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) || !isDirectory.boolValue {
      errors("error: --attachments-path \"\(path)\" is not a directory: Swift Testing saves attachments in an existing one\n")
      return 2
    }
    let attachmentsPath = command.attachmentsPath.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
    guard var options = try? HarnessOptions.parse([]) else { return 2 }
    options.run = command.run
    // As under `swift test`, filters that match no test make an empty run, green, with a warning.
    if !command.run.filter.isEmpty || !command.run.skip.isEmpty { options.run.allowEmpty = true }
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
                                      skipBuild: command.skipBuild, listingLimit: try TimeLimit(command.run.timeLimit).duration,
                                      discovery: command.run.workers > 1 ? { try channelLibrary.ready() } : nil,
                                      errors: errors)
      } catch {
        errors("error: \(error)\n")
        return 2
      }
      // A bundle of no test passes under `swift test`: its run is empty, and green.
      if bundle.listsNone {
        if bundle.catalog.listingFailures.isEmpty { errors("warning: the test bundle \(bundle.path) has no tests\n") }
        options.run.allowEmpty = true
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
        let allTests = configuration.choosesTests ? [:] : bundle.counts
        return {
          BundleExecutor(bundle: bundle.path, directory: bundle.runDirectory, channelLibrary: library,
                         allTests: allTests, attachmentsPath: attachmentsPath, stop: interrupts)
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
      let message = HarnessCommand.message(for: error)
      errors("error: \(unknownFlag(in: message).flatMap(explanation) ?? message)\nUSAGE: \(usage)\n"
        + "  See 'harness test --help' for more information.\n")
      return .exit(2)
    }
  }

  /// `swift test`'s flags that `harness test` spells otherwise, and what to write instead.
  static let swiftTestFlags = [
    "--parallel": "--workers N runs the tests in N worker processes",
    "--num-workers": "--workers N runs the tests in N worker processes",
    "--xunit-output": "--junit PATH writes a JUnit XML report",
  ]

  /// The flags of `swift build` a user may give `harness test` as to `swift test`: they go after `--`.
  static let swiftBuildFlags: Set = [
    "-c", "--configuration", "-Xswiftc", "-Xcc", "-Xcxx", "-Xlinker", "--scratch-path", "--build-path", "--sanitize",
    "--triple", "--swift-sdk", "-j", "--jobs", "--enable-code-coverage", "--disable-sandbox", "--static-swift-stdlib",
    "--traits", "--enable-all-traits", "--disable-default-traits", "--enable-testable-imports",
  ]

  /// The flag an "Unknown option '--flag'" message names.
  private static func unknownFlag(in message: String) -> String? {
    guard let quoted = message.firstRange(of: "Unknown option '") else { return nil }
    return String(message[quoted.upperBound...].prefix { $0 != "'" && $0 != "=" })
  }

  /// Why `flag` is not `harness test`'s, and what to write instead, when that is known: a flag
  /// of suites executables alone (``HarnessOptions``'s own), of `swift test`, or of `swift build`.
  private static func explanation(of flag: String) -> String? {
    if let instead = swiftTestFlags[flag] { return "\(flag) is a flag of swift test; in harness test, \(instead)" }
    if swiftBuildFlags.contains(flag) {
      return "\(flag) is a flag of swift build: build flags go after --, as in harness test -- \(flag) …"
    }
    guard HarnessOptions.synopsis.contains("[\(flag) ") || HarnessOptions.synopsis.contains("[\(flag)]") else { return nil }
    return "\(flag) does not apply to harness test: the package's tests run in its test bundle, under its own testing library"
  }

  /// The executable `name` in the first directory of the `PATH` that has one.
  static func executable(named name: String, environment: [String: String]) -> String? {
    (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").lazy
      .map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
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

  @Option(help: ArgumentHelp("The package's directory (default: the nearest one holding Package.swift, from the working "
    + "directory up, as swift test finds it).", valueName: "dir"))
  var packagePath: String?

  @Flag(help: "Run the tests an earlier build left, without building them (as swift test --skip-build).")
  var skipBuild = false

  @Option(help: ArgumentHelp("The directory where Swift Testing saves what the tests attach (Attachment.record), as "
    + "swift test --attachments-path; it must exist. Each attachment is reported with the file it was saved as.",
    valueName: "dir"))
  var attachmentsPath: String?

  @OptionGroup var run: RunFlags

  @Argument(parsing: .postTerminator, help: ArgumentHelp("Flags for swift build, after --.", valueName: "build flags"))
  var buildFlags: [String] = []

  /// The run's flags of a `harness test` command line (`test` and its flags): without
  /// `test`, the package's (`--package-path`, `--skip-build`), where attachments go
  /// (`--attachments-path`) and the build's (after `--`), as the last run's record keeps them
  /// for `--rerun-failed`.
  static func runFlags(of arguments: [String]) -> [String] {
    var flags: [String] = []
    var rest = arguments.drop { $0 == "test" }.prefix { $0 != "--" }[...]
    while let flag = rest.popFirst() {
      if ["--package-path", "--attachments-path"].contains(flag) {
        _ = rest.popFirst()
      } else if flag != "--skip-build" && !flag.hasPrefix("--package-path=") && !flag.hasPrefix("--attachments-path=") {
        flags.append(flag)
      }
    }
    return flags
  }
}
