/// Runs one step of a plan and emits its events: `testStarted`, then the issues and output
/// as they happen, then `testEnded` with the result it returns.
///
/// The runner walks the plan and hands each step that runs code to its executor;
/// ``InProcessExecutor`` runs the test in this process, ``WorkerExecutor`` in a worker
/// process that may crash or hang without taking the run with it.
public protocol TestExecutor: Sendable {
  /// Runs `step`, sending its events to `events`, and returns its result (the one its
  /// `testEnded` event carries).
  func run(_ step: Runner.Step, events: EventSink) -> TestResult
  /// Called once when the run ends: release what the executor holds (its worker processes).
  func finish()
  /// Whether the executor ends a test that runs past its time limit outside any wait by
  /// itself (a worker process is stopped); when it does not, the runner watches for such a
  /// test (``Configuration/hungTestGracePeriod``).
  var stopsHungTests: Bool { get }
}

extension TestExecutor {
  /// Does nothing: an in-process executor holds nothing.
  public func finish() {}

  /// False: a test in this process cannot be stopped.
  public var stopsHungTests: Bool { false }
}
