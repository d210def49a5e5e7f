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
  public var suites: [Suite] { catalog.suites }
  /// The tests to run: the suites' (``Catalog/init(suites:)``), or another package's.
  @_spi(ForToolsIntegrationOnly) public let catalog: Catalog
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
  public convenience init(suites: [Suite], configuration: Configuration = Configuration(),
                          registry: WaiterRegistry = .builtIn, lanes: Int,
                          makeExecutor: @escaping @Sendable () -> any TestExecutor,
                          stop: StopRequest? = nil, reporters: [any Reporter]) {
    self.init(catalog: Catalog(suites: suites), configuration: configuration, registry: registry, lanes: lanes,
              makeExecutor: makeExecutor, stop: stop, reporters: reporters)
  }

  /// Creates a runner of the tests of `catalog` (harness suites' or another package's), up to
  /// `lanes` entries, or tests of parallel suites, at a time, each lane with an executor
  /// `makeExecutor` makes; as ``init(suites:configuration:registry:lanes:makeExecutor:stop:reporters:)``.
  @_spi(ForToolsIntegrationOnly)
  public init(catalog: Catalog, configuration: Configuration = Configuration(),
              registry: WaiterRegistry = .builtIn, lanes: Int, makeExecutor: @escaping @Sendable () -> any TestExecutor,
              stop: StopRequest? = nil, reporters: [any Reporter]) {
    self.catalog = catalog
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
    try Plan(catalog: catalog, configuration: configuration, registry: registry)
  }

  /// Runs every selected test and returns the counts.
  /// - Throws: ``RunnerError`` for a bad configuration or a selection with no test (before
  ///   any test runs), or the error of a reporter that failed (every reporter is finished
  ///   first, so a failing reporter loses no other report).
  @discardableResult
  public func run() throws -> Summary {
    _ = RunDirectory.start
    let plan = try plan()
    try configuration.checkSelection(in: catalog)
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
    let first = makeExecutor()
    let lanes = first.isolatesTests ? lanes : 1
    let run = RunLife(queue: WorkQueue(plan: plan, splitsParallelEntries: lanes > 1, sideBySide: first.sideBySideWidth > 1,
                                       lanes: lanes),
                      channel: channel, stop: stop)
    run.begin(RunInfo(seed: configuration.shuffleSeed, jitterSeed: configuration.jitter?.seed,
                      repetitions: plan.repetitions, waiters: plan.waiterNames, shard: configuration.sharding?.shard))
    for failure in catalog.listingFailures { channel.sink(.outsideFailure(failure)) }
    let tests = TestLife(rules: TestLife.Rules(slow: configuration.slowThreshold, watchesHangs: !first.stopsHungTests,
                                               hangGrace: configuration.hungTestGracePeriod, stop: stop,
                                               replaying: configuration.replay?.trace,
                                               hung: { run.testHung($0, of: $1) },
                                               deliversBeforeGoingOn: !first.isolatesTests),
                         events: channel.sink)
    let width = min(lanes, run.mostAtOnce)
    let shared = Shared(plan: plan, run: run, tests: tests, channel: channel, stop: stop, isAlone: width <= 1)
    if width <= 1 {
      var lane = Lane(number: 1, executor: first, shared: shared)
      try lane.run()
    } else {
      let errors = Mutex<[any Error]>([])
      let group = DispatchGroup()
      for index in 0..<width {
        group.enter()
        let executor = index == 0 ? first : makeExecutor()
        Thread.detachNewThread {
          var lane = Lane(number: index + 1, executor: executor, shared: shared)
          do { try lane.run() } catch { errors.withLock { $0.append(error) } }
          group.leave()
        }
      }
      group.wait()
      if let error = errors.withLock({ $0.first }) { throw error }
    }
    let total = run.end()
    try channel.checkReporters()
    return total
  }

  /// What every lane of a run shares: the plan, the run's owner, the tests' owner, the
  /// reporting channel and the request to stop.
  struct Shared: Sendable {
    let plan: Plan
    let run: RunLife
    let tests: TestLife
    let channel: ReportingChannel
    let stop: StopRequest?
    /// Whether this is the run's only lane, which therefore runs every entry in plan order.
    let isAlone: Bool
  }
}

/// Why a run could not start.
public enum RunnerError: Error, Equatable, CustomStringConvertible {
  /// `--waiter` named a strategy that is not registered.
  case unknownWaiter(String, known: [String])
  /// The suites, filters and skips select no test, and ``Configuration/allowsEmptySelection``
  /// is off: a run that tests nothing must not look green.
  case emptySelection(filters: [String], skips: [String] = [])
  /// `--schedule` replays a schedule made for a test that none of the selected tests is.
  case noTestForSchedule(String)

  /// The flags that chose the tests, as a command line spells them: `--filter "a", --skip "b"`.
  static func selection(filters: [String], skips: [String]) -> String {
    (filters.map { "--filter \"\($0)\"" } + skips.map { "--skip \"\($0)\"" }).joined(separator: ", ")
  }

  /// The message a user reads.
  public var description: String {
    switch self {
    case .unknownWaiter(let name, let known):
      "unknown waiter \"\(name)\"; known strategies: \(known.joined(separator: ", ")), or all"
    case .noTestForSchedule(let token):
      "no selected test matches --schedule \(token): a replay token reruns the test it was printed for"
    case .emptySelection(let filters, let skips) where filters.isEmpty && skips.isEmpty:
      "no test to run: the suites contain no test (--allow-empty allows an empty run)"
    case .emptySelection(let filters, let skips):
      "no test matches \(Self.selection(filters: filters, skips: skips)) (--list shows the tests; --allow-empty "
        + "allows an empty run)"
    }
  }
}
