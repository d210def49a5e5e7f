/// Runs one attempt of a test of a plan and says how it ended; the runner owns the rest.
///
/// The owner of each test's life in the runner alone announces an attempt (`testStarted`),
/// ends it (`testEnded`) and decides its verdict, with retries and flaky results. An executor runs
/// the test's code and streams what the attempt records while it runs, its issues and
/// output (`issueRecorded`, `outputCaptured`), to the sink it is given; then it returns an
/// ``AttemptEnd``. ``InProcessExecutor`` runs the test in this process, ``WorkerExecutor`` in
/// a worker process that may crash or hang without taking the run with it.
@_spi(ForToolsIntegrationOnly) public protocol TestExecutor: Sendable {
  /// Runs `test`, streaming its issues and output to `events`, and says how it ended.
  func run(_ planned: Runner.PlannedTest, events: EventSink) -> AttemptEnd
  /// Tells the executor the tests the runner hands it next, in order, so that it may get
  /// them ready ahead (a worker is sent them before its running test ends). Skipped tests
  /// (a test with a skip trait) are among them but never handed over. After a test that
  /// fails, or when the run stops, the runner may hand over other tests or none: an
  /// executor must then run what it is given, and nothing it was not.
  func prepare(_ planned: Runner.Plan.PlannedTests)
  /// Tells the executor, after ``prepare(_:)``, the entries whose tests (their first
  /// repetition) the runner hands it after those, in order, when it knows them: in a run of
  /// one lane. A hint, as ``prepare(_:)`` is: an executor whose worker starts with a list of
  /// tests (a test bundle) may give it tests of several entries at once.
  func prepare(following entries: ArraySlice<Runner.Plan.Entry>, of plan: Runner.Plan)
  /// Called once when the run ends: release what the executor holds (its worker processes).
  func finish()
  /// Whether the executor ends a test that runs past its time limit outside any wait by
  /// itself (a worker process is stopped); when it does not, the runner watches for such a
  /// test (``Configuration/hungTestGracePeriod``).
  var stopsHungTests: Bool { get }
  /// Whether each test runs outside this process (in a worker process), so that tests of
  /// several lanes can run at the same time; the runner runs more than one lane only with
  /// executors that isolate their tests.
  var isolatesTests: Bool { get }
  /// How many attempts of tests that may run side by side (an `async` test whose strategy
  /// allows it, of a parallel suite) the executor runs at once with
  /// ``startSideBySide(_:events:)``; at 1 (the default) every test runs with ``run(_:events:)``.
  var sideBySideWidth: Int { get }
  /// Whether another attempt may start side by side now (a worker that must retire takes
  /// none until the ones it runs ended).
  var takesSideBySide: Bool { get }
  /// Starts an attempt of `test` side by side with those running, streaming or holding its
  /// events for `events`; returns how it ended when it ended at once (it could not start),
  /// else `nil`: ``waitSideBySide()`` says how it ends.
  func startSideBySide(_ planned: Runner.PlannedTest, events: EventSink) -> AttemptEnd?
  /// Waits until at least one attempt started side by side ended, and says how each that did
  /// ended; none once none runs. What an attempt held was sent to its events first. An
  /// attempt the executor runs again (its worker ended while it ran, and not for it) ends
  /// once, after its run again, with the warning that says why among its events.
  func waitSideBySide() -> [SideBySideEnd]
}

/// How an attempt started side by side ended (``TestExecutor/waitSideBySide()``).
@_spi(ForToolsIntegrationOnly) public struct SideBySideEnd: Sendable, Equatable {
  /// The attempt's test.
  @_spi(ForToolsIntegrationOnly) public let test: TestID
  /// How it ended.
  @_spi(ForToolsIntegrationOnly) public let end: AttemptEnd

  /// The attempt of `test` ended as `end`.
  @_spi(ForToolsIntegrationOnly) public init(test: TestID, end: AttemptEnd) {
    self.test = test
    self.end = end
  }
}

extension TestExecutor {
  /// Does nothing: the tests are run as they are handed over.
  @_spi(ForToolsIntegrationOnly) public func prepare(_ planned: Runner.Plan.PlannedTests) {}

  /// Does nothing: each entry's tests are prepared when it starts.
  @_spi(ForToolsIntegrationOnly) public func prepare(following entries: ArraySlice<Runner.Plan.Entry>, of plan: Runner.Plan) {}

  /// Does nothing: an in-process executor holds nothing.
  @_spi(ForToolsIntegrationOnly) public func finish() {}

  /// False: a test in this process cannot be stopped.
  @_spi(ForToolsIntegrationOnly) public var stopsHungTests: Bool { false }

  /// False: the tests run in this process.
  @_spi(ForToolsIntegrationOnly) public var isolatesTests: Bool { false }

  /// 1: each test runs alone.
  @_spi(ForToolsIntegrationOnly) public var sideBySideWidth: Int { 1 }

  /// True.
  @_spi(ForToolsIntegrationOnly) public var takesSideBySide: Bool { true }

  /// Runs the attempt at once (``run(_:events:)``) and returns how it ended.
  @_spi(ForToolsIntegrationOnly) public func startSideBySide(_ planned: Runner.PlannedTest, events: EventSink) -> AttemptEnd? {
    run(planned, events: events)
  }

  /// None: every attempt ended as it started.
  @_spi(ForToolsIntegrationOnly) public func waitSideBySide() -> [SideBySideEnd] { [] }
}

/// How an attempt of a test ended, as its executor saw it. The test's owner turns it into
/// the attempt's result: the issues the attempt streamed decide the verdict of one that
/// ``returned(duration:trace:)`` (or ``skipped(reason:duration:)`` itself); every other ending is an error with an issue that says why.
@_spi(ForToolsIntegrationOnly) public enum AttemptEnd: Sendable, Equatable {
  /// The test's code ran to its end (its set-up, body, teardown), whether it passed or not,
  /// in `duration` seconds; under a schedule, `trace` is the steps it took.
  case returned(duration: Double, trace: ScheduleTrace? = nil)
  /// The test skipped itself while it ran (an `XCTSkip` thrown in a package's own XCTest
  /// test, or a package's own Swift Testing test that its library reports as skipped, as
  /// `.disabled("reason")`), after `duration` seconds, with `reason` (empty when it gave none). Its verdict
  /// is skipped with that reason, unless it recorded a failure first: it is then judged
  /// from its issues, as one that ``returned(duration:trace:)``.
  case skipped(reason: String, duration: Double)
  /// The process running the test ended before the test did: a crash, `exit`, a signal.
  /// `output` is the tail of what the test printed.
  case processEnded(ProcessEnding, output: String)
  /// The test ran past its time limit outside any wait the harness could end, so its
  /// process was stopped: with SIGTERM, or with SIGKILL too when `killed`.
  case stoppedAtLimit(Duration, killed: Bool, gracePeriod: Duration, output: String)
  /// The test ran past its time limit outside any wait the harness could end, side by side
  /// with tests still within theirs: it was left running in its process, which starts no
  /// other test and is stopped once the tests beside it ended.
  case leftRunningAtLimit(Duration, output: String)
  /// The run was interrupted by `signal` while the test ran, so its process was stopped.
  case interrupted(signal: Int32, output: String)
  /// The test could not be started (its worker process could not be started, or does not
  /// have the test); `reason` says why.
  case couldNotStart(reason: String)

  /// The issue that ends an attempt that did not return, naming why; `nil` for one that did.
  func issue(at location: SourceLocation) -> Issue? {
    func said(_ output: String) -> String { output.isEmpty ? "; it printed nothing" : "; its last output:\n\(output)" }
    switch self {
    case .returned, .skipped:
      return nil
    case .processEnded(.exited(0), let output):
      // No crash: the test called exit(0), and its process ended as if all were well.
      return Issue(kind: .crashed, message: "Exited: the worker process running the test ended with exit status 0 before "
        + "the test returned (a call to exit), so the test never ended" + said(output), sourceLocation: location)
    case .processEnded(let ending, let output):
      return Issue(kind: .crashed, message: "Crashed: the worker process running the test ended with \(ending)"
        + said(output), sourceLocation: location)
    case .stoppedAtLimit(let limit, let killed, let grace, let output):
      let how = killed ? "SIGTERM, then SIGKILL after a grace period of \(grace.secondsDescription) seconds" : "SIGTERM"
      return Issue(kind: .timeLimitExceeded, message: "Test exceeded its time limit of \(limit.secondsDescription) seconds "
        + "outside any wait the harness could end, so its worker process was stopped with \(how)" + said(output),
        sourceLocation: location)
    case .leftRunningAtLimit(let limit, let output):
      return Issue(kind: .timeLimitExceeded, message: "Test exceeded its time limit of \(limit.secondsDescription) seconds "
        + "outside any wait the harness could end, side by side with tests still within theirs, so it was left running in "
        + "its worker process, which starts no other test and is stopped once they end" + said(output),
        sourceLocation: location)
    case .interrupted(let signal, let output):
      return Issue(kind: .interrupted, message: "Interrupted: the run received \(ProcessEnding.name(of: signal)) "
        + "while the test ran, so its worker process was stopped" + said(output), sourceLocation: location)
    case .couldNotStart(let reason):
      return Issue(kind: .crashed, message: reason, sourceLocation: location)
    }
  }
}
