import Foundation
import Synchronization

/// Runs suites under waiter strategies and sends every ``Event`` to the reporters as it
/// happens.
///
/// The runner builds a ``Plan`` from the configuration and walks it: each entry (a suite
/// under one waiter) is announced, and each of its steps that runs code is handed to the
/// ``TestExecutor``, which emits the test's events live. Call it on the main thread (a
/// suites executable's top-level code, or a synchronous XCTest method) so that the
/// in-process executor's blocking waits can turn the main run loop.
public final class Runner: Sendable {
  /// The suites to run.
  public let suites: [Suite]
  /// How to run them.
  public let configuration: Configuration
  /// The strategies `--waiter` can name.
  public let registry: WaiterRegistry
  /// What runs each test.
  public let executor: any TestExecutor
  /// When requested, no more tests start; the run then ends normally with what ran.
  public let stop: StopRequest?
  private let reporters: [any Reporter]

  /// Creates a runner; tests run in this process unless another `executor` is given.
  public init(suites: [Suite], configuration: Configuration = Configuration(),
              registry: WaiterRegistry = .builtIn, executor: any TestExecutor = InProcessExecutor(),
              stop: StopRequest? = nil, reporters: [any Reporter]) {
    self.suites = suites
    self.configuration = configuration
    self.registry = registry
    self.executor = executor
    self.stop = stop
    self.reporters = reporters
  }

  /// The plan this runner walks.
  /// - Throws: ``RunnerError/unknownWaiter(_:known:)`` for a name not in the registry.
  public func plan() throws -> Plan {
    try Plan(suites: suites, configuration: configuration, registry: registry)
  }

  /// Runs every selected test and returns the counts.
  /// - Throws: ``RunnerError`` for a bad configuration or a selection with no test (before
  ///   any test runs), or the error of a reporter that failed (every reporter is finished
  ///   first, so a failing reporter loses no other report).
  @discardableResult
  public func run() throws -> Summary {
    let plan = try plan()
    try configuration.checkSelection(in: suites)
    let channel = ReportingChannel(reporters)
    let summary: Summary
    defer { executor.finish() }
    do {
      summary = try walk(plan, events: channel.sink, checking: channel)
    } catch {
      try? channel.finish()
      throw error
    }
    try channel.finish()
    return summary
  }

  private func walk(_ plan: Plan, events: EventSink, checking channel: ReportingChannel) throws -> Summary {
    let start = ContinuousClock().now
    events(.runStarted(RunInfo(seed: configuration.shuffleSeed, repetitions: plan.repetitions,
                               waiters: plan.waiterNames)))
    var total = Summary()
    entries: for entry in plan.entries {
      guard stop?.signal == nil else { break }
      let suiteStart = ContinuousClock().now
      events(.suiteStarted(entry.suiteRun))
      var summary = Summary()
      repetitions: for repetition in 1...plan.repetitions {
        var failed = false
        let steps = plan.steps(of: entry, repetition: repetition)
        executor.prepare(steps.filter { $0.test.skipReason == nil })
        for step in steps {
          guard stop?.signal == nil else { break repetitions }
          try channel.checkReporters()
          let verdict = run(step, events: events).verdict
          summary.count(verdict)
          failed = failed || verdict.isFailure
        }
        if failed && configuration.untilFailure { break }
      }
      events(.suiteEnded(entry.suiteRun, summary, duration: suiteStart.duration(to: .now).timeInterval))
      total.add(summary)
    }
    events(.runEnded(total, duration: start.duration(to: .now).timeInterval))
    try channel.checkReporters()
    return total
  }

  /// Runs one step: a skipped test is reported here, without running any of its code.
  private func run(_ step: Step, events: EventSink) -> TestResult {
    guard let reason = step.test.skipReason else { return executor.run(step, events: events) }
    let result = TestResult(verdict: .skipped, reason: reason)
    events(.testStarted(step.id))
    events(.testEnded(step.id, result, duration: 0))
    return result
  }

  /// Decides a test's result from what it recorded.
  ///
  /// A test with a known issue that recorded a failure ends as `.knownIssue`; one that
  /// recorded none fails, because the known issue did not occur.
  static func result(issues: [Issue], knownIssue: String?, at location: SourceLocation) -> TestResult {
    let failing = issues.filter(\.isFailure)
    if let knownIssue {
      if !failing.isEmpty { return TestResult(verdict: .knownIssue, reason: knownIssue, issues: issues) }
      let missing = Issue(kind: .expectationFailed, message: "Known issue did not occur: \(knownIssue)",
                          sourceLocation: location)
      return TestResult(verdict: .failed, reason: knownIssue, issues: issues + [missing])
    }
    if failing.contains(where: \.isError) { return TestResult(verdict: .errored, issues: issues) }
    return TestResult(verdict: failing.isEmpty ? .passed : .failed, issues: issues)
  }
}

/// Why a run could not start.
public enum RunnerError: Error, Equatable, CustomStringConvertible {
  /// `--waiter` named a strategy that is not registered.
  case unknownWaiter(String, known: [String])
  /// The suites and filters select no test, and ``Configuration/allowsEmptySelection`` is
  /// off: a run that tests nothing must not look green.
  case emptySelection(filters: [String])
  /// `--schedule` replays a schedule made for a test that none of the selected tests is.
  case noTestForSchedule(String)

  public var description: String {
    switch self {
    case .unknownWaiter(let name, let known):
      "unknown waiter \"\(name)\"; known strategies: \(known.joined(separator: ", ")), or all"
    case .noTestForSchedule(let token):
      "no selected test matches --schedule \(token): a replay token reruns the test it was printed for"
    case .emptySelection(let filters) where filters.isEmpty:
      "no test to run: the suites contain no test (--allow-empty allows an empty run)"
    case .emptySelection(let filters):
      "no test matches "
        + filters.map { "--filter \"\($0)\"" }.joined(separator: ", ")
        + " (--list shows the tests; --allow-empty allows an empty run)"
    }
  }
}

/// A small seeded random number generator (SplitMix64): the one `--shuffle SEED` uses, so an
/// order can be replayed from its printed seed on every platform. Tests can use it for
/// reproducible generated inputs.
public struct SeededRandomGenerator: RandomNumberGenerator, Sendable {
  private var state: UInt64

  /// Creates a generator whose sequence is fixed by `seed`.
  public init(seed: UInt64) { state = seed }

  /// The next number of the sequence.
  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
