/// What a waiter strategy that runs a test's code itself wraps around one test, as a
/// test-scoping trait does in swift-testing: the executor hands it the test's `async` code
/// to run, and asks it, once the test's code has ended, for what it has to say about the run.
/// The executor names no strategy: it only talks to the scope.
///
/// A strategy returns one from ``Waiter/scope(for:)``; most return none, and their tests'
/// `async` code runs in tasks on Swift's own executors while the calling thread waits.
public protocol WaiterScope: Sendable {
  /// Runs a piece of the test's `async` code (its body, or an `async` teardown block):
  /// `start` starts the code's task; return once `finished` holds, `deadline` (the test's
  /// time limit) passed, or the code can make no progress.
  /// - Returns: ``AsyncCodeRun/declined`` to let the executor run the code as usual (for
  ///   instance when not called where the scope can run it); otherwise how the run ended.
  func runAsyncCode(until deadline: ContinuousClock.Instant, finished: WaitCondition,
                    start: @escaping @Sendable () -> Void) -> AsyncCodeRun

  /// What the scope says about the test once its code has ended, carried by its result: for
  /// a schedule, the steps the test took, which a replay token carries.
  var trace: ScheduleTrace? { get }
}

/// How a ``WaiterScope`` ran a test's `async` code.
public enum AsyncCodeRun: Sendable, Equatable {
  /// The scope did not run it: the executor runs it as usual.
  case declined
  /// The code ended, or its deadline passed (the executor tells them apart by `finished`).
  case ran
  /// Nothing can resume the code: it is stopped, and the test fails with this issue.
  case stuck(Issue)
}
