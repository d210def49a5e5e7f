import Foundation
import Synchronization

/// Runs suites under waiter strategies and sends every ``Event`` to the reporters as it
/// happens.
///
/// The runner plans the run from its configuration (suites under waiters, filters,
/// repetitions, schedules) and walks the plan: each suite under one waiter is announced,
/// and its tests run one after another in this process, on the thread that calls ``run()``.
/// Call it on the main thread (a suites executable's top-level code, or a synchronous
/// XCTest method) so that blocking waits can turn the main run loop.
///
/// ``HarnessMain`` runs the same plan with worker processes (`--workers N`,
/// `--isolation`), where a test that crashes or hangs cannot take the run with it, and
/// tests of suites that allow it (``SuiteTrait/parallel``, ``Configuration/parallelTests``)
/// run side by side. The executors behind that are available to tools that run tests
/// themselves, under `@_spi(ForToolsIntegrationOnly) import AsyncHarness`.
public final class Runner: Sendable {
  /// The suites to run, each named uniquely (a repeated suite name gets `#01`, `#02`, …).
  public let suites: [Suite]
  /// How to run them.
  public let configuration: Configuration
  /// The strategies `--waiter` can name.
  public let registry: WaiterRegistry
  /// How many entries, or tests of parallel suites, may run at once.
  @_spi(ForToolsIntegrationOnly) public let lanes: Int
  /// When requested, no more tests start; the run then ends normally with what ran.
  public let stop: StopRequest?
  /// Makes the executor of each lane.
  private let makeExecutor: @Sendable () -> any TestExecutor
  private let reporters: [any Reporter]

  /// Creates a runner whose tests run in this process, one at a time, on the thread that
  /// calls ``run()``.
  /// - Parameters:
  ///   - suites: the suites.
  ///   - configuration: how to run them.
  ///   - registry: the strategies a configuration can name.
  ///   - stop: a request to stop the run early.
  ///   - reporters: where the events go.
  public convenience init(suites: [Suite], configuration: Configuration = Configuration(),
                          registry: WaiterRegistry = .builtIn, stop: StopRequest? = nil, reporters: [any Reporter]) {
    self.init(suites: suites, configuration: configuration, registry: registry, executor: InProcessExecutor(),
              stop: stop, reporters: reporters)
  }

  /// Creates a runner whose tests run one at a time with `executor`.
  /// - Parameters:
  ///   - suites: the suites.
  ///   - configuration: how to run them.
  ///   - registry: the strategies a configuration can name.
  ///   - executor: what runs each test.
  ///   - stop: a request to stop the run early.
  ///   - reporters: where the events go.
  @_spi(ForToolsIntegrationOnly)
  public convenience init(suites: [Suite], configuration: Configuration = Configuration(),
                          registry: WaiterRegistry = .builtIn, executor: any TestExecutor,
                          stop: StopRequest? = nil, reporters: [any Reporter]) {
    self.init(suites: suites, configuration: configuration, registry: registry, lanes: 1, makeExecutor: { executor },
              stop: stop, reporters: reporters)
  }

  /// Creates a runner that runs up to `lanes` entries (suites under a waiter), or tests of
  /// parallel suites, at a time, each lane with an executor `makeExecutor` makes.
  ///
  /// Lanes run side by side only when their executors run each test outside this process
  /// (``TestExecutor/isolatesTests``): tests of one process would share its main thread,
  /// its standard streams and its globals. With an executor that runs tests in this
  /// process, the run has one lane, on the thread that calls ``run()``, whatever `lanes` is.
  /// - Parameters:
  ///   - suites: the suites.
  ///   - configuration: how to run them.
  ///   - registry: the strategies a configuration can name.
  ///   - lanes: how many entries, or tests of parallel suites, may run at once (at least 1).
  ///   - makeExecutor: makes the executor of a lane.
  ///   - stop: a request to stop the run early.
  ///   - reporters: where the events go; they receive events from every lane, one at a time.
  @_spi(ForToolsIntegrationOnly)
  public init(suites: [Suite], configuration: Configuration = Configuration(),
              registry: WaiterRegistry = .builtIn, lanes: Int, makeExecutor: @escaping @Sendable () -> any TestExecutor,
              stop: StopRequest? = nil, reporters: [any Reporter]) {
    self.suites = Suite.uniquelyNamed(suites)
    self.configuration = configuration
    self.registry = registry
    self.lanes = max(1, lanes)
    self.makeExecutor = makeExecutor
    self.stop = stop
    self.reporters = reporters
  }

  /// The plan this runner walks.
  /// - Throws: ``RunnerError/unknownWaiter(_:known:)`` for a name not in the registry.
  @_spi(ForToolsIntegrationOnly)
  public func plan() throws -> Plan {
    try Plan(suites: suites, configuration: configuration, registry: registry)
  }

  /// Runs every selected test and returns the counts.
  /// - Throws: ``RunnerError`` for a bad configuration or a selection with no test (before
  ///   any test runs), or the error of a reporter that failed (every reporter is finished
  ///   first, so a failing reporter loses no other report).
  @discardableResult
  public func run() throws -> Summary {
    _ = RunDirectory.start
    let plan = try plan()
    try configuration.checkSelection(in: suites)
    let channel = ReportingChannel(reporters)
    let summary: Summary
    do {
      summary = try walk(plan, channel: channel)
    } catch {
      try? channel.finish()
      throw error
    }
    try channel.finish()
    return summary
  }

  private func walk(_ plan: Plan, channel: ReportingChannel) throws -> Summary {
    let events = channel.sink
    let progress = RunProgress()
    events(.runStarted(RunInfo(seed: configuration.shuffleSeed, jitterSeed: configuration.jitter?.seed,
                               repetitions: plan.repetitions, waiters: plan.waiterNames,
                               shard: configuration.sharding?.shard)))
    let first = makeExecutor()
    let lanes = first.isolatesTests ? lanes : 1
    let work = WorkQueue(plan: plan, splitsParallelEntries: lanes > 1, progress: progress, events: events, stop: stop)
    let lane = Lane(plan: plan, work: work, progress: progress, channel: channel)
    if lanes == 1 {
      try walk(lane, executor: first)
    } else {
      let errors = Mutex<[any Error]>([])
      let group = DispatchGroup()
      for index in 0..<min(lanes, work.mostAtOnce) {
        group.enter()
        let executor = index == 0 ? first : makeExecutor()
        Thread.detachNewThread { [self] in
          do { try walk(lane, executor: executor) } catch { errors.withLock { $0.append(error) } }
          group.leave()
        }
      }
      group.wait()
      if let error = errors.withLock({ $0.first }) { throw error }
    }
    work.endStoppedEntries()
    let (total, duration) = progress.total
    events(.runEnded(total, duration: duration))
    try channel.checkReporters()
    return total
  }

  /// What every lane of a run shares.
  private struct Lane: Sendable {
    let plan: Plan
    let work: WorkQueue
    let progress: RunProgress
    let channel: ReportingChannel
  }

  /// One lane: takes work until none is left or the run stops, and runs it with the lane's
  /// executor: an entry whole, or one test of an entry whose tests run in parallel.
  private func walk(_ lane: Lane, executor: any TestExecutor) throws {
    defer { executor.finish() }
    let events = lane.channel.sink
    let onHung = { @Sendable (hung: TestResult, suite: SuiteRun) -> Never in
      self.endRun(after: hung, in: suite, progress: lane.progress, channel: lane.channel)
    }
    while let work = lane.work.next(starting: { start($0, executor: executor, events: events, onHung: onHung) }) {
      try lane.channel.checkReporters()
      switch work {
      case .entry(let entry):
        try run(entry, in: lane, executor: executor, onHung: onHung)
      case .step(let step, let started, let prepare):
        executor.prepare(prepare)
        let result = finish(step, started: started, executor: executor, events: events, onHung: onHung)
        lane.work.finished(step, with: result)
      }
    }
  }

  /// Runs one entry (already announced) with `executor`, repetition by repetition, and ends
  /// it with `suiteEnded`.
  private func run(_ entry: Plan.Entry, in lane: Lane, executor: any TestExecutor,
                   onHung: @escaping @Sendable (TestResult, SuiteRun) -> Never) throws {
    let events = lane.channel.sink
    repetitions: for repetition in 1...lane.plan.repetitions {
      var failed = false
      let steps = lane.plan.steps(of: entry, repetition: repetition)
      executor.prepare(steps)
      for step in steps {
        guard stop?.signal == nil else { break repetitions }
        try lane.channel.checkReporters()
        let started = start(step, executor: executor, events: events, onHung: onHung)
        let result = finish(step, started: started, executor: executor, events: events, onHung: onHung)
        lane.progress.count(result, in: entry.suiteRun)
        failed = failed || result.verdict.isFailure
      }
      if failed && configuration.untilFailure { break }
    }
    let (summary, duration) = lane.progress.end(entry.suiteRun)
    events(.suiteEnded(entry.suiteRun, summary, duration: duration))
  }

  /// A step as it starts: skipped (reported whole, none of its code runs), or its first
  /// attempt announced by its relay.
  enum StartedStep: Sendable {
    /// The step was skipped and reported with this result.
    case skipped(TestResult)
    /// The step's first attempt was announced by this relay and runs next.
    case running(AttemptRelay)
  }

  /// Starts a step: a skipped test is reported here, without running any of its code;
  /// otherwise its first attempt is announced (`testStarted`) by the relay that owns it.
  private func start(_ step: Step, executor: any TestExecutor, events: EventSink,
                     onHung: @escaping @Sendable (TestResult, SuiteRun) -> Never) -> StartedStep {
    if let reason = step.test.skipReason {
      return .skipped(AttemptRelay.skip(step, reason: reason, events: events))
    }
    let relay = relay(of: step, executor: executor, events: events, onHung: onHung)
    relay.begin()
    return .running(relay)
  }

  /// Runs a started step and returns its result: each attempt is started, judged and ended
  /// by its relay (the executor only runs it), and a failing attempt is run again while
  /// retries are left.
  private func finish(_ step: Step, started: StartedStep, executor: any TestExecutor, events: EventSink,
                      onHung: @escaping @Sendable (TestResult, SuiteRun) -> Never) -> TestResult {
    var relay: AttemptRelay
    switch started {
    case .skipped(let result): return result
    case .running(let first): relay = first
    }
    var attempt = step
    while true {
      let result = relay.end(executor.run(attempt, events: relay.sink))
      guard result.willRetry, let retry = attempt.retry else { return result }
      attempt = retry
      relay = self.relay(of: attempt, executor: executor, events: events, onHung: onHung)
      relay.begin()
    }
  }

  /// The relay that owns one attempt.
  private func relay(of attempt: Step, executor: any TestExecutor, events: EventSink,
                     onHung: @escaping @Sendable (TestResult, SuiteRun) -> Never) -> AttemptRelay {
    let watch = AttemptRelay.Watch(
      slow: configuration.slowThreshold,
      hangLimit: executor.stopsHungTests ? nil : attempt.timeLimit,
      grace: configuration.hungTestGracePeriod)
    let suite = attempt.id.suiteRun
    return AttemptRelay(step: attempt, events: events, retryable: attempt.retry != nil, stop: stop, watch: watch,
                        replaying: configuration.replay?.trace, onHung: { onHung($0, suite) })
  }

  /// Ends the run from the watch of a test that hung past its time limit and grace period
  /// (``Configuration/hungTestGracePeriod``): every report is finished with what ran, the
  /// hung test counted as an error, and the process exits with status 1.
  private func endRun(after hung: TestResult, in suite: SuiteRun, progress: RunProgress,
                      channel: ReportingChannel) -> Never {
    let events = channel.sink
    progress.count(hung, in: suite)
    for (suite, summary, duration) in progress.endAll() {
      events(.suiteEnded(suite, summary, duration: duration))
    }
    let (total, duration) = progress.total
    events(.runEnded(total, duration: duration))
    try? channel.finish()
    exit(1)
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

  /// The message a user reads.
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
package struct SeededRandomGenerator: RandomNumberGenerator, Sendable {
  private var state: UInt64

  /// Creates a generator whose sequence is fixed by `seed`.
  package init(seed: UInt64) { state = seed }

  /// The next number of the sequence.
  package mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

/// The counts of a run as it goes, by open entry, readable from every lane and from the
/// watch of a hung test that ends the run from another thread.
final class RunProgress: Sendable {
  private struct State {
    let start = ContinuousClock().now
    var total = Summary()
    /// The entries running now, in the order they started.
    var open: [(suite: SuiteRun, start: ContinuousClock.Instant, summary: Summary)] = []
  }

  private let state = Mutex(State())

  func start(_ suite: SuiteRun) {
    state.withLock { $0.open.append((suite, ContinuousClock().now, Summary())) }
  }

  func count(_ result: TestResult, in suite: SuiteRun) {
    state.withLock { state in
      if let index = state.open.firstIndex(where: { $0.suite == suite }) { state.open[index].summary.count(result) }
      state.total.count(result)
    }
  }

  /// Closes an entry: its counts and duration.
  func end(_ suite: SuiteRun) -> (Summary, duration: Double) {
    state.withLock { state in
      guard let index = state.open.firstIndex(where: { $0.suite == suite }) else { return (Summary(), 0) }
      let entry = state.open.remove(at: index)
      return (entry.summary, entry.start.duration(to: .now).timeInterval)
    }
  }

  /// Closes every open entry, in the order they started.
  func endAll() -> [(SuiteRun, Summary, duration: Double)] {
    state.withLock { state in
      defer { state.open = [] }
      return state.open.map { ($0.suite, $0.summary, $0.start.duration(to: .now).timeInterval) }
    }
  }

  /// Every test counted, and how long the run has taken.
  var total: (Summary, duration: Double) {
    state.withLock { ($0.total, $0.start.duration(to: .now).timeInterval) }
  }
}
