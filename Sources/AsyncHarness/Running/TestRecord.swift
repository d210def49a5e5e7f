import Synchronization

/// The shared state of one running test: whether it is still running, the wait in progress
/// and the expectations it created. Expectations and queues hold it so that
/// what they report lands on the test that created them, whichever thread they report from.
///
/// Each issue and line of output is sent to the run's events the moment it is recorded,
/// under the record's lock, so it reaches the reporters before the test's `testEnded` (or,
/// arriving after the test ended, as a late signal) and is never lost to a later crash.
final class TestRecord: Sendable {
  let id: TestID
  private let events: EventSink

  private struct State {
    var isRunning = true
    /// The kinds of the issues recorded once at most (``recordOnce(_:)``) that were recorded.
    var recordedOnce: Set<Issue.Kind> = []
    var activeWait: ActiveWait?
    var expectations: [Expectation] = []
    var cleanups: [@Sendable () -> Void] = []
  }

  struct ActiveWait {
    var condition: WaitCondition
    var location: SourceLocation
  }

  private let state = Mutex(State())
  private let failures = Atomic<Int>(0)
  /// How many of the failures the test's own code knows of: those it recorded itself
  /// outside a wait, and all that were recorded before its last wait ended.
  private let acknowledged = Atomic<Int>(0)
  /// The hash of the task running the test's `async` code, or 0 (see ``markBodyTask()``).
  private let bodyTask = Atomic<Int>(0)

  /// Creates the record of a test that starts now; it counts as running until ``end()``.
  init(id: TestID, events: EventSink) {
    self.id = id
    self.events = events
    Self.running.withLock { $0.append(self) }
  }

  /// The record of the test running on this task or thread, for queues that were not
  /// created by a test context.
  @TaskLocal static var current: TestRecord?

  /// The record whose body (set-up, test, teardown) runs on this thread or task: bound on
  /// the runner's thread for a blocking body, inside the task of an `async` one. Tasks the
  /// body creates inherit it.
  @TaskLocal static var body: TestRecord?

  /// Every test of the process that has started and not ended, oldest first.
  private static let running = Mutex<[TestRecord]>([])

  /// The tests an issue with no owner belongs to: the test of the current task, else every
  /// test running now (exactly one in a serial run).
  static var owners: [TestRecord] {
    if let current { return [current] }
    return running.withLock { $0 }
  }

  var isRunning: Bool { state.withLock { $0.isRunning } }

  /// Whether the test's time limit was recorded: it ran past it, in a wait or in `async` code
  /// cancelled and left running.
  var exceededTimeLimit: Bool { state.withLock { $0.recordedOnce.contains(.timeLimitExceeded) } }

  /// How many failing issues were recorded so far.
  var failureCount: Int { failures.load(ordering: .acquiring) }

  /// How many failing issues the test's own code knows of when a wait begins: the wait ends
  /// early (fail fast) only when ``failureCount`` grows past it. A soft failure the body
  /// recorded itself before the wait does not end it; one that a callback recorded on
  /// another thread, even just before the wait began, does.
  var acknowledgedFailureCount: Int { acknowledged.load(ordering: .acquiring) }

  /// Marks every failure recorded so far as known to the test's code: a wait ended.
  func acknowledgeFailures() {
    acknowledged.store(failureCount, ordering: .releasing)
  }

  /// Reports how a wait of the test ended (`waitEnded`).
  func waitEnded(_ awaited: String, outcome: String, duration: Double) {
    events(.waitEnded(id, awaited: awaited, outcome: outcome, duration: duration))
  }

  /// Reports a step the test's schedule took (`scheduleStep`): its number, what it ran, and
  /// the virtual time then.
  func scheduleStep(_ step: Int, ran: String, at virtualTime: Duration) {
    events(.scheduleStep(id, step: step, ran: ran, virtualTime: virtualTime.timeInterval))
  }

  /// Records an issue; a failing one ends the wait in progress at once.
  func record(_ issue: Issue) {
    record(issue, unlessAlreadyRecorded: false)
  }

  /// Records an issue of a kind a test has at most once (its time limit): a second one,
  /// from whichever thread and whenever, is dropped. The check and the append are one step,
  /// so the issue is never lost to a race with the end of the test.
  func recordOnce(_ issue: Issue) {
    record(issue, unlessAlreadyRecorded: true)
  }

  private func record(_ issue: Issue, unlessAlreadyRecorded once: Bool) {
    enum Outcome { case recorded(WaitCondition?), duplicate, late }
    let outcome = state.withLock { state -> Outcome in
      if once && !state.recordedOnce.insert(issue.kind).inserted { return .duplicate }
      guard state.isRunning else { return .late }
      events(.issueRecorded(id, issue))
      return .recorded(state.activeWait?.condition)
    }
    switch outcome {
    case .duplicate:
      return
    case .late:
      recordLate(issue)
    case .recorded(let wait):
      guard issue.isFailure else { return }
      failures.add(1, ordering: .releasing)
      if let wait {
        wait.wake()
      } else if isCallerTheBody {
        acknowledged.add(1, ordering: .releasing)
      }
    }
  }

  /// Whether the caller is the test's own code (its body, set-up or teardown), not a
  /// callback: not work a queue runs (a main-queue block run as a callout while the test
  /// waits, or work sent to a harness queue, which an inline queue runs on the body's own
  /// thread), and not a task the body started. In a task, only the one running the test's
  /// `async` code counts (a `@MainActor` body runs as a callout, but in that task).
  var isCallerTheBody: Bool {
    guard Self.body === self, DispatchChain.frames.isEmpty else { return false }
    if let task = withUnsafeCurrentTask(body: { $0?.hashValue }) {
      return task == bodyTask.load(ordering: .acquiring)
    }
    return !MainThreadPump.isInsideCallout
  }

  /// Marks the calling task as the one running the test's `async` code.
  func markBodyTask() {
    bodyTask.store(withUnsafeCurrentTask(body: { $0?.hashValue }) ?? 0, ordering: .releasing)
  }

  /// Reports an issue that arrived after the test ended, as a late signal of this test.
  func recordLate(_ issue: Issue) {
    let late = issue.kind == .lateSignal ? issue
      : Issue(kind: .lateSignal, message: "After the test ended: \(issue.message)",
              sourceLocation: issue.sourceLocation)
    state.withLock { _ in events(.issueRecorded(id, late)) }
  }

  /// Sends a line of output, while the test runs.
  func capture(_ text: String) {
    state.withLock { if $0.isRunning { events(.outputCaptured(id, text)) } }
  }

  /// Wakes the wait in progress so it re-evaluates its condition.
  func signal() {
    state.withLock { $0.activeWait?.condition }?.wake()
  }

  /// Begins a wait, or returns the location of the wait already in progress.
  func beginWait(_ wait: ActiveWait) -> SourceLocation? {
    state.withLock { state in
      if let active = state.activeWait { return active.location }
      state.activeWait = wait
      return nil
    }
  }

  func endWait() {
    state.withLock { $0.activeWait = nil }
  }

  /// Remembers an expectation the test created, for the check that each was waited for.
  func add(_ expectation: Expectation) {
    state.withLock { $0.expectations.append(expectation) }
  }

  /// The expectations the test created that no wait covered and that require one, in the
  /// order they were created.
  var unwaitedExpectations: [Expectation] {
    state.withLock { $0.expectations }.filter { $0.requiresWait && !$0.wasWaitedFor }
  }

  /// Registers clean-up the runner performs when the test ends, before it is marked ended.
  func addCleanup(_ work: @escaping @Sendable () -> Void) {
    state.withLock { $0.cleanups.append(work) }
  }

  /// Performs the clean-up and marks the test ended: later reports become late issues.
  func end() {
    for work in state.withLock({ state in defer { state.cleanups.removeAll() }; return state.cleanups }).reversed() {
      work()
    }
    state.withLock { state in
      state.isRunning = false
      state.expectations.removeAll()
    }
    Self.running.withLock { $0.removeAll { $0 === self } }
  }
}
