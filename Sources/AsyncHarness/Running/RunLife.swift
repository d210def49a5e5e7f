import Foundation
import Synchronization

/// The one owner of a run's life and of each suite's in it: it alone sends `runStarted`,
/// `suiteStarted`, `suiteEnded` and `runEnded`, counts every test's last result (and the
/// failures outside every test that the run's channel carried), and hands
/// the plan's work (``WorkQueue``) to the lanes.
///
/// Work is taken under the owner's lock, and the suites it opens are announced there, as is
/// the first attempt of a test handed out alone (through the ``TestLife`` it is given): every
/// reporter sees suites and tests start in plan order, whichever lane runs them. A test that
/// hung where its executor cannot stop it reaches the owner as a message
/// (``testHung(_:of:)``), and the owner ends the run on a thread of its own.
final class RunLife: Sendable {
  /// What a lane runs next.
  enum LaneWork: Sendable {
    /// An entry, already announced: the lane runs it whole, in order, and then ends it
    /// (``ended(_:)``).
    case entry(Runner.Plan.Entry)
    /// One test of an entry whose tests run in parallel, already started in plan order,
    /// with the tests to prepare the executor for: that one. The lane reports its result
    /// (``ended(_:with:)``).
    case test(Runner.PlannedTest, TestLife.Started, prepare: Runner.Plan.PlannedTests)
  }

  private struct OpenSuite {
    let suite: SuiteRun
    let start: ContinuousClock.Instant
    var summary = Summary()
  }

  private struct State {
    var queue: WorkQueue
    var total = Summary()
    /// The entries running now, in the order they started.
    var open: [OpenSuite] = []

    mutating func count(_ verdict: Verdict, in suite: SuiteRun) {
      if let index = open.firstIndex(where: { $0.suite == suite }) { open[index].summary.count(verdict) }
      total.count(verdict)
    }

    /// Closes an open suite: its `suiteEnded`, or `nil` when it is not open.
    mutating func close(_ suite: SuiteRun) -> Event.Kind? {
      guard let index = open.firstIndex(where: { $0.suite == suite }) else { return nil }
      let closed = open.remove(at: index)
      return .suiteEnded(closed.suite, closed.summary, duration: closed.start.duration(to: .now).timeInterval)
    }
  }

  private let start = ContinuousClock().now
  private let channel: ReportingChannel
  private let stop: StopRequest?
  private let state: Mutex<State>
  /// Held while the state changes in a way that can give a waiting lane work; a lane waits
  /// on it for such a change.
  private let changed = NSCondition()

  /// - Parameters:
  ///   - queue: the plan's work.
  ///   - channel: where every event of the run goes.
  ///   - stop: when requested, lanes get no more work.
  init(queue: WorkQueue, channel: ReportingChannel, stop: StopRequest?) {
    self.channel = channel
    self.stop = stop
    state = Mutex(State(queue: queue))
  }

  private var events: EventSink { channel.sink }

  /// The most pieces of work that can run at once.
  var mostAtOnce: Int { state.withLock { $0.queue.mostAtOnce } }

  /// The entries no lane has taken yet, in plan order: in a run of one lane, the ones it
  /// runs next.
  var untakenEntries: ArraySlice<Runner.Plan.Entry> { state.withLock { $0.queue.untakenEntries } }

  /// Starts the run: `runStarted`.
  func begin(_ info: RunInfo) {
    events(.runStarted(info))
  }

  /// The next work for a lane, or `nil` when none is left or the run stops. Suites are
  /// announced as their first work is taken, and a test handed out alone is started with
  /// `tests`, both here, in plan order (in `lane`, counted from 1). When every entry is
  /// taken but a parallel entry waits for its repetition to end, this waits for it.
  func next(startingWith tests: TestLife, lane: Int) -> LaneWork? {
    changed.lock()
    defer { changed.unlock() }
    while stop?.signal == nil {
      switch take(only: nil, lane: lane) {
      case .work(.entry(let entry)): return .entry(entry)
      case .work(.test(let planned, let prepare)): return .test(planned, tests.start(planned, lane: lane), prepare: prepare)
      case .done: return nil
      case .wait: changed.wait()
      }
    }
    return nil
  }

  /// The next test for a lane running `async` tests side by side (`holding` of them now),
  /// started as ``next(startingWith:lane:)`` starts it, when it is one that can run so
  /// (``Runner/PlannedTest/runsSideBySide``) and the lane has not its share of them yet
  /// (``WorkQueue/take(only:holding:lane:)``); `nil`, without waiting, when the next work is
  /// anything else, or none is left, or the run stops.
  func nextSideBySide(startingWith tests: TestLife, lane: Int, holding: Int) -> (Runner.PlannedTest, TestLife.Started)? {
    changed.lock()
    defer { changed.unlock() }
    guard stop?.signal == nil,
          case .work(.test(let planned, _)) = take(only: \.runsSideBySide, holding: holding, lane: lane) else { return nil }
    return (planned, tests.start(planned, lane: lane))
  }

  /// Takes work for `lane` from the queue (``WorkQueue/take(only:holding:lane:)``) and announces the suites it opened.
  private func take(only accepts: ((Runner.PlannedTest) -> Bool)?, holding: Int = 0, lane: Int) -> WorkQueue.Next {
    state.withLock { state -> WorkQueue.Next in
      let (next, opened) = state.queue.take(only: accepts, holding: holding, lane: lane)
      for entry in opened {
        events(.suiteStarted(entry.suiteRun))
        state.open.append(OpenSuite(suite: entry.suiteRun, start: ContinuousClock().now))
      }
      return next
    }
  }

  /// Counts the last result of a test; for a test handed out alone, ends its suite when it
  /// was the last test to end there.
  func ended(_ planned: Runner.PlannedTest, with result: TestResult) {
    changed.lock()
    defer { changed.unlock() }
    state.withLock { state in
      state.count(result.verdict, in: planned.id.suiteRun)
      let closed = state.queue.finished(planned, failed: result.verdict.isFailure, stopped: stop?.signal != nil)
      if let closed, let ended = state.close(closed.suiteRun) { events(ended) }
    }
    changed.broadcast()
  }

  /// Ends an entry a lane ran whole: `suiteEnded`; for a piece of an entry (``WorkQueue``),
  /// once its last piece ended.
  func ended(_ entry: Runner.Plan.Entry) {
    if let ended = state.withLock({ $0.queue.ended(entry) ? $0.close(entry.suiteRun) : nil }) { events(ended) }
  }

  /// Ends the run once every lane is done: the suites a stop left open end, then
  /// `runEnded`. Returns the counts.
  func end() -> Summary {
    var (closed, total) = state.withLock { state in
      (state.queue.closeOpenEntries().compactMap { state.close($0.suiteRun) }, state.total)
    }
    for event in closed { events(event) }
    total.outsideFailures = channel.outsideFailures
    events(.runEnded(total, duration: start.duration(to: .now).timeInterval))
    return total
  }

  /// A message from a test's owner: `test` hung past its time limit and grace period where
  /// its executor cannot stop it, and was ended with `result`. The run ends on a thread of
  /// the owner's own: every open suite ends with what ran (the hung test counted), then the
  /// run, every report is finished, and the process exits with status 1.
  func testHung(_ result: TestResult, of planned: Runner.PlannedTest) {
    Thread.detachNewThread { [self] in
      var (closed, total) = state.withLock { state in
        state.count(result.verdict, in: planned.id.suiteRun)
        return (state.open.map(\.suite).compactMap { state.close($0) }, state.total)
      }
      for event in closed { events(event) }
      total.outsideFailures = channel.outsideFailures
      events(.runEnded(total, duration: start.duration(to: .now).timeInterval))
      try? channel.finish()
      exit(1)
    }
  }
}
