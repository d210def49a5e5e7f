import ArgumentParser
import Foundation

/// The command-line entry point of a suites executable.
///
/// ```swift
/// // main.swift
/// import AsyncHarness
/// HarnessMain.run([loaderSuite, calculatorSuite])
/// ```
///
/// Exit status: 0 when every test passed (known issues, skips and flaky tests included), 1
/// when a test failed every attempt (or was flaky, with `--fail-on-flaky`), 2 for a usage error (a bad flag, an unknown waiter, a filter that selects no
/// test without `--allow-empty`, a report that cannot be written).
///
/// Tests run in a worker process by default (`--isolation worker`): the executable starts
/// itself again as a worker, so a test that crashes or hangs ends as an error and the run
/// goes on. `--isolation test` starts a fresh worker for every test; `--isolation none`
/// runs them in this process (for a debugger). `--workers N` runs N workers at once.
public enum HarnessMain {
  /// Where the tests of a suites executable run.
  public enum Isolation: String, Sendable, CaseIterable {
    /// In a worker process: this executable started again (`--harness-worker`), running
    /// test after test until one crashes.
    case worker
    /// In a fresh worker process for every test: slower, but no test sees what another
    /// left in its process.
    case test
    /// In this process (on the main thread).
    case none
  }

  /// Parses `CommandLine.arguments`, runs the suites and exits the process.
  /// - Parameters:
  ///   - suites: the suites.
  ///   - registry: the strategies `--waiter` can name.
  ///   - defaultWaiters: the strategies used when `--waiter` is not given; `.all` makes the
  ///     matrix the default.
  ///   - junit: writes `--junit` reports and reads `--shard-timings` (`JUnitReporter.factory`).
  public static func run(_ suites: [Suite], registry: WaiterRegistry = .builtIn,
                         defaultWaiters: Configuration.WaiterSelection = .suiteDefault,
                         junit: JUnitSupport? = nil) -> Never {
    let arguments = Array(CommandLine.arguments.dropFirst())
    // A standard stream the run was started without is /dev/null, never a harness descriptor.
    StandardStreams.openMissing()
    _ = RunDirectory.start
    if arguments.first == WorkerMain.flag { WorkerMain.serve(Suite.uniquelyNamed(suites), registry: registry) }
    BazelTestProtocol.adoptTemporaryDirectory()
    let status = self.status(arguments: arguments, suites: suites, registry: registry,
                             defaultWaiters: defaultWaiters, defaultIsolation: .worker, junit: junit,
                             output: nil, errors: nil, interrupts: StopRequest(), recordsRun: true)
    exit(status)
  }

  /// Runs the command with these arguments and returns the exit status, writing to the
  /// given streams (standard output and standard error by default). Tests run in this
  /// process unless `defaultIsolation` or `--isolation` says `worker`, which starts this
  /// process's executable again: only a suites executable calling ``run(_:registry:defaultWaiters:junit:)``
  /// can serve as its own worker.
  ///
  /// The Bazel test protocol's variables in `environment` (`TEST_TOTAL_SHARDS`,
  /// `XML_OUTPUT_FILE` and the others) stand in for flags that are not given: a run under
  /// `bazel test` needs none.
  public static func status(arguments: [String], suites: [Suite], registry: WaiterRegistry = .builtIn,
                            defaultWaiters: Configuration.WaiterSelection = .suiteDefault,
                            defaultIsolation: Isolation = .none,
                            junit: JUnitSupport? = nil, console: ConsoleReporter.Style = .forStandardOutput(),
                            output: (@Sendable (String) -> Void)? = nil, errors: (@Sendable (String) -> Void)? = nil,
                            interrupts: StopRequest? = nil,
                            environment: [String: String] = ProcessInfo.processInfo.environment) -> Int32 {
    status(arguments: arguments, suites: suites, registry: registry, defaultWaiters: defaultWaiters,
           defaultIsolation: defaultIsolation, junit: junit, console: console, output: output, errors: errors,
           interrupts: interrupts, environment: environment, recordsRun: false)
  }

  /// ``status(arguments:suites:registry:defaultWaiters:defaultIsolation:junit:console:output:errors:interrupts:environment:)``;
  /// `recordsRun` records the run for `--rerun-failed` in the working directory
  /// (``RunRecord``), and lets `--rerun-failed` read the last one: what a suites executable
  /// does.
  static func status(arguments: [String], suites: [Suite], registry: WaiterRegistry,
                     defaultWaiters: Configuration.WaiterSelection, defaultIsolation: Isolation,
                     junit: JUnitSupport?, console: ConsoleReporter.Style = .forStandardOutput(),
                     output: (@Sendable (String) -> Void)?, errors: (@Sendable (String) -> Void)?,
                     interrupts: StopRequest?, environment: [String: String] = ProcessInfo.processInfo.environment,
                     recordsRun: Bool) -> Int32 {
    withBazel(environment: environment, interrupts: interrupts) { bazel in
      let output = output ?? { FileHandleOutput.standardOutput.write($0) }
      let errors = errors ?? { FileHandleOutput.standardError.write($0) }
      var arguments = HarnessOptions.expandingOptionalSeeds(arguments)
      var options: HarnessOptions
      switch parse(arguments, output: output, errors: errors) {
      case .options(let parsed): options = parsed
      case .exit(let status): return status
      }
      let executable = HarnessOptions.executableName
      let record = recordsRun ? RunRecord.path(of: executable) : nil
      if let status = applyRerunFailed(to: &arguments, &options, record: record, output: output, errors: errors) {
        return status
      }
      for warning in DeclaredNameNumbering.warnings(for: Suite.uniquelyNamed(suites)) { errors("warning: \(warning)\n") }
      let recorder = record.map { RunRecorder(path: $0, executable: executable, arguments: arguments, warn: errors) }
      return run(Catalog(suites: suites), options: options, registry: registry, defaultWaiters: defaultWaiters, junit: junit,
                 console: console, output: output, errors: errors, interrupts: interrupts, bazel: bazel,
                 recorder: recorder) { options, _ in
        let isolation = options.isolation ?? (options.noCapture ? .none : defaultIsolation)
        if options.workers > 1 && isolation == .none {
          throw UsageError("--workers \(options.workers) runs tests in worker processes; --isolation none runs them in this process, one at a time")
        }
        let capturesOutput = !options.noCapture
        let asyncWidth = options.asyncWidth
        return { isolation.makeExecutor(stop: interrupts, capturesOutput: capturesOutput, asyncWidth: asyncWidth) }
      }
    }
  }

  /// Runs `body` between the Bazel test protocol's start and end (the end only when the run
  /// was not interrupted), with the protocol read from `environment`; returns its status.
  static func withBazel(environment: [String: String], interrupts: StopRequest?,
                        _ body: (BazelTestProtocol) -> Int32) -> Int32 {
    let bazel = BazelTestProtocol(environment: environment)
    bazel.runStarted()
    let status = body(bazel)
    if interrupts?.signal == nil { bazel.runEnded() }
    return status
  }

  /// What `--rerun-failed` makes of a command line: the flags to run with, or the status to
  /// exit with now.
  enum Rerun {
    /// The last run's flags, the new ones and an `--only` for each test that failed.
    case arguments([String])
    /// Exit now: 0 when nothing failed last time, 2 when there is no record to read.
    case exit(Int32)
  }

  /// Reads the last run's record at `record` (nil: this command keeps none) for
  /// `--rerun-failed` given with `arguments`, and says what it reruns.
  static func rerun(_ arguments: [String], record: String?, output: @Sendable (String) -> Void,
                    errors: @Sendable (String) -> Void) -> Rerun {
    guard let record else {
      errors("error: --rerun-failed reads the record a suites executable or harness test keeps of its last run; this command keeps none\n")
      return .exit(2)
    }
    let last: RunRecord?
    do {
      last = try RunRecord.read(from: record)
    } catch {
      errors("error: --rerun-failed: cannot read the last run's record \(record): \(error)\n")
      return .exit(2)
    }
    guard let last else {
      errors("error: --rerun-failed: no run of \(HarnessOptions.executableName) is recorded (\(record) does not exist); run the tests once first\n")
      return .exit(2)
    }
    let failed = last.failed
    guard !failed.isEmpty else {
      output("Nothing to rerun: no test failed or errored in the last run (\(record))\n")
      return .exit(0)
    }
    let tests = failed.count == 1 ? "1 test that" : "\(failed.count) tests that"
    let outside = last.outside.isEmpty ? "" : ", or that its failures outside every test name"
    output("Rerunning \(tests) failed or errored in the last run\(outside) (\(record))\n")
    return .arguments(last.rerunArguments(given: arguments))
  }

  /// With `--rerun-failed`, replaces `arguments` and `options` with the last run's flags, the
  /// new ones and an `--only` for each test that failed, read from `record`; returns the
  /// status to exit with now instead (nothing to rerun, no record, a usage error), or `nil`.
  static func applyRerunFailed(to arguments: inout [String], _ options: inout HarnessOptions, record: String?,
                               usage: String? = nil, command: String = HarnessOptions.executableName,
                               output: @Sendable (String) -> Void, errors: @Sendable (String) -> Void) -> Int32? {
    guard options.rerunFailed else { return nil }
    switch rerun(arguments, record: record, output: output, errors: errors) {
    case .arguments(let rerun): arguments = rerun
    case .exit(let status): return status
    }
    switch parse(arguments, usage: usage, command: command, output: output, errors: errors) {
    case .options(let parsed): options = parsed
    case .exit(let status): return status
    }
    return nil
  }

  /// What parsing a command line gave: the options, or the status to exit with now.
  enum Parsed {
    /// The options to run with.
    case options(HarnessOptions)
    /// Exit now: 0 after the help was printed, 2 after a usage error.
    case exit(Int32)
  }

  /// Parses the flags of a run (`arguments` without the executable), printing the help or
  /// a usage error; `usage` is the synopsis shown with an error, `command` the name `--help`
  /// is suggested with.
  static func parse(_ arguments: [String], usage: String? = nil, command: String = HarnessOptions.executableName,
                    output: @Sendable (String) -> Void, errors: @Sendable (String) -> Void) -> Parsed {
    do {
      return .options(try HarnessOptions.parse(HarnessOptions.expandingOptionalSeeds(arguments)))
    } catch {
      if HarnessOptions.exitCode(for: error) == .success {
        output(HarnessOptions.showingOptionalSeed(HarnessOptions.fullMessage(for: error)) + "\n")
        return .exit(0)
      }
      let usage = usage ?? HarnessOptions.showingOptionalSeed(HarnessOptions.usageString())
      errors("error: \(HarnessOptions.message(for: error))\nUSAGE: \(usage)\n"
        + "  See '\(command) --help' for more information.\n")
      return .exit(2)
    }
  }

  /// Runs or lists the tests of `catalog` under `options` (with the Bazel protocol's variables), each lane
  /// with an executor that `makeExecutor` gives for the options and the run's configuration, and returns the exit
  /// status: 0 when every test passed, 1 when a test failed (or was flaky, with
  /// `--fail-on-flaky`), 2 for a usage error (`makeExecutor` may throw one), 128 + the
  /// signal when interrupted. Suites executables and `harness test` both run through here;
  /// `recorder` (theirs) records the run for `--rerun-failed`.
  static func run(_ catalog: Catalog, options: HarnessOptions, registry: WaiterRegistry,
                  defaultWaiters: Configuration.WaiterSelection, junit: JUnitSupport?, console: ConsoleReporter.Style,
                  output: @escaping @Sendable (String) -> Void, errors: @escaping @Sendable (String) -> Void,
                  interrupts: StopRequest?, bazel: BazelTestProtocol, recorder: RunRecorder? = nil,
                  makeExecutor: (HarnessOptions, Configuration) throws -> @Sendable () -> any TestExecutor) -> Int32 {
    _ = RunDirectory.start
    var options = options
    do {
      if options.rerunFailed { throw UsageError("--rerun-failed applies to a suites executable (HarnessMain.run) and harness test, which record their runs") }
      options.run.adopt(bazel, hasJUnit: junit != nil)
      var configuration = try options.configuration(registry: registry, defaultWaiters: defaultWaiters)
      if let warning = try options.run.applySharding(to: &configuration, catalog: catalog, bazel: bazel, junit: junit) {
        errors("warning: \(warning)\n")
      }
      // An empty run that --allow-empty allows says which flags left it empty.
      if case .emptySelection(let filters, let skips)? = try configuration.checkSelection(in: catalog) {
        errors("warning: no test matches \(RunnerError.selection(filters: filters, skips: skips)): the run is empty\n")
      }
      // Only another package's tests are balanced by them (``LaneBalance``): a suites executable
      // of a million tests does not read its record for nothing.
      if options.workers > 1, configuration.lastDurations == nil, catalog.suites.isEmpty {
        configuration.lastDurations = recorder?.lastDurations
      }
      if options.list {
        output(options.run.listing(of: configuration.selection(of: catalog)))
        return 0
      }
      interrupts?.handleInterrupts()
      var reporters: [any Reporter] = [ConsoleReporter(style: console, write: output)]
      reporters += try options.run.fileReporters(junit: junit?.reporter, catalog: catalog)
      if let recorder { reporters.append(recorder) }
      let makeExecutor = try makeExecutor(options, configuration)
      // A command line never hangs silently: in-process, a test hung past its limit ends the run.
      configuration.hungTestGracePeriod = .seconds(1)
      let runner = Runner(catalog: catalog, configuration: configuration, registry: registry, lanes: options.workers,
                          makeExecutor: makeExecutor, stop: interrupts, reporters: reporters)
      let summary = try runner.run()
      if let signal = interrupts?.signal { return 128 + signal }
      if options.failOnFlaky && summary.flaky > 0 {
        errors("error: \(summary.flaky) flaky test\(summary.flaky == 1 ? "" : "s") (--fail-on-flaky)\n")
        return 1
      }
      return summary.succeeded ? 0 : 1
    } catch {
      errors("error: \(error)\n")
      return 2
    }
  }
}

extension HarnessMain.Isolation {
  /// The executor of one lane of a run; in-process, it captures what tests print unless
  /// `capturesOutput` is off (`--no-capture`). In a worker, up to `asyncWidth` `async` tests of
  /// parallel suites run side by side; under `--isolation test` each runs alone in its process.
  func makeExecutor(stop: StopRequest?, capturesOutput: Bool, asyncWidth: Int) -> any TestExecutor {
    switch self {
    case .worker: WorkerExecutor.relaunchingThisExecutable(stop: stop, asyncWidth: asyncWidth)
    case .test: WorkerExecutor.relaunchingThisExecutable(freshProcessPerTest: true, stop: stop)
    case .none: InProcessExecutor(capturesOutput: capturesOutput)
    }
  }
}
