import Dispatch
import Foundation
import Synchronization

/// The one owner of each test's life in a run: it skips a test that carries a skip trait,
/// announces each attempt, judges each as it ends (``TestResult/init(judging:knownIssue:at:)``,
/// then retries and flaky results: ``end(_:as:)``) and ends the test once, after its last
/// attempt, with every attempt (``TestEnd``). It alone sends `testStarted` and `testEnded`;
/// an executor only runs an attempt, streams what it records, and returns an ``AttemptEnd``;
/// the lane (``Lane``) starts each attempt, the retries too.
///
/// A test's first attempt is announced apart from its run so that the run's owner can start
/// tests in plan order under its own lock (``start(_:lane:)``) while lanes run them later.
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
    var hung: @Sendable (TestResult, Runner.PlannedTest) -> Void
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

  /// Starts `test` in the lane numbered `lane` (from 1): a skipped test is reported here
  /// (`testStarted`, then `testEnded` as skipped), without running any of its code; otherwise
  /// its first attempt is announced.
  func start(_ planned: Runner.PlannedTest, lane: Int) -> Started {
    guard let reason = planned.test.skipReason else { return .running(begin(planned, lane: lane, after: [])) }
    let skipped = TestAttempt(number: planned.id.attempt, outcome: .skipped, duration: 0, issues: [], lane: lane)
    events.send(Event(.testStarted(planned.id), lane: lane))
    events(.testEnded(planned.id, TestEnd(verdict: .skipped, reason: reason, attempts: [skipped])))
    return .skipped(TestResult(verdict: .skipped, reason: reason))
  }

  /// Ends `attempt` as `ending` says; returns its result (the test's, when it was the last
  /// attempt), and the next attempt, already announced, when the test runs again.
  func end(_ attempt: Attempt, as ending: AttemptEnd) -> (result: TestResult, retry: Attempt?) {
    let (result, ended) = attempt.end(ending)
    guard let ended, let retry = attempt.planned.retry else { return (result, nil) }
    return (result, begin(retry, lane: attempt.lane, after: attempt.earlier + [ended]))
  }

  /// Announces an attempt, after the `earlier` attempts of its test, in the lane numbered
  /// `lane`, and starts its watch.
  private func begin(_ planned: Runner.PlannedTest, lane: Int, after earlier: [TestAttempt]) -> Attempt {
    let attempt = Attempt(planned: planned, lane: lane, earlier: earlier, rules: rules, events: events,
                          hangLimit: rules.watchesHangs ? planned.timeLimit : nil)
    attempt.begin()
    return attempt
  }
}

extension TestLife {
  /// One attempt of a test: it announces the attempt (`testStarted`), relays what the
  /// executor streams while it runs (keeping its issues), judges it once from the
  /// ``AttemptEnd`` the executor returns, and ends it: when it runs again, by handing itself
  /// to the next attempt (no event says so: the next `testStarted` does), else by ending the
  /// test (`testEnded`, with the earlier attempts and this one). While it runs, a timer of its
  /// own watches it:
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
      /// When it started, as its executor said last (a test bundle's record of the start),
      /// else when its `testStarted` was sent: its ``TestAttempt/started``.
      var started: Date?
      /// Whether its executor said when it started.
      var startSaid = false
      /// The next `testSlow` announcement, as time since the start.
      var nextSlow: Duration?
      var limitAnnounced = false

      /// Seconds since the attempt started: since its executor said it started (a test
      /// bundle may have started it before it was announced; a worker process, after), else
      /// since it was announced.
      var elapsed: Double {
        guard startSaid, let started else { return (start ?? .now).duration(to: .now).timeInterval }
        return max(0, Date().timeIntervalSince(started))
      }
    }

    let planned: Runner.PlannedTest
    /// The lane that runs the attempt, counted from 1 (its `testStarted` says so).
    let lane: Int
    /// The test's attempts before this one, which failed and ran again.
    let earlier: [TestAttempt]
    private let rules: Rules
    private let events: EventSink
    /// Name the attempt on standard error at this limit (an executor that cannot stop it).
    private let hangLimit: Duration?
    private let state: Mutex<State>
    private let timer: SendableBox<any DispatchSourceTimer>?

    init(planned: Runner.PlannedTest, lane: Int, earlier: [TestAttempt], rules: Rules, events: EventSink, hangLimit: Duration?) {
      self.planned = planned
      self.lane = lane
      self.earlier = earlier
      self.rules = rules
      self.events = events
      self.hangLimit = hangLimit
      state = Mutex(State(nextSlow: rules.slow))
      let watched = rules.slow != nil || hangLimit != nil
      timer = watched ? SendableBox(DispatchSource.makeTimerSource(queue: .global())) : nil
    }

    /// Announces the attempt (`testStarted`) and starts the watch: the executor runs it next.
    func begin() {
      let announced = Event(.testStarted(planned.id), lane: lane)
      events.send(announced)
      if rules.deliversBeforeGoingOn { events.flush() }
      state.withLock { state in
        state.start = ContinuousClock().now
        if !state.startSaid { state.started = announced.timestamp }
      }
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
      case .issueRecorded(planned.id, let issue):
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
      case .testStarted(planned.id):
        // The test's owner alone announces the attempt; its executor says when it really
        // started (a test bundle may run it before the runner asks for it). An attempt its
        // worker's end cut short, run again, says so again: its end is that run's.
        state.withLock { state in
          state.startSaid = true
          state.started = event.timestamp
        }
      case .testEnded(planned.id, _):
        // The test's owner alone ends the attempt.
        break
      case .workerReplaced:
        events.send(Event(event.kind, timestamp: event.timestamp, lane: lane))
      default:
        events.send(event)
      }
    }

    /// Ends the attempt as `ending` says (unless it was ended here already, as hung): judges
    /// it and, unless it runs again, ends the test (`testEnded`). Returns the result, and
    /// the attempt when it runs again.
    func end(_ ending: AttemptEnd) -> (result: TestResult, retried: TestAttempt?) {
      timer?.value.cancel()
      let (result, retried, late) = state.withLock { state -> (TestResult, TestAttempt?, [Event]) in
        if let result = state.result { return (result, nil, []) }
        let elapsed = state.elapsed
        var duration = elapsed
        var issues = state.issues
        var trace: ScheduleTrace?
        let endingIssue = ending.issue(at: planned.test.sourceLocation)
        if let endingIssue {
          events(.issueRecorded(planned.id, endingIssue))
          issues.append(endingIssue)
        } else if case .returned(let seconds, let steps) = ending {
          duration = seconds
          trace = steps
          if let recorded = rules.replaying, let message = trace?.divergence(from: recorded) {
            let issue = Issue(kind: .warning, message: message, sourceLocation: planned.test.sourceLocation)
            events(.issueRecorded(planned.id, issue))
            issues.append(issue)
          }
        }
        var result = endingIssue == nil
          ? TestResult(judging: issues, knownIssue: planned.test.knownIssue, at: planned.test.sourceLocation)
          : TestResult(verdict: .errored, reason: planned.test.knownIssue, issues: issues)
        if case .skipped(let reason, let seconds) = ending {
          duration = seconds
          if !result.verdict.isFailure { result = TestResult(verdict: .skipped, reason: reason, issues: issues) }
        }
        result.scheduleTrace = trace
        // What judging added (a known issue that did not occur) is sent like every issue.
        for issue in result.issues.dropFirst(issues.count) { events(.issueRecorded(planned.id, issue)) }
        let attempt = TestAttempt(number: planned.id.attempt, outcome: result.verdict, duration: duration,
                                  issues: result.issues, lane: lane, scheduleTrace: trace, started: state.started)
        defer { state.heldLateIssues = [] }
        // A failing attempt runs again while a retry is left and no stop was requested.
        let followUp = AttemptFollowUp(after: .init(
          failed: result.verdict.isFailure, retryLeft: planned.retry != nil, stopRequested: rules.stop?.signal != nil))
        if followUp.test == .retry {
          state.result = result
          return (result, attempt, state.heldLateIssues)
        }
        // A pass after failing attempts is flaky.
        if result.verdict == .passed && !earlier.isEmpty { result.verdict = .flaky }
        state.result = result
        endTest(with: result, last: attempt)
        return (result, nil, state.heldLateIssues)
      }
      for event in late { events.send(event) }
      return (result, retried)
    }

    /// Sends the test's `testEnded`: its verdict is `result`'s, after the earlier attempts
    /// and `last`.
    private func endTest(with result: TestResult, last: TestAttempt) {
      events(.testEnded(planned.id, TestEnd(verdict: result.verdict, reason: result.reason, attempts: earlier + [last])))
    }

    /// Ends the attempt, and its test, here as an error with `issue`, unless it ended
    /// already; returns the result it ended with.
    private func abandon(with issue: Issue) -> TestResult? {
      state.withLock { state -> TestResult? in
        guard state.result == nil else { return nil }
        let result = TestResult(verdict: .errored, reason: planned.test.knownIssue, issues: state.issues + [issue])
        state.result = result
        events(.issueRecorded(planned.id, issue))
        endTest(with: result, last: TestAttempt(
          number: planned.id.attempt, outcome: .errored, duration: state.elapsed, issues: result.issues, lane: lane,
          started: state.started))
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
          events(.testSlow(planned.id, elapsed: next.timeInterval))
          state.nextSlow = next + slow * (Int((elapsed - next) / slow) + 1)
        }
        if let limit = hangLimit, !state.limitAnnounced, elapsed >= limit {
          state.limitAnnounced = true
          let then = rules.hangGrace.map { "the run ends in \($0.secondsDescription) seconds unless it returns" }
            ?? "the run waits for it"
          FileHandleOutput.standardError.write(
            "AsyncHarness: \(planned.id) is still running after its time limit of \(limit.secondsDescription) seconds, "
              + "outside any wait the harness can end; \(then).\n")
        }
        if let limit = hangLimit, let grace = rules.hangGrace, elapsed >= limit + grace { hung = true }
      }
      if hung, let limit = hangLimit, let grace = rules.hangGrace {
        timer?.value.cancel()
        let issue = Issue(kind: .timeLimitExceeded,
                          message: "Test exceeded its time limit of \(limit.secondsDescription) seconds outside any wait "
                            + "the harness could end, and had not returned \(grace.secondsDescription) seconds later, so "
                            + "the run was ended", sourceLocation: planned.test.sourceLocation)
        if let result = abandon(with: issue) { rules.hung(result, planned) }
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
