import Dispatch
import Foundation
import Synchronization

/// The runner's side of one attempt of a test: it relays the executor's events for the
/// attempt, judges its `testEnded` once (a failing attempt that runs again, a pass after
/// failing attempts), and watches it on a timer of its own while it runs:
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
    /// The issues the attempt recorded, for a result made here.
    var issues: [Issue] = []
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

  init(step: Runner.Step, events: EventSink, retryable: Bool, stop: StopRequest?, watch: Watch,
       onHung: @escaping @Sendable (TestResult) -> Void) {
    self.step = step
    self.events = events
    self.retryable = retryable
    self.stop = stop
    self.watch = watch
    self.onHung = onHung
    state = Mutex(State(nextSlow: watch.slow))
    let watched = watch.slow != nil || watch.hangLimit != nil
    timer = watched ? SendableBox(DispatchSource.makeTimerSource(queue: .global())) : nil
  }

  /// Starts the watch when the attempt's `testStarted` has been sent, so no announcement
  /// comes before it.
  private func startWatching() {
    state.withLock { $0.start = ContinuousClock().now }
    guard let timer = timer?.value else { return }
    timer.setEventHandler { [weak self] in self?.check() }
    scheduleNextCheck()
    timer.activate()
  }

  /// Stops the watch.
  func finish() {
    timer?.value.cancel()
  }

  /// The sink the executor sends the attempt's events to.
  var sink: EventSink {
    EventSink { [self] event in relay(event) }
  }

  /// The attempt's result: as judged when its `testEnded` passed, or as the executor returned
  /// it (judged now) if none did.
  func result(returned: TestResult) -> TestResult {
    state.withLock { $0.result } ?? judge(returned)
  }

  private func relay(_ event: Event) {
    switch event.kind {
    case .testStarted(step.id):
      events.send(event)
      startWatching()
    case .issueRecorded(step.id, let issue):
      state.withLock { state in
        if state.result == nil { state.issues.append(issue) }
      }
      events.send(event)
    case .testEnded(step.id, let result, let duration):
      let judged = state.withLock { state -> TestResult? in
        guard state.result == nil else { return nil }
        state.result = judge(result)
        return state.result
      }
      finish()
      // Nothing to send when the attempt was already ended here (it hung).
      if let judged { events.send(Event(.testEnded(step.id, judged, duration: duration), timestamp: event.timestamp)) }
    default:
      events.send(event)
    }
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
      finish()
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
