/// How a run is carried out: which tests, under which waiters, how often, in which order.
public struct Configuration: Sendable {
  /// Which waiter strategies suites run under.
  public enum WaiterSelection: Sendable, Hashable {
    /// Each suite's own default.
    case suiteDefault
    /// The registered strategy with this name, for every suite.
    case named(String)
    /// Every registered strategy, for every suite (the matrix).
    case all
  }

  /// Which waiter strategies suites run under.
  public var waiters: WaiterSelection = .suiteDefault
  /// Keeps only tests whose `Suite/test` path contains one of these strings, or that carry
  /// a tag given as `tag:NAME`. Empty keeps every test. Another package's tests (`harness
  /// test`) read them as `swift test --filter` does: regular expressions their IDs contain.
  public var filters: [String] = [] {
    didSet { swiftTestPatterns = SwiftTestPatterns(filters: filters, skips: skips) }
  }
  /// Leaves out the tests these would keep as ``filters`` (`--skip`).
  public var skips: [String] = [] {
    didSet { swiftTestPatterns = SwiftTestPatterns(filters: filters, skips: skips) }
  }
  /// ``filters`` and ``skips``, compiled, for another package's tests.
  private var swiftTestPatterns = SwiftTestPatterns(filters: [], skips: [])
  /// How many times each test runs.
  public var repetitions = 1
  /// Stop repeating at the first repetition with a failure (with a large ``repetitions``).
  public var untilFailure = false
  /// How many times a test runs again after an attempt that fails or errors (`--retries N`),
  /// unless its ``TestTrait/retries(_:)`` trait says otherwise. A test that passes on a retry
  /// is ``Verdict/flaky``. Tests under a schedule (``ScheduledWaiter``) are never retried:
  /// the same schedule gives the same result.
  public var retries = 0
  /// Whether the tests of every suite not marked ``SuiteTrait/serialized`` may run in
  /// parallel, as if it were marked ``SuiteTrait/parallel`` (`--parallel`): with several
  /// lanes (`--workers N`), its tests spread over them.
  public var parallelTests = false
  /// When set, tests within each suite run in an order shuffled with this seed.
  public var shuffleSeed: UInt64?
  /// The timeout of waits that pass none.
  public var defaultTimeout: Duration = .seconds(1)
  /// The longest a test may run, or `nil` for no limit. A wait still in progress at the
  /// limit ends with a time-limit issue; an `async` body still running is cancelled and
  /// left behind. A blocking body that hangs outside a wait cannot be interrupted in-process:
  /// it is named on standard error at the limit (see ``hungTestGracePeriod``); a worker
  /// process running it is stopped.
  public var timeLimit: Duration?

  /// Announce a test still running after this long, and again at each multiple of it, as
  /// slow (a `testSlow` event: `SLOW` on the console) (`--slow SECONDS`); `nil` for never.
  public var slowThreshold: Duration?
  /// For an executor that cannot stop a hung test (in-process): a test still running this
  /// long after its ``timeLimit``, outside any wait the harness can end, is recorded as a
  /// `timeLimitExceeded` error, every report is finished with what ran, and the process
  /// exits with status 1. `nil` (the default): the hung test is only named on standard
  /// error at its limit, and the run waits for it. Suites executables set it to 1 second
  /// with `--isolation none`; worker processes stop hung tests themselves.
  public var hungTestGracePeriod: Duration?

  // Schedules (issue 13): applied by `schedules(under:)` in Scheduling/Exploration.swift.
  /// Under a scheduling strategy (``ScheduledWaiter``), runs each test under this many
  /// schedules, seeds 1 through N, instead of once (`--explore N`).
  public var explorations: Int?
  /// The policy of the explored schedules (`--explore-policy`); `nil` keeps the scheduled
  /// waiter's own (``ScheduledWaiter/defaultSchedule``).
  public var explorationPolicy: SchedulePolicy?
  /// Replays exactly this schedule (`--schedule TOKEN`): only the tests it was made for are
  /// selected, and under a scheduling strategy they run under it.
  public var replay: ScheduleToken?

  // Jitter (issue 13): carried by each `Runner.PlannedTest` to the test's `RealQueues`.
  /// When set, the real queues tests get delay each item by a small random amount drawn
  /// from this jitter's seed (`--jitter SEED`, ``Jitter``).
  public var jitter: Jitter?
  /// Whether each wait a test makes is reported when it ends (a `waitEnded` event: what was
  /// awaited, how it ended, how long it took), for the trace's wait slices; `--trace` turns
  /// it on. Under the `scheduled` strategy it also reports each step the schedule takes (a
  /// `scheduleStep` event: what ran, at what virtual time), for the trace's step instants.
  /// Off by default: a wait or a step then sends nothing and costs nothing more.
  public var reportsWaits = false
  // Sharding (issue 10): applied by `selection(of:)` in Sharding/Configuration+Sharding.swift.
  /// When set, only these exact tests are selected (`--only ID`, `--only-from FILE`), and
  /// the filters narrow them further.
  public var only: Set<TestPath>?
  /// When set, only this shard's part of the selection runs (`--shard INDEX/COUNT`).
  public var sharding: Sharding?
  /// The durations the last run of these tests recorded, by which several lanes share another
  /// package's tests (``LaneBalance``); `nil` when there is no record.
  var lastDurations: RecordedDurations?

  /// Whether a selection with no test is a valid, empty run. Off by default: a filter that
  /// matches nothing is a mistake, and the run fails with ``RunnerError/emptySelection(filters:skips:)``
  /// instead of ending green with an empty report.
  public var allowsEmptySelection = false

  /// The default configuration: every test once, suites' own waiters, declaration order.
  public init() {}

  /// Checks that the selection holds at least one test of `catalog`, unless
  /// ``allowsEmptySelection`` is on; then a selection that filters left empty is returned, to
  /// be told as a warning.
  /// - Throws: ``RunnerError/emptySelection(filters:skips:)`` when it holds none.
  @discardableResult
  func checkSelection(in catalog: Catalog) throws -> RunnerError? {
    let selected = catalog.groups.contains { group in group.tests.contains { includes($0, in: group) } }
    guard !selected else { return nil }
    if allowsEmptySelection {
      return filters.isEmpty && skips.isEmpty ? nil : RunnerError.emptySelection(filters: filters, skips: skips)
    }
    if let replay { throw RunnerError.noTestForSchedule(replay.description) }
    throw RunnerError.emptySelection(filters: filters, skips: skips)
  }

  /// Whether the filters and skips (and the test a replayed schedule was made for) keep this test.
  func includes(_ test: Catalog.Item, in group: Catalog.Group) -> Bool {
    let path = "\(group.name)/\(test.name)"
    if let replay, !replay.matches(testAt: path) { return false }
    if let only, !only.contains(TestPath(suite: group.name, name: test.name)) { return false }
    if case .existing(let existing) = test.source { return swiftTestPatterns.selects(existing) }
    let matches = { (filter: String) in
      filter.hasPrefix("tag:") ? test.tags.contains(String(filter.dropFirst(4))) : Self.text(path, contains: filter)
    }
    return Self.keeps(filters: filters, skips: skips, matching: matches)
  }

  /// The rule of `--filter` and `--skip`, however a pattern matches: a test is kept when no
  /// filter is given or one matches it, and no skip matches it.
  static func keeps<Pattern>(filters: [Pattern], skips: [Pattern], matching matches: (Pattern) -> Bool) -> Bool {
    (filters.isEmpty || filters.contains(where: matches)) && !skips.contains(where: matches)
  }

  /// Whether `text` contains `part`, as `String.contains` says: compared byte by byte when
  /// both are ASCII without a carriage return (each byte is then a character), which is how
  /// a filter almost always reads; character by character otherwise. (The generic search
  /// cost more per test than running a trivial test in a worker did.)
  static func text(_ text: String, contains part: String) -> Bool {
    let plain = { (utf8: String.UTF8View) in !utf8.contains { $0 >= 0x80 || $0 == 0x0D } }
    guard plain(text.utf8), plain(part.utf8) else { return text.contains(part) }
    let (haystack, needle) = (Array(text.utf8), Array(part.utf8))
    guard !needle.isEmpty else { return true }
    guard needle.count <= haystack.count else { return false }
    return (0...(haystack.count - needle.count)).contains { start in
      haystack[start] == needle[0] && haystack[start..<(start + needle.count)].elementsEqual(needle)
    }
  }
}
