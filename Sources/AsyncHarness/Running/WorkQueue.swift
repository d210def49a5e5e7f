/// Hands a plan's work out in plan order, and does nothing else: a plain value with no lock,
/// no thread and no event, which the run's owner (``RunLife``) keeps under its lock.
///
/// Each entry (a suite under one waiter) is handed out whole, or, for an entry whose tests
/// run in parallel (``Suite/runsTestsInParallel(byDefault:)``) when the run has several
/// lanes, test by test to whichever lane asks next. Taking work says which entries it opened
/// (their first work was taken), and a parallel entry's last test ending says that the entry
/// closed, so the owner can announce and end suites. With `--until-failure`, a parallel
/// entry's next repetition is handed out only once every test of the last one has ended,
/// none failing: until then a lane with nothing else to take waits.
///
/// Another package's tests run over several lanes with the last run's durations known are
/// handed out in chains of pieces instead (``LaneBalance``), longest first: a piece is an
/// entry, or some tests of an XCTest class, and a lane that takes a chain takes its pieces
/// one after another. A class cut in pieces opens with its first piece taken and closes with
/// its last piece ended.
struct WorkQueue: Sendable {
  /// A piece of work for a lane.
  enum Work: Sendable {
    /// An entry, run whole and in order by one lane.
    case entry(Runner.Plan.Entry)
    /// One test of an entry whose tests run in parallel, with the tests to prepare the
    /// executor for: that one.
    case test(Runner.PlannedTest, prepare: Runner.Plan.PlannedTests)
  }

  /// What a lane that asks for work gets.
  enum Next: Sendable {
    /// This work.
    case work(Work)
    /// Nothing now: a parallel entry's next repetition waits for its running tests.
    case wait
    /// Nothing ever: every entry was handed out.
    case done
  }

  /// An entry whose tests are being handed out one by one.
  private struct ParallelEntry: Sendable {
    let entry: Runner.Plan.Entry
    var repetition = 1
    var plannedTests: Runner.Plan.PlannedTests
    var next = 0
    var running = 0
    var failed = false

    var hasTestsLeft: Bool { next < plannedTests.endIndex }
  }

  private let plan: Runner.Plan
  private let splitsParallelEntries: Bool
  private let sideBySide: Bool
  /// How many lanes take work: a lane running tests side by side takes at most its share.
  private let lanes: Int
  /// The next entry of the plan no lane has taken.
  private var nextEntry = 0
  /// The parallel entries opened and not closed, in plan order.
  private var parallel: [ParallelEntry] = []
  /// The chains of pieces no lane has taken yet, in the order they are handed out, when the
  /// plan's entries are handed out so (``LaneBalance/entries(of:lanes:)``); `nil` otherwise.
  private var chains: [[Runner.Plan.Entry]]?
  /// The pieces of the chain each lane took that it has not taken yet, by lane.
  private var chainsTaken: [Int: [Runner.Plan.Entry]] = [:]
  /// Each entry cut in several pieces whose pieces have not all ended, with how many have not.
  private var piecesLeft: [SuiteRun: (entry: Runner.Plan.Entry, left: Int)] = [:]
  /// The entries a piece of which was taken.
  private var piecesOpened: Set<SuiteRun> = []

  /// - Parameters:
  ///   - splitsParallelEntries: whether the tests of a parallel entry are handed out one by
  ///     one (several lanes); with one lane every entry runs whole.
  ///   - sideBySide: whether lanes run `async` tests side by side: a parallel entry with such
  ///     a test is then handed out one by one even to one lane.
  ///   - lanes: how many lanes take work.
  init(plan: Runner.Plan, splitsParallelEntries: Bool, sideBySide: Bool = false, lanes: Int = 1) {
    self.plan = plan
    self.splitsParallelEntries = splitsParallelEntries
    self.sideBySide = sideBySide
    self.lanes = max(1, lanes)
    chains = LaneBalance.entries(of: plan, lanes: lanes)
    for piece in (chains ?? []).joined() {
      piecesLeft[piece.suiteRun, default: (piece, 0)].left += 1
    }
    piecesLeft = piecesLeft.filter { $0.value.left > 1 }
  }

  /// The entries of the plan that no lane has taken yet, in the order they are handed out
  /// (with one lane: the pieces, when the entries are handed out in chains of pieces).
  var untakenEntries: ArraySlice<Runner.Plan.Entry> {
    chains.map { ArraySlice(Array(chainsTaken.values.joined()) + Array($0.joined())) } ?? plan.entries[nextEntry...]
  }

  /// The most pieces of work that can run at once: lanes beyond it would have nothing to do.
  var mostAtOnce: Int {
    if let chains { return chains.count }
    return plan.entries.contains(where: splits) ? Int.max : plan.entries.count
  }

  private func splits(_ entry: Runner.Plan.Entry) -> Bool {
    guard entry.group.runsTestsInParallel(byDefault: plan.configuration.parallelTests) else { return false }
    return splitsParallelEntries
      || sideBySide && entry.tests.contains { Runner.PlannedTest.runsSideBySide($0, under: entry.host) }
  }

  /// Takes the next work, and says which entries taking it opened, in plan order. With
  /// `only`, only a test it accepts is taken, for a lane already `holding` tests of the entry
  /// side by side, and only while that is less than the lane's share of the entry's tests
  /// not ended (so that one lane does not take them all before the others start): when the
  /// next work is anything else, or the share is taken, nothing is (``Next/wait``), and it
  /// stays next. `lane` takes the rest of a chain it took first (``LaneBalance``).
  mutating func take(only accepts: ((Runner.PlannedTest) -> Bool)? = nil, holding: Int = 0,
                     lane: Int = 1) -> (next: Next, opened: [Runner.Plan.Entry]) {
    var opened: [Runner.Plan.Entry] = []
    if chains != nil { return takePiece(only: accepts, lane: lane) }
    if let planned = nextTest(accepts, holding: holding) { return (.work(planned), opened) }
    if accepts != nil && parallel.contains(where: \.hasTestsLeft) { return (.wait, opened) }
    while nextEntry < plan.entries.count {
      let entry = plan.entries[nextEntry]
      if accepts != nil && !splits(entry) { return (.wait, opened) }
      nextEntry += 1
      opened.append(entry)
      guard splits(entry) else { return (.work(.entry(entry)), opened) }
      parallel.append(ParallelEntry(entry: entry, plannedTests: plan.plannedTests(of: entry, repetition: 1)))
      if let planned = nextTest(accepts, holding: holding) { return (.work(planned), opened) }
    }
    return (parallel.isEmpty ? .done : .wait, opened)
  }

  /// The next piece of the chain `lane` took, else the first of the next chain, which the
  /// lane takes; it opens its entry when it is the first of it taken. None for a lane running
  /// tests side by side (`accepts`), which another package's tests never are.
  private mutating func takePiece(only accepts: ((Runner.PlannedTest) -> Bool)?,
                                  lane: Int) -> (next: Next, opened: [Runner.Plan.Entry]) {
    guard accepts == nil else { return (.wait, []) }
    var chain = chainsTaken[lane] ?? []
    if chain.isEmpty, let next = chains?.first {
      chains?.removeFirst()
      chain = next
    }
    guard !chain.isEmpty else { return (.done, []) }
    let piece = chain.removeFirst()
    chainsTaken[lane] = chain
    return (.work(.entry(piece)), piecesOpened.insert(piece.suiteRun).inserted ? [piece] : [])
  }

  /// Notes that a lane ran `entry` (a whole entry, or a piece of one) to its end; returns
  /// whether that ended its entry (it was the entry's last piece to end).
  mutating func ended(_ entry: Runner.Plan.Entry) -> Bool {
    guard var split = piecesLeft[entry.suiteRun] else { return true }
    split.left -= 1
    piecesLeft[entry.suiteRun] = split.left == 0 ? nil : split
    return split.left == 0
  }

  /// The next test of the first parallel entry that has one to hand out now, unless
  /// `accepts` refuses it or a lane `holding` that many has its share.
  private mutating func nextTest(_ accepts: ((Runner.PlannedTest) -> Bool)?, holding: Int) -> Work? {
    for index in parallel.indices {
      advance(&parallel[index])
      guard parallel[index].hasTestsLeft else { continue }
      if let accepts, !accepts(parallel[index].plannedTests[parallel[index].next]) { return nil }
      let notEnded = parallel[index].plannedTests.endIndex - parallel[index].next + parallel[index].running
      if accepts != nil && holding >= (notEnded + lanes - 1) / lanes { return nil }
      let next = parallel[index].next
      parallel[index].next += 1
      parallel[index].running += 1
      return .test(parallel[index].plannedTests[next], prepare: parallel[index].plannedTests[next..<(next + 1)])
    }
    return nil
  }

  /// Moves a parallel entry whose repetition is handed out to its next repetition, when
  /// there is one and it may start.
  private func advance(_ entry: inout ParallelEntry) {
    guard !entry.hasTestsLeft, entry.repetition < plan.repetitions else { return }
    if plan.configuration.untilFailure && (entry.running > 0 || entry.failed) { return }
    entry.repetition += 1
    entry.plannedTests = plan.plannedTests(of: entry.entry, repetition: entry.repetition)
    entry.next = 0
  }

  /// Notes that a test handed out alone ended; returns its entry when that closed it (its
  /// last test ended, or none will start because the run `stopped`).
  mutating func finished(_ planned: Runner.PlannedTest, failed: Bool, stopped: Bool) -> Runner.Plan.Entry? {
    guard let index = parallel.firstIndex(where: { $0.entry.suiteRun == planned.id.suiteRun }) else { return nil }
    parallel[index].running -= 1
    parallel[index].failed = parallel[index].failed || failed
    advance(&parallel[index])
    let entry = parallel[index]
    guard entry.running == 0, !entry.hasTestsLeft || stopped else { return nil }
    parallel.remove(at: index)
    return entry.entry
  }

  /// Closes the parallel entries a stopped run left open (none of their tests runs any
  /// more), in plan order, then the entries cut in pieces whose pieces did not all end.
  mutating func closeOpenEntries() -> [Runner.Plan.Entry] {
    defer {
      parallel = []
      piecesLeft = [:]
    }
    return parallel.map(\.entry) + piecesLeft.values.map(\.entry).sorted { $0.groupIndex < $1.groupIndex }
  }
}
