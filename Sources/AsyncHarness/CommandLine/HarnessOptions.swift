import ArgumentParser
import Foundation

/// A command-line mistake, reported with exit status 2.
struct UsageError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

/// The flags of a suites executable: those `harness test` shares (``RunFlags``, read through
/// as if they were this type's own) and those of harness suites alone (waiters, isolation,
/// schedules, jitter). A command only so that its help and usage name the executable
/// (`USAGE: LoaderSuites …`); ``HarnessMain`` runs it.
@dynamicMemberLookup
struct HarnessOptions: ParsableCommand {
  static var configuration: CommandConfiguration {
    CommandConfiguration(
      commandName: executableName,
      abstract: "Runs AsyncHarness suites.",
      usage: synopsis,
      discussion: "Exit status: 0 when every test passed, 1 when a test failed, 2 for a usage error (including a selection with no test, unless --allow-empty).")
  }

  /// A flag `harness test` shares, as if it were this type's own.
  subscript<Value>(dynamicMember flag: WritableKeyPath<RunFlags, Value>) -> Value {
    get { run[keyPath: flag] }
    set { run[keyPath: flag] = newValue }
  }

  /// The name the process was started with, without its directories.
  static var executableName: String {
    URL(fileURLWithPath: CommandLine.arguments.first ?? "harness").lastPathComponent
  }

  /// The options whose seed may be left out: a random one is then used, and printed.
  static let optionalSeedFlags = ["--shuffle", "--jitter"]

  /// Shows the seed of `--shuffle` and `--jitter` as optional, as the README does:
  /// ArgumentParser has no notation for an option whose value may be left out
  /// (``expandingOptionalSeeds(_:)`` fills it in).
  static func showingOptionalSeed(_ text: String) -> String {
    optionalSeedFlags.reduce(text) { text, flag in
      text.replacingOccurrences(of: "[\(flag) <seed>]", with: "[\(flag) [<seed>]]")
        .replacingOccurrences(of: "  \(flag) <seed>  ", with: "  \(flag) [<seed>]")
    }
  }

  @Option(help: ArgumentHelp("The waiter strategy for every suite, or all for the matrix.", valueName: "name|all"))
  var waiter: String?

  @Option(help: ArgumentHelp("The timeout in seconds of waits that pass none (default 1).", valueName: "seconds"))
  var timeout: Double?

  @Option(help: ArgumentHelp("Where tests run: worker (a worker process, so a crash or hang ends only its test; the default), test (a fresh worker process for each test) or none (this process, for a debugger).", valueName: "mode"))
  var isolation: HarnessMain.Isolation?

  @Flag(help: "Treat every suite not marked .serialized as .parallel: its tests spread over the workers, its async tests side by side in each.")
  var parallel = false

  @Option(help: ArgumentHelp("Run up to N async tests of a suite whose tests run in parallel side by side in each worker, as tasks; 1 runs each alone.", valueName: "N"))
  var asyncWidth = WorkerExecutor.defaultAsyncWidth

  @Flag(help: "Run the tests in this process (as --isolation none) and let what they print through to the terminal instead of capturing it as their output.")
  var noCapture = false

  // Jitter: applied in Dispatching/HarnessOptions+Jitter.swift.
  @Option(help: ArgumentHelp("Delay each item sent to a test's real queues by 0 to 2 ms, drawn from the seed (with --repeat, shakes out ordering bugs); without a seed, a random one is printed.", valueName: "seed"))
  var jitter: UInt64?

  /// The flags a package's own tests share with suites executables (`harness test`), shown
  /// after those of harness suites alone.
  @OptionGroup var run: RunFlags

  func validate() throws {
    guard asyncWidth >= 1 else { throw ValidationError("--async-width must be at least 1, not \(asyncWidth)") }
    if noCapture, let isolation, isolation != .none {
      throw ValidationError("--no-capture runs the tests in this process, so it cannot be combined with --isolation \(isolation.rawValue)")
    }
    try validateJitter()
    if let timeout, !(timeout > 0 && timeout.isFinite) {
      throw ValidationError("--timeout must be a positive number of seconds, not \(timeout)")
    }
  }

  func configuration(registry: WaiterRegistry, defaultWaiters: Configuration.WaiterSelection) throws -> Configuration {
    var configuration = try run.configuration()
    switch waiter {
    case nil: configuration.waiters = defaultWaiters
    case "all": configuration.waiters = .all
    case let name?:
      guard registry.waiter(named: name) != nil else {
        throw UsageError(RunnerError.unknownWaiter(name, known: registry.names).description)
      }
      configuration.waiters = .named(name)
    }
    configuration.parallelTests = parallel
    if let timeout { configuration.defaultTimeout = .milliseconds(Int64((timeout * 1000).rounded())) }
    try run.selectScheduledWaiter(in: &configuration, waiter: waiter, registry: registry)
    configuration.jitter = jitter.map(Jitter.init(seed:))
    return configuration
  }

  /// Lets `--shuffle` and `--jitter` stand alone: when the next argument is another option
  /// (or there is none), a random seed is inserted. Anything else after them is their seed,
  /// which the parser checks, so `--jitter abc` and `--jitter -1` are usage errors naming
  /// the flag and the value (a negative number is joined to its flag, `--jitter=-1`, or the
  /// parser would take it for an option).
  static func expandingOptionalSeeds(_ arguments: [String]) -> [String] {
    var result: [String] = []
    var index = arguments.startIndex
    while index < arguments.endIndex {
      let argument = arguments[index]
      index += 1
      guard optionalSeedFlags.contains(argument) else {
        result.append(argument)
        continue
      }
      let next = index < arguments.endIndex ? arguments[index] : nil
      switch next {
      case let negative? where negative.hasPrefix("-") && Double(negative) != nil:
        result.append("\(argument)=\(negative)")
        index += 1
      case let seed? where !seed.hasPrefix("-"):
        result.append(argument)
      default:
        result += [argument, String(UInt64.random(in: 1...UInt64(UInt32.max)))]
      }
    }
    return result
  }
}

/// `--time-limit`: a positive number of seconds, `none`, or, when not given, the default.
struct TimeLimit: Sendable, Equatable {
  /// The limit of a run that names none, in seconds: a test of asynchronous code that runs a
  /// minute is hung far more often than it is slow, and a hang then costs a CI job one
  /// minute instead of the job's own limit.
  static let defaultSeconds = 60.0

  /// The limit; `nil` for none.
  let duration: Duration?

  /// Reads the flag's value: `nil` (not given) for the default, `none`, or a positive,
  /// finite number of seconds.
  /// - Throws: `ValidationError` naming the flag and the value for anything else.
  init(_ argument: String?) throws {
    guard let argument else {
      duration = .seconds(Self.defaultSeconds)
      return
    }
    if argument == "none" {
      duration = nil
      return
    }
    guard let seconds = Double(argument), seconds > 0, seconds.isFinite else {
      throw ValidationError("--time-limit must be a positive number of seconds or none, not \(argument)")
    }
    duration = .milliseconds(Int64((seconds * 1000).rounded()))
  }
}

extension HarnessMain.Isolation: ExpressibleByArgument {}
extension Sharding.Granularity: ExpressibleByArgument {}
