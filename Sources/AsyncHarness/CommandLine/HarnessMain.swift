import ArgumentParser
import Foundation

/// Makes the JUnit reporter for `--junit PATH --junit-profile NAME`; the
/// `AsyncHarnessJUnit` product provides one.
public typealias JUnitReporterFactory = @Sendable (_ path: String, _ profile: String) throws -> any Reporter

/// The command-line entry point of a suites executable.
///
/// ```swift
/// // main.swift
/// import AsyncHarness
/// HarnessMain.run([loaderSuite, calculatorSuite])
/// ```
///
/// Exit status: 0 when every test passed (known issues and skips included), 1 when a test
/// failed, 2 for a usage error (a bad flag, an unknown waiter, a filter that selects no
/// test without `--allow-empty`, a report that cannot be written).
///
/// Tests run in a worker process by default (`--isolation worker`): the executable starts
/// itself again as a worker, so a test that crashes or hangs ends as an error and the run
/// goes on. `--isolation test` starts a fresh worker for every test; `--isolation none`
/// runs them in this process (for a debugger). `--workers N` runs N workers at once.
public enum HarnessMain {
  /// Where the tests of a suites executable run.
  public enum Isolation: String, Sendable, CaseIterable {
    /// In a worker process: this executable started again (``WorkerExecutor``), running
    /// test after test until one crashes.
    case worker
    /// In a fresh worker process for every test: slower, but no test sees what another
    /// left in its process.
    case test
    /// In this process (``InProcessExecutor``).
    case none
  }

  /// Parses `CommandLine.arguments`, runs the suites and exits the process.
  /// - Parameters:
  ///   - suites: the suites.
  ///   - registry: the strategies `--waiter` can name.
  ///   - defaultWaiters: the strategies used when `--waiter` is not given; `.all` makes the
  ///     matrix the default.
  ///   - junit: makes the reporter for `--junit` (`JUnitReporter.factory`).
  public static func run(_ suites: [Suite], registry: WaiterRegistry = .builtIn,
                         defaultWaiters: Configuration.WaiterSelection = .suiteDefault,
                         junit: JUnitReporterFactory? = nil) -> Never {
    let arguments = Array(CommandLine.arguments.dropFirst())
    if arguments.first == WorkerMain.flag { WorkerMain.serve(suites, registry: registry) }
    let status = self.status(arguments: arguments, suites: suites, registry: registry,
                             defaultWaiters: defaultWaiters, defaultIsolation: .worker, junit: junit,
                             interrupts: StopRequest())
    exit(status)
  }

  /// Runs the command with these arguments and returns the exit status, writing to the
  /// given streams (standard output and standard error by default). Tests run in this
  /// process unless `defaultIsolation` or `--isolation` says `worker`, which starts this
  /// process's executable again: only a suites executable calling ``run(_:registry:defaultWaiters:junit:)``
  /// can serve as its own worker.
  public static func status(arguments: [String], suites: [Suite], registry: WaiterRegistry = .builtIn,
                            defaultWaiters: Configuration.WaiterSelection = .suiteDefault,
                            defaultIsolation: Isolation = .none,
                            junit: JUnitReporterFactory? = nil, console: ConsoleReporter.Style = .forStandardOutput(),
                            output: (@Sendable (String) -> Void)? = nil, errors: (@Sendable (String) -> Void)? = nil,
                            interrupts: StopRequest? = nil) -> Int32 {
    let output = output ?? { FileHandleOutput.standardOutput.write($0) }
    let errors = errors ?? { FileHandleOutput.standardError.write($0) }
    let options: HarnessOptions
    do {
      options = try HarnessOptions.parse(HarnessOptions.expandingShuffle(arguments))
    } catch {
      if HarnessOptions.exitCode(for: error) == .success {
        output(HarnessOptions.showingOptionalSeed(HarnessOptions.fullMessage(for: error)) + "\n")
        return 0
      }
      errors("error: \(HarnessOptions.message(for: error))\nUSAGE: \(HarnessOptions.showingOptionalSeed(HarnessOptions.usageString()))\n"
        + "  See '\(HarnessOptions.executableName) --help' for more information.\n")
      return 2
    }
    do {
      let configuration = try options.configuration(registry: registry, defaultWaiters: defaultWaiters)
      try configuration.checkSelection(in: suites)
      if options.list {
        for suite in suites {
          for test in suite.tests where configuration.includes(test, in: suite) {
            output("\(suite.name)/\(test.name)\(test.tags.isEmpty ? "" : "  [tags: \(test.tags.joined(separator: ", "))]")\n")
          }
        }
        return 0
      }
      interrupts?.handleInterrupts()
      var reporters: [any Reporter] = [ConsoleReporter(style: console, write: output)]
      reporters += try options.fileReporters(junit: junit)
      let isolation = options.isolation ?? defaultIsolation
      if options.workers > 1 && isolation == .none {
        throw UsageError("--workers \(options.workers) runs tests in worker processes; --isolation none runs them in this process, one at a time")
      }
      let runner = Runner(suites: suites, configuration: configuration, registry: registry, lanes: options.workers,
                          makeExecutor: { isolation.makeExecutor(stop: interrupts) }, stop: interrupts, reporters: reporters)
      let succeeded = try runner.run().succeeded
      if let signal = interrupts?.signal { return 128 + signal }
      return succeeded ? 0 : 1
    } catch {
      errors("error: \(error)\n")
      return 2
    }
  }
}

extension HarnessMain.Isolation {
  /// The executor of one lane of a run.
  func makeExecutor(stop: StopRequest?) -> any TestExecutor {
    switch self {
    case .worker: WorkerExecutor.relaunchingThisExecutable(stop: stop)
    case .test: WorkerExecutor.relaunchingThisExecutable(freshProcessPerTest: true, stop: stop)
    case .none: InProcessExecutor()
    }
  }
}

/// A command-line mistake, reported with exit status 2.
struct UsageError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

/// The flags of a suites executable. A command only so that its help and usage name the
/// executable (`USAGE: LoaderSuites …`); ``HarnessMain`` runs it.
struct HarnessOptions: ParsableCommand {
  static var configuration: CommandConfiguration {
    CommandConfiguration(
      commandName: executableName,
      abstract: "Runs AsyncHarness suites.",
      usage: synopsis,
      discussion: "Exit status: 0 when every test passed, 1 when a test failed, 2 for a usage error (including a selection with no test, unless --allow-empty).")
  }

  /// The name the process was started with, without its directories.
  static var executableName: String {
    URL(fileURLWithPath: CommandLine.arguments.first ?? "harness").lastPathComponent
  }

  /// Shows the seed of `--shuffle` as optional, as the README does: ArgumentParser has no
  /// notation for an option whose value may be left out (``expandingShuffle(_:)`` fills it in).
  static func showingOptionalSeed(_ text: String) -> String {
    text.replacingOccurrences(of: "[--shuffle <seed>]", with: "[--shuffle [<seed>]]")
      .replacingOccurrences(of: "  --shuffle <seed>  ", with: "  --shuffle [<seed>]")
  }

  @Option(help: ArgumentHelp("The waiter strategy for every suite, or all for the matrix.", valueName: "name|all"))
  var waiter: String?

  @Option(help: ArgumentHelp("Run only tests whose Suite/test path contains this text, or tag:NAME (repeatable).", valueName: "text"))
  var filter: [String] = []

  @Flag(help: "List the selected tests and exit.")
  var list = false

  @Flag(help: "Accept a selection with no test as an empty, passing run (by default it is an error).")
  var allowEmpty = false

  @Option(name: .customLong("repeat"), help: ArgumentHelp("Run each test N times.", valueName: "N"))
  var repetitions = 1

  @Flag(help: "With --repeat, stop after the first repetition that fails.")
  var untilFailure = false

  @Option(help: ArgumentHelp("Shuffle tests within each suite; without a seed, a random one is printed.", valueName: "seed"))
  var shuffle: UInt64?

  @Option(help: ArgumentHelp("Write the event stream as JSON Lines to this file.", valueName: "path"))
  var json: String?

  @Option(help: ArgumentHelp("Write a JUnit XML report to this file.", valueName: "path"))
  var junit: String?

  @Option(help: ArgumentHelp("With --junit: the profile, standard (the default) or github (adds file and line attributes).", valueName: "name"))
  var junitProfile: String?

  @Option(help: ArgumentHelp("The timeout in seconds of waits that pass none (default 1).", valueName: "seconds"))
  var timeout: Double?

  @Option(help: ArgumentHelp("The longest a test may run, in seconds (default: no limit).", valueName: "seconds"))
  var timeLimit: Double?

  @Option(help: ArgumentHelp("Where tests run: worker (a worker process, so a crash or hang ends only its test; the default), test (a fresh worker process for each test) or none (this process, for a debugger).", valueName: "mode"))
  var isolation: HarnessMain.Isolation?

  @Option(help: ArgumentHelp("Run tests in N worker processes at once; a suite runs whole in one of them.", valueName: "N"))
  var workers = 1

  // Schedules: applied in Scheduling/HarnessOptions+Schedules.swift.
  @Option(help: ArgumentHelp("Run each test under N schedules of the scheduled waiter (seeds 1 to N) and report each test's pass rate.", valueName: "N"))
  var explore: Int?

  @Option(help: ArgumentHelp("Rerun exactly the schedule of a replay token a failing test printed (SEED:POLICY:TEST), for that test only.", valueName: "token"))
  var schedule: String?

  func validate() throws {
    guard repetitions >= 1 else { throw ValidationError("--repeat must be at least 1, not \(repetitions)") }
    guard workers >= 1 else { throw ValidationError("--workers must be at least 1, not \(workers)") }
    try validateSchedules()
    for (flag, value) in [("--timeout", timeout), ("--time-limit", timeLimit)] {
      if let value, !(value > 0 && value.isFinite) {
        throw ValidationError("\(flag) must be a positive number of seconds, not \(value)")
      }
    }
  }

  func configuration(registry: WaiterRegistry, defaultWaiters: Configuration.WaiterSelection) throws -> Configuration {
    var configuration = Configuration()
    switch waiter {
    case nil: configuration.waiters = defaultWaiters
    case "all": configuration.waiters = .all
    case let name?:
      guard registry.waiter(named: name) != nil else {
        throw UsageError(RunnerError.unknownWaiter(name, known: registry.names).description)
      }
      configuration.waiters = .named(name)
    }
    configuration.filters = filter
    configuration.allowsEmptySelection = allowEmpty
    configuration.repetitions = repetitions
    configuration.untilFailure = untilFailure
    configuration.shuffleSeed = shuffle
    if let timeout { configuration.defaultTimeout = .milliseconds(Int64((timeout * 1000).rounded())) }
    configuration.timeLimit = timeLimit.map { .milliseconds(Int64(($0 * 1000).rounded())) }
    try applySchedules(to: &configuration, registry: registry)
    return configuration
  }

  /// Lets `--shuffle` stand alone: without a seed after it, a random seed is inserted.
  static func expandingShuffle(_ arguments: [String]) -> [String] {
    var result: [String] = []
    for (index, argument) in arguments.enumerated() {
      result.append(argument)
      guard argument == "--shuffle" else { continue }
      let next = arguments.indices.contains(index + 1) ? arguments[index + 1] : nil
      if next.flatMap(UInt64.init) == nil {
        result.append(String(UInt64.random(in: 1...UInt64(UInt32.max))))
      }
    }
    return result
  }
}

extension HarnessMain.Isolation: ExpressibleByArgument {}
