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
  /// Tells the executor the steps the runner hands it next, in order, so that it may get
  /// them ready ahead (a worker is sent them before its running test ends). After a step
  /// that fails, or when the run stops, the runner may hand over other steps or none: an
  /// executor must then run what it is given, and nothing it was not.
  func prepare(_ steps: [Runner.Step])
  /// Called once when the run ends: release what the executor holds (its worker processes).
  func finish()
  /// Whether the executor ends a test that runs past its time limit outside any wait by
  /// itself (a worker process is stopped); when it does not, the runner watches for such a
  /// test (``Configuration/hungTestGracePeriod``).
  var stopsHungTests: Bool { get }
}

extension TestExecutor {
  /// Does nothing: the steps are run as they are handed over.
  public func prepare(_ steps: [Runner.Step]) {}

  /// Does nothing: an in-process executor holds nothing.
  public func finish() {}

  /// False: a test in this process cannot be stopped.
  public var stopsHungTests: Bool { false }
}
