import Dispatch
import Foundation
import Synchronization

/// The runner's side of one attempt of a test, and the only owner of its life: it announces
/// the attempt (`testStarted`), relays what the executor streams while the attempt runs
/// (keeping the attempt's issues), decides the result once from the ``AttemptEnd`` the
/// executor returns (a failing attempt that runs again, a pass after failing attempts), and
/// ends the attempt (`testEnded`). While the attempt runs it watches it on a timer of its own:
///
/// - each time the attempt has run another `slow` interval, a `testSlow` event announces it;
/// - when the executor cannot stop a hung test itself (in-process), the attempt is named on
///   standard error at its time limit and, after the grace period, ended here as an error
///   (``abandon(with:)``) and handed to `onHung`.
///
/// Events about the attempt are sent under the relay's lock while it decides, so a
/// `testSlow` never follows the attempt's `testEnded`, and an attempt is ended exactly once.
final class AttemptRelay: Sendable {
  private struct State {
    /// The issues the attempt recorded while it ran.
    var issues: [Issue] = []
    /// Late signals of the attempt's own test that arrived before it ended: sent after its
    /// `testEnded`, as late signals always are.
    var heldLateIssues: [Event] = []
    /// The judged result, once the attempt ended.
    var result: TestResult?
    /// When the attempt's `testStarted` passed: the watch runs from then.
    var start: ContinuousClock.Instant?
    /// The next `testSlow` announcement, as time since the start.
    var nextSlow: Duration?
    var limitAnnounced = false
  }

  /// What the relay watches for.
  struct Watch: Sendable {
    /// Announce the attempt as slow at each multiple of this.
    var slow: Duration?
    /// Name the attempt on standard error at this limit (an executor that cannot stop it).
    var hangLimit: Duration?
    /// After the limit and this grace period, end the attempt here and call `onHung`.
    var grace: Duration?
  }

  private let step: Runner.Step
  private let events: EventSink
  private let retryable: Bool
  private let stop: StopRequest?
  private let watch: Watch
  private let state: Mutex<State>
  private let timer: SendableBox<any DispatchSourceTimer>?
  private let onHung: @Sendable (TestResult) -> Void
  private let replaying: ScheduleTrace?

  /// - Parameter replaying: The steps of the run a replay token (`--schedule`) was printed
  ///   for: an attempt that takes others gets a warning saying where and why.
  init(step: Runner.Step, events: EventSink, retryable: Bool, stop: StopRequest?, watch: Watch,
       replaying: ScheduleTrace? = nil, onHung: @escaping @Sendable (TestResult) -> Void) {
    self.step = step
    self.replaying = replaying
    self.events = events
    self.retryable = retryable
    self.stop = stop
    self.watch = watch
    self.onHung = onHung
    state = Mutex(State(nextSlow: watch.slow))
    let watched = watch.slow != nil || watch.hangLimit != nil
    timer = watched ? SendableBox(DispatchSource.makeTimerSource(queue: .global())) : nil
  }

  /// Reports a step that does not run (it carries a skip trait): `testStarted`, then
  /// `testEnded` as skipped, without running any of its code.
  static func skip(_ step: Runner.Step, reason: String, events: EventSink) -> TestResult {
    let result = TestResult(verdict: .skipped, reason: reason)
    events(.testStarted(step.id))
    events(.testEnded(step.id, result, duration: 0))
    return result
  }

  /// Announces the attempt (`testStarted`) and starts the watch: the executor runs it next.
  func begin() {
    events(.testStarted(step.id))
    state.withLock { $0.start = ContinuousClock().now }
    guard let timer = timer?.value else { return }
    timer.setEventHandler { [weak self] in self?.check() }
    scheduleNextCheck()
    timer.activate()
  }

  /// Stops the watch.
  private func stopWatching() {
    timer?.value.cancel()
  }

  /// The sink the executor streams the attempt's issues and output to.
  var sink: EventSink {
    EventSink { [self] event in relay(event) }
  }

  private func relay(_ event: Event) {
    switch event.kind {
    case .issueRecorded(step.id, let issue):
      let held = state.withLock { state -> Bool in
        guard state.result == nil else { return false }
        if issue.kind == .lateSignal {
          state.heldLateIssues.append(event)
          return true
        }
        state.issues.append(issue)
        return false
      }
      if !held { events.send(event) }
    case .testStarted(step.id), .testEnded(step.id, _, _):
      // The relay alone starts and ends the attempt.
      break
    default:
      events.send(event)
    }
  }

  /// Ends the attempt as `ending` says (unless it was ended here already, as hung): decides
  /// its result, sends `testEnded`, and returns the result.
  func end(_ ending: AttemptEnd) -> TestResult {
    stopWatching()
    let (result, late) = state.withLock { state -> (TestResult, [Event]) in
      if let result = state.result { return (result, []) }
      let elapsed = (state.start ?? .now).duration(to: .now).timeInterval
      let result: TestResult
      let duration: Double
      if let issue = ending.issue(at: step.test.sourceLocation) {
        events(.issueRecorded(step.id, issue))
        result = TestResult(verdict: .errored, reason: step.test.knownIssue, issues: state.issues + [issue])
        duration = elapsed
      } else {
        var issues = state.issues
        var trace: ScheduleTrace?
        if case .returned(let seconds, let steps) = ending {
          duration = seconds
          trace = steps
        } else {
          duration = elapsed
        }
        if let recorded = replaying, let message = trace?.divergence(from: recorded) {
          let issue = Issue(kind: .warning, message: message, sourceLocation: step.test.sourceLocation)
          events(.issueRecorded(step.id, issue))
          issues.append(issue)
        }
        var judged = Runner.result(issues: issues, knownIssue: step.test.knownIssue, at: step.test.sourceLocation)
        judged.scheduleTrace = trace
        result = judged
      }
      state.result = judge(result)
      events(.testEnded(step.id, state.result!, duration: duration))
      defer { state.heldLateIssues = [] }
      return (state.result!, state.heldLateIssues)
    }
    for event in late { events.send(event) }
    return result
  }

  /// A failing attempt runs again while a retry is left and no stop was requested; a pass
  /// after failing attempts is flaky.
  private func judge(_ result: TestResult) -> TestResult {
    var result = result
    if result.verdict.isFailure {
      result.willRetry = retryable && stop?.signal == nil
    } else if result.verdict == .passed && step.id.attempt > 1 {
      result.verdict = .flaky
    }
    return result
  }

  /// Ends the attempt here as an error with `issue`, unless it ended already; returns the
  /// result it ended with.
  func abandon(with issue: Issue) -> TestResult? {
    state.withLock { state -> TestResult? in
      guard state.result == nil else { return nil }
      let result = TestResult(verdict: .errored, reason: step.test.knownIssue, issues: state.issues + [issue])
      state.result = result
      events(.issueRecorded(step.id, issue))
      events(.testEnded(step.id, result, duration: (state.start ?? .now).duration(to: .now).timeInterval))
      return result
    }
  }

  /// Runs when the timer fires: announces what is due, then schedules the next check.
  private func check() {
    var hung = false
    state.withLock { state in
      guard state.result == nil, let start = state.start else { return }
      let elapsed = start.duration(to: .now)
      if let slow = watch.slow, let next = state.nextSlow, elapsed >= next {
        events(.testSlow(step.id, elapsed: next.timeInterval))
        state.nextSlow = next + slow * (Int((elapsed - next) / slow) + 1)
      }
      if let limit = watch.hangLimit, !state.limitAnnounced, elapsed >= limit {
        state.limitAnnounced = true
        let then = watch.grace.map { "the run ends in \($0.secondsDescription) seconds unless it returns" }
          ?? "the run waits for it"
        FileHandleOutput.standardError.write(
          "AsyncHarness: \(step.id) is still running after its time limit of \(limit.secondsDescription) seconds, "
            + "outside any wait the harness can end; \(then).\n")
      }
      if let limit = watch.hangLimit, let grace = watch.grace, elapsed >= limit + grace { hung = true }
    }
    if hung, let limit = watch.hangLimit, let grace = watch.grace {
      stopWatching()
      let issue = Issue(kind: .timeLimitExceeded,
                        message: "Test exceeded its time limit of \(limit.secondsDescription) seconds outside any wait the "
                          + "harness could end, and had not returned \(grace.secondsDescription) seconds later, so the run "
                          + "was ended", sourceLocation: step.test.sourceLocation)
      if let result = abandon(with: issue) { onHung(result) }
      return
    }
    scheduleNextCheck()
  }

  private func scheduleNextCheck() {
    guard let timer = timer?.value else { return }
    let (start, nextSlow, announced) = state.withLock { ($0.start ?? .now, $0.nextSlow, $0.limitAnnounced) }
    var due: [Duration] = []
    if let nextSlow { due.append(nextSlow) }
    if let limit = watch.hangLimit { due.append(announced ? limit + (watch.grace ?? .seconds(365 * 24 * 3600)) : limit) }
    guard let next = due.min() else { return }
    let wait = max(.zero, next - start.duration(to: .now))
    timer.schedule(deadline: .now() + .nanoseconds(Int(wait.nanoseconds)), leeway: .milliseconds(10))
  }
}
