/// Runs one step of a plan and emits its events: `testStarted`, then the issues and output
/// as they happen, then `testEnded` with the result it returns.
///
/// The runner walks the plan and hands each step that runs code to its executor;
/// ``InProcessExecutor`` runs the test in this process.
public protocol TestExecutor: Sendable {
  /// Runs `step`, sending its events to `events`, and returns its result (the one its
  /// `testEnded` event carries).
  func run(_ step: Runner.Step, events: EventSink) -> TestResult
}
