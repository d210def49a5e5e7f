import AsyncHarnessShared

extension Runner {
  /// One test to run: its group and the test (``Catalog``), what it runs under (a waiter
  /// strategy, or its own testing library), its identity (with the repetition and attempt)
  /// and the limits it runs under. Executors run tests.
  @_spi(ForToolsIntegrationOnly) public struct PlannedTest: Sendable {
    /// Where a test is: its group's place among the catalog's groups (a suite's among the
    /// suites the run was given), and its place among that group's tests, both counted from
    /// 0. A worker process builds the same suites and finds the test there, whatever its name.
    @_spi(ForToolsIntegrationOnly) public struct Position: Sendable, Hashable {
      /// The suite's place among the run's suites.
      @_spi(ForToolsIntegrationOnly) public var suite: Int
      /// The test's place among its suite's tests.
      @_spi(ForToolsIntegrationOnly) public var test: Int
    }

    /// The group the test belongs to.
    @_spi(ForToolsIntegrationOnly) public let group: Catalog.Group
    /// The test.
    @_spi(ForToolsIntegrationOnly) public let test: Catalog.Item
    /// What the test runs under: a waiter strategy, or its own testing library.
    @_spi(ForToolsIntegrationOnly) public let host: Catalog.Host
    /// The test's identity in events and reports.
    @_spi(ForToolsIntegrationOnly) public let id: TestID
    /// Where the test is among the run's suites.
    @_spi(ForToolsIntegrationOnly) public let position: Position
    /// The timeout of waits that pass none.
    @_spi(ForToolsIntegrationOnly) public let defaultTimeout: Duration
    /// The longest the test may run, or `nil` for no limit.
    @_spi(ForToolsIntegrationOnly) public let timeLimit: Duration?
    /// The schedule the test's work runs in, under a strategy that orders work itself
    /// (``ScheduledWaiter``); `nil` otherwise.
    @_spi(ForToolsIntegrationOnly) public let schedule: Schedule?
    /// The delays the test's real queues add to each item (`--jitter`), or `nil` for none.
    @_spi(ForToolsIntegrationOnly) public let jitter: Jitter?
    /// How many times the test runs again after a failing attempt (0 under a schedule).
    @_spi(ForToolsIntegrationOnly) public let retries: Int
    /// Whether the test's waits are reported as they end, and its schedule's steps as they are
    /// taken (``Configuration/reportsWaits``).
    @_spi(ForToolsIntegrationOnly) public var reportsWaits = false

    /// The next attempt of this test, when a failing attempt can still be retried.
    @_spi(ForToolsIntegrationOnly) public var retry: PlannedTest? {
      guard id.attempt <= retries else { return nil }
      var id = id
      id.attempt += 1
      return PlannedTest(group: group, test: test, host: host, id: id, position: position, defaultTimeout: defaultTimeout,
                  timeLimit: timeLimit, schedule: schedule, jitter: jitter, retries: retries, reportsWaits: reportsWaits)
    }

    /// The harness test the test runs, with its suite and waiter strategy; `nil` for a test
    /// of another package, which only its own bundle runs.
    var harness: (suite: Suite, test: Test, waiter: any Waiter)? {
      guard case .suite(let suite) = group.source, case .test(let test) = test.source, case .waiter(let waiter) = host
      else { return nil }
      return (suite, test, waiter)
    }

    /// The test of another package the test runs, `nil` for a harness test.
    var existing: ExistingTest? {
      guard case .existing(let test) = test.source else { return nil }
      return test
    }
  }

  /// The ordered tests of a run, built from a ``Catalog`` and a ``Configuration`` in one
  /// place: which groups run under which waiters (or libraries), which of their tests
  /// (filtered, sharded, shuffled) and how often.
  /// The runner walks it entry by entry, repetition by repetition.
  @_spi(ForToolsIntegrationOnly) public struct Plan: Sendable {
    /// A group run under one waiter strategy (or its library): the unit the runner announces
    /// with `suiteStarted` and `suiteEnded`.
    @_spi(ForToolsIntegrationOnly) public struct Entry: Sendable {
      /// The group.
      @_spi(ForToolsIntegrationOnly) public let group: Catalog.Group
      /// What its tests run under.
      @_spi(ForToolsIntegrationOnly) public let host: Catalog.Host
      /// The selected tests, in the order they run.
      @_spi(ForToolsIntegrationOnly) public let tests: [Catalog.Item]
      /// The group's place among the catalog's groups.
      let groupIndex: Int
      /// The entries a lane runs right after this one, in order, which one worker of a test
      /// bundle may run with it (a chain of ``LaneBalance``); empty otherwise.
      var chain: [Entry] = []

      /// The group and what it runs under, as events name them.
      @_spi(ForToolsIntegrationOnly)
      public var suiteRun: SuiteRun { SuiteRun(suite: group.name, host: host.name) }
    }

    /// The entries, in run order: groups in catalog order, each under every selected
    /// waiter. Groups with no selected test are left out.
    @_spi(ForToolsIntegrationOnly) public let entries: [Entry]
    /// How the plan was built.
    @_spi(ForToolsIntegrationOnly) public let configuration: Configuration

    /// Builds the plan of `catalog` under `configuration`.
    /// - Throws: ``RunnerError/unknownWaiter(_:known:)`` for a waiter name not in
    ///   `registry`.
    @_spi(ForToolsIntegrationOnly)
    public init(catalog: Catalog, configuration: Configuration, registry: WaiterRegistry) throws {
      self.configuration = configuration
      var entries: [Entry] = []
      for (groupIndex, (group, selected)) in configuration.selection(of: catalog).enumerated() {
        let hosts = try group.hosts(configuration: configuration, registry: registry)
        let tests = Self.ordered(selected, seed: configuration.shuffleSeed)
        guard !tests.isEmpty else { continue }
        entries += hosts.map { Entry(group: group, host: $0, tests: tests, groupIndex: groupIndex) }
      }
      self.entries = entries
    }

    /// Builds the plan of harness suites under `configuration` (``Catalog/init(suites:)``).
    /// - Throws: ``RunnerError/unknownWaiter(_:known:)`` for a waiter name not in
    ///   `registry`.
    @_spi(ForToolsIntegrationOnly)
    public init(suites: [Suite], configuration: Configuration, registry: WaiterRegistry) throws {
      try self.init(catalog: Catalog(suites: suites), configuration: configuration, registry: registry)
    }

    /// How many times each test runs.
    @_spi(ForToolsIntegrationOnly) public var repetitions: Int { max(1, configuration.repetitions) }

    /// The names of the waiter strategies (or libraries) the plan uses, each once, in
    /// first-use order.
    @_spi(ForToolsIntegrationOnly) public var waiterNames: [String] {
      var names: [String] = []
      for entry in entries where !names.contains(entry.host.name) { names.append(entry.host.name) }
      return names
    }

    /// The tests of one entry's repetition, in run order: each test once, or under each
    /// of its schedules (`Configuration.schedules(under:)`). Each step is made as
    /// it is read, so a suite of a million tests costs no more than its tests.
    @_spi(ForToolsIntegrationOnly) public func plannedTests(of entry: Entry, repetition: Int) -> PlannedTests {
      PlannedTests.all(of: entry, repetition: repetition, configuration: configuration)
    }

    /// The tests of one entry's repetition, or a part of them: a collection whose tests are
    /// made as they are read.
    @_spi(ForToolsIntegrationOnly) public struct PlannedTests: RandomAccessCollection, Sendable {
      let configuration: Configuration
      let entry: Entry
      let repetition: Int
      /// The schedules each test runs under, or `nil` for an unscheduled strategy.
      let schedules: [Schedule]?
      let range: Range<Int>

      /// The tests of one entry's repetition under `configuration` (``Plan/plannedTests(of:repetition:)``).
      static func all(of entry: Entry, repetition: Int, configuration: Configuration) -> PlannedTests {
        let schedules = configuration.schedules(under: entry.host)
        return PlannedTests(configuration: configuration, entry: entry, repetition: repetition, schedules: schedules,
                            range: 0..<(entry.tests.count * (schedules?.count ?? 1)))
      }

      /// The first test's index.
      @_spi(ForToolsIntegrationOnly) public var startIndex: Int { range.lowerBound }
      /// The index past the last test.
      @_spi(ForToolsIntegrationOnly) public var endIndex: Int { range.upperBound }

      /// The planned test at `index`: the test at `index` divided by the schedules per test,
      /// under the schedule the remainder names.
      @_spi(ForToolsIntegrationOnly) public subscript(index: Int) -> PlannedTest {
        precondition(range.contains(index), "planned test index \(index) out of \(range)")
        let perTest = schedules?.count ?? 1
        let test = entry.tests[index / perTest]
        var id = TestID(suite: entry.group.name, name: test.name, host: entry.host.name, repetition: repetition)
        let schedule = schedules?[index % perTest]
        if let schedule { id = Configuration.id(id, under: schedule) }
        return PlannedTest(group: entry.group, test: test, host: entry.host, id: id,
                    position: PlannedTest.Position(suite: entry.groupIndex, test: test.index),
                    defaultTimeout: configuration.defaultTimeout, timeLimit: configuration.timeLimit, schedule: schedule,
                    jitter: configuration.jitter, retries: schedule == nil ? test.retries ?? configuration.retries : 0,
                    reportsWaits: configuration.reportsWaits)
      }

      /// The tests at `bounds`.
      @_spi(ForToolsIntegrationOnly) public subscript(bounds: Range<Int>) -> PlannedTests {
        precondition(range.lowerBound <= bounds.lowerBound && bounds.upperBound <= range.upperBound,
                     "steps \(bounds) out of \(range)")
        return PlannedTests(configuration: configuration, entry: entry, repetition: repetition, schedules: schedules, range: bounds)
      }
    }

    private static func ordered(_ tests: [Catalog.Item], seed: UInt64?) -> [Catalog.Item] {
      guard let seed else { return tests }
      var generator = SeededRandomGenerator(seed: seed)
      return tests.shuffled(using: &generator)
    }
  }
}
