import Dispatch
import Foundation
import Synchronization

/// The one owner of each test's life in a run: it skips a test that carries a skip trait,
/// starts the first attempt, runs every attempt with the executor it is given, judges each
/// (``TestResult/init(judging:knownIssue:at:)``, then retries and flaky results) and ends
/// it. It alone sends `testStarted` and `testEnded`; an executor only runs an attempt,
/// streams what it records, and returns an ``AttemptEnd``.
///
/// A test starts in two steps so that the run's owner can start tests in plan order under
/// its own lock (``start(_:)``) while lanes run them later (``runAttempts(of:with:)``).
struct TestLife: Sendable {
  /// What every attempt of a run is watched and judged under.
  struct Rules: Sendable {
    /// Announce an attempt as slow (`testSlow`) at each multiple of this.
    var slow: Duration?
    /// Whether attempts are watched for hangs: the run's executors cannot stop a test that
    /// runs past its time limit outside any wait (``TestExecutor/stopsHungTests``).
    var watchesHangs: Bool
    /// After an attempt's time limit and this grace period, an attempt its executor cannot
    /// stop is ended here as hung (``Configuration/hungTestGracePeriod``).
    var hangGrace: Duration?
    /// When requested, a failing attempt is not retried.
    var stop: StopRequest?
    /// The steps of the run a replay token (`--schedule`) was printed for: an attempt that
    /// takes others gets a warning saying where and why.
    var replaying: ScheduleTrace?
    /// Told of an attempt ended here as hung: the run's owner ends the run.
    var hung: @Sendable (TestResult, Runner.Step) -> Void
    /// Whether an attempt's `testStarted` and each issue it records reach the reporters
    /// before its code goes on (``EventSink/flush()``): its test runs in this process, whose
    /// crash would lose what the reporting channel had not delivered yet.
    var deliversBeforeGoingOn = false
  }

  /// A test as it starts: skipped (reported whole, none of its code runs), or its first
  /// attempt announced and run next.
  enum Started: Sendable {
    /// The test was skipped and reported with this result.
    case skipped(TestResult)
    /// The test's first attempt was announced and runs next.
    case running(Attempt)
  }

  let rules: Rules
  let events: EventSink

  /// Starts `step` in the lane numbered `lane` (from 1): a skipped test is reported here
  /// (`testStarted`, then `testEnded` as skipped), without running any of its code; otherwise
  /// its first attempt is announced.
  func start(_ step: Runner.Step, lane: Int) -> Started {
    guard let reason = step.test.skipReason else { return .running(begin(step, lane: lane)) }
    let result = TestResult(verdict: .skipped, reason: reason)
    events.send(Event(.testStarted(step.id), lane: lane))
    events(.testEnded(step.id, result, duration: 0))
    return .skipped(result)
  }

  /// Runs a started test to its last attempt with `executor` and returns that attempt's
  /// result: a failing attempt runs again while retries are left.
  func runAttempts(of started: Started, with executor: any TestExecutor) -> TestResult {
    var attempt: Attempt
    switch started {
    case .skipped(let result): return result
    case .running(let first): attempt = first
    }
    while true {
      let (result, retry) = end(attempt, as: executor.run(attempt.step, events: attempt.sink))
      guard let retry else { return result }
      attempt = retry
    }
  }

  /// Ends `attempt` as `ending` says; returns its result, and the next attempt, already
  /// announced, when the test runs again.
  func end(_ attempt: Attempt, as ending: AttemptEnd) -> (result: TestResult, retry: Attempt?) {
    let result = attempt.end(ending)
    guard result.willRetry, let retry = attempt.step.retry else { return (result, nil) }
    return (result, begin(retry, lane: attempt.lane))
  }

  /// Announces an attempt in the lane numbered `lane` and starts its watch.
  private func begin(_ step: Runner.Step, lane: Int) -> Attempt {
    let attempt = Attempt(step: step, lane: lane, rules: rules, events: events,
                          hangLimit: rules.watchesHangs ? step.timeLimit : nil)
    attempt.begin()
    return attempt
  }
}

extension TestLife {
  /// One attempt of a test: it announces the attempt (`testStarted`), relays what the
  /// executor streams while it runs (keeping its issues), judges it once from the
  /// ``AttemptEnd`` the executor returns, and ends it (`testEnded`). While it runs, a timer
  /// of its own watches it:
  ///
  /// - each time it has run another `slow` interval, a `testSlow` event announces it;
  /// - when its executor cannot stop a hung test (in-process), it is named on standard
  ///   error at its time limit and, after the grace period, ended here as an error and
  ///   handed to ``Rules/hung``.
  ///
  /// Events about the attempt are sent under its lock while it decides, so a `testSlow`
  /// never follows its `testEnded`, and an attempt is ended exactly once.
  final class Attempt: Sendable {
    private struct State {
      /// The issues the attempt recorded while it ran.
      var issues: [Issue] = []
      /// Late signals of the attempt's own test that arrived before it ended: sent after
      /// its `testEnded`, as late signals always are.
      var heldLateIssues: [Event] = []
      /// The judged result, once the attempt ended.
      var result: TestResult?
      /// When the attempt's `testStarted` passed: the watch runs from then.
      var start: ContinuousClock.Instant?
      /// The next `testSlow` announcement, as time since the start.
      var nextSlow: Duration?
      var limitAnnounced = false
    }

    let step: Runner.Step
    /// The lane that runs the attempt, counted from 1 (its `testStarted` says so).
    let lane: Int
    private let rules: Rules
    private let events: EventSink
    /// Name the attempt on standard error at this limit (an executor that cannot stop it).
    private let hangLimit: Duration?
    private let state: Mutex<State>
    private let timer: SendableBox<any DispatchSourceTimer>?

    init(step: Runner.Step, lane: Int, rules: Rules, events: EventSink, hangLimit: Duration?) {
      self.step = step
      self.lane = lane
      self.rules = rules
      self.events = events
      self.hangLimit = hangLimit
      state = Mutex(State(nextSlow: rules.slow))
      let watched = rules.slow != nil || hangLimit != nil
      timer = watched ? SendableBox(DispatchSource.makeTimerSource(queue: .global())) : nil
    }

    /// Announces the attempt (`testStarted`) and starts the watch: the executor runs it next.
    func begin() {
      events.send(Event(.testStarted(step.id), lane: lane))
      if rules.deliversBeforeGoingOn { events.flush() }
      state.withLock { $0.start = ContinuousClock().now }
      guard let timer = timer?.value else { return }
      timer.setEventHandler { [weak self] in self?.check() }
      scheduleNextCheck()
      timer.activate()
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
        guard !held else { return }
        events.send(event)
        if rules.deliversBeforeGoingOn { events.flush() }
      case .testStarted(step.id), .testEnded(step.id, _, _):
        // The test's owner alone starts and ends the attempt.
        break
      case .workerReplaced:
        events.send(Event(event.kind, timestamp: event.timestamp, lane: lane))
      default:
        events.send(event)
      }
    }

    /// Ends the attempt as `ending` says (unless it was ended here already, as hung):
    /// judges it, sends `testEnded`, and returns the result.
    func end(_ ending: AttemptEnd) -> TestResult {
      timer?.value.cancel()
      let (result, late) = state.withLock { state -> (TestResult, [Event]) in
        if let result = state.result { return (result, []) }
        let elapsed = (state.start ?? .now).duration(to: .now).timeInterval
        var duration = elapsed
        var issues = state.issues
        var trace: ScheduleTrace?
        let endingIssue = ending.issue(at: step.test.sourceLocation)
        if let endingIssue {
          events(.issueRecorded(step.id, endingIssue))
          issues.append(endingIssue)
        } else if case .returned(let seconds, let steps) = ending {
          duration = seconds
          trace = steps
          if let recorded = rules.replaying, let message = trace?.divergence(from: recorded) {
            let issue = Issue(kind: .warning, message: message, sourceLocation: step.test.sourceLocation)
            events(.issueRecorded(step.id, issue))
            issues.append(issue)
          }
        }
        var result = endingIssue == nil
          ? TestResult(judging: issues, knownIssue: step.test.knownIssue, at: step.test.sourceLocation)
          : TestResult(verdict: .errored, reason: step.test.knownIssue, issues: issues)
        if case .skipped(let reason, let seconds) = ending {
          duration = seconds
          if !result.verdict.isFailure { result = TestResult(verdict: .skipped, reason: reason, issues: issues) }
        }
        result.scheduleTrace = trace
        result = retried(result)
        state.result = result
        events(.testEnded(step.id, result, duration: duration))
        defer { state.heldLateIssues = [] }
        return (result, state.heldLateIssues)
      }
      for event in late { events.send(event) }
      return result
    }

    /// A failing attempt runs again while a retry is left and no stop was requested; a pass
    /// after failing attempts is flaky.
    private func retried(_ result: TestResult) -> TestResult {
      var result = result
      if result.verdict.isFailure {
        result.willRetry = step.retry != nil && rules.stop?.signal == nil
      } else if result.verdict == .passed && step.id.attempt > 1 {
        result.verdict = .flaky
      }
      return result
    }

    /// Ends the attempt here as an error with `issue`, unless it ended already; returns the
    /// result it ended with.
    private func abandon(with issue: Issue) -> TestResult? {
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
        if let slow = rules.slow, let next = state.nextSlow, elapsed >= next {
          events(.testSlow(step.id, elapsed: next.timeInterval))
          state.nextSlow = next + slow * (Int((elapsed - next) / slow) + 1)
        }
        if let limit = hangLimit, !state.limitAnnounced, elapsed >= limit {
          state.limitAnnounced = true
          let then = rules.hangGrace.map { "the run ends in \($0.secondsDescription) seconds unless it returns" }
            ?? "the run waits for it"
          FileHandleOutput.standardError.write(
            "AsyncHarness: \(step.id) is still running after its time limit of \(limit.secondsDescription) seconds, "
              + "outside any wait the harness can end; \(then).\n")
        }
        if let limit = hangLimit, let grace = rules.hangGrace, elapsed >= limit + grace { hung = true }
      }
      if hung, let limit = hangLimit, let grace = rules.hangGrace {
        timer?.value.cancel()
        let issue = Issue(kind: .timeLimitExceeded,
                          message: "Test exceeded its time limit of \(limit.secondsDescription) seconds outside any wait "
                            + "the harness could end, and had not returned \(grace.secondsDescription) seconds later, so "
                            + "the run was ended", sourceLocation: step.test.sourceLocation)
        if let result = abandon(with: issue) { rules.hung(result, step) }
        return
      }
      scheduleNextCheck()
    }

    private func scheduleNextCheck() {
      guard let timer = timer?.value else { return }
      let (start, nextSlow, announced) = state.withLock { ($0.start ?? .now, $0.nextSlow, $0.limitAnnounced) }
      var due: [Duration] = []
      if let nextSlow { due.append(nextSlow) }
      if let limit = hangLimit { due.append(announced ? limit + (rules.hangGrace ?? .seconds(365 * 24 * 3600)) : limit) }
      guard let next = due.min() else { return }
      let wait = max(.zero, next - start.duration(to: .now))
      timer.schedule(deadline: .now() + .nanoseconds(Int(wait.nanoseconds)), leeway: .milliseconds(10))
    }
  }
}
