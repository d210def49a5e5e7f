import Foundation
import Synchronization

/// Runs suites under waiter strategies and sends every ``Event`` to the reporters as it
/// happens.
///
/// The runner builds a ``Plan`` from the configuration and walks it: each entry (a suite
/// under one waiter) is announced, and each of its steps that runs code is handed to a
/// ``TestExecutor``, which emits the test's events live. With one lane (the default), the
/// entries run one after another on the calling thread: call it on the main thread (a
/// suites executable's top-level code, or a synchronous XCTest method) so that the
/// in-process executor's blocking waits can turn the main run loop. With more lanes,
/// entries run side by side, each lane on a thread of its own with an executor of its own
/// (worker processes, `--workers N`); each entry runs whole in one lane, and suites start
/// in plan order.
public final class Runner: Sendable {
  /// The suites to run.
  public let suites: [Suite]
  /// How to run them.
  public let configuration: Configuration
  /// The strategies `--waiter` can name.
  public let registry: WaiterRegistry
  /// How many entries run at once.
  public let lanes: Int
  /// When requested, no more tests start; the run then ends normally with what ran.
  public let stop: StopRequest?
  /// Makes the executor of each lane.
  private let makeExecutor: @Sendable () -> any TestExecutor
  private let reporters: [any Reporter]

  /// Creates a runner whose tests run one at a time; they run in this process unless
  /// another `executor` is given.
  /// - Parameters:
  ///   - suites: the suites.
  ///   - configuration: how to run them.
  ///   - registry: the strategies a configuration can name.
  ///   - executor: what runs each test.
  ///   - stop: a request to stop the run early.
  ///   - reporters: where the events go.
  public convenience init(suites: [Suite], configuration: Configuration = Configuration(),
                          registry: WaiterRegistry = .builtIn, executor: any TestExecutor = InProcessExecutor(),
                          stop: StopRequest? = nil, reporters: [any Reporter]) {
    self.init(suites: suites, configuration: configuration, registry: registry, lanes: 1, makeExecutor: { executor },
              stop: stop, reporters: reporters)
  }

  /// Creates a runner that runs `lanes` entries (suites under a waiter) at a time, each lane
  /// with an executor `makeExecutor` makes; one lane runs on the calling thread.
  /// - Parameters:
  ///   - suites: the suites.
  ///   - configuration: how to run them.
  ///   - registry: the strategies a configuration can name.
  ///   - lanes: how many entries run at once (at least 1).
  ///   - makeExecutor: makes the executor of a lane (a ``WorkerExecutor``: tests of other
  ///     lanes run at the same time, so they should not share a process).
  ///   - stop: a request to stop the run early.
  ///   - reporters: where the events go; they receive events from every lane, one at a time.
  public init(suites: [Suite], configuration: Configuration = Configuration(),
              registry: WaiterRegistry = .builtIn, lanes: Int, makeExecutor: @escaping @Sendable () -> any TestExecutor,
              stop: StopRequest? = nil, reporters: [any Reporter]) {
    self.suites = suites
    self.configuration = configuration
    self.registry = registry
    self.lanes = max(1, lanes)
    self.makeExecutor = makeExecutor
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
    let entries = EntryQueue(plan.entries)
    var total = Summary()
    if lanes == 1 {
      total = try walk(entries, of: plan, events: events, checking: channel)
    } else {
      let results = Mutex<[Result<Summary, any Error>]>([])
      let group = DispatchGroup()
      for _ in 0..<min(lanes, plan.entries.count) {
        group.enter()
        Thread.detachNewThread { [self] in
          let result = Result { try walk(entries, of: plan, events: events, checking: channel) }
          results.withLock { $0.append(result) }
          group.leave()
        }
      }
      group.wait()
      for result in results.withLock({ $0 }) { total.add(try result.get()) }
    }
    events(.runEnded(total, duration: start.duration(to: .now).timeInterval))
    try channel.checkReporters()
    return total
  }

  /// One lane: takes entries until none is left or the run stops, runs each whole with the
  /// lane's executor, and returns their counts.
  private func walk(_ entries: EntryQueue, of plan: Plan, events: EventSink, checking channel: ReportingChannel) throws -> Summary {
    let executor = makeExecutor()
    defer { executor.finish() }
    var total = Summary()
    while stop?.signal == nil, let entry = entries.next(announcing: events) {
      total.add(try run(entry, of: plan, executor: executor, events: events, checking: channel))
    }
    return total
  }

  /// Runs one entry (already announced) with `executor`, repetition by repetition, and ends
  /// it with `suiteEnded`.
  private func run(_ entry: Plan.Entry, of plan: Plan, executor: any TestExecutor, events: EventSink,
                   checking channel: ReportingChannel) throws -> Summary {
    let suiteStart = ContinuousClock().now
    var summary = Summary()
    repetitions: for repetition in 1...plan.repetitions {
      var failed = false
      let steps = plan.steps(of: entry, repetition: repetition)
      executor.prepare(steps.filter { $0.test.skipReason == nil })
      for step in steps {
        guard stop?.signal == nil else { break repetitions }
        try channel.checkReporters()
        let verdict = run(step, executor: executor, events: events).verdict
        summary.count(verdict)
        failed = failed || verdict.isFailure
      }
      if failed && configuration.untilFailure { break }
    }
    events(.suiteEnded(entry.suiteRun, summary, duration: suiteStart.duration(to: .now).timeInterval))
    return summary
  }

  /// Runs one step: a skipped test is reported here, without running any of its code.
  private func run(_ step: Step, executor: any TestExecutor, events: EventSink) -> TestResult {
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

/// The entries of a plan, handed to lanes in plan order.
private final class EntryQueue: Sendable {
  private let entries: [Runner.Plan.Entry]
  private let next = Mutex(0)

  init(_ entries: [Runner.Plan.Entry]) { self.entries = entries }

  /// The next entry, announced with `suiteStarted` as it is taken, so that suites start in
  /// plan order whichever lane takes them; `nil` when none is left.
  func next(announcing events: EventSink) -> Runner.Plan.Entry? {
    next.withLock { next in
      guard next < entries.count else { return nil }
      defer { next += 1 }
      events(.suiteStarted(entries[next].suiteRun))
      return entries[next]
    }
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
