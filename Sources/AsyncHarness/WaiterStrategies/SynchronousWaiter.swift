/// Never sleeps: tests get ``InlineQueues`` (``SyncQueue``s for `t.main`, `t.background`
/// and `t.queue(_:)`), so work runs inline and every wait should already be satisfied
/// when it starts.
///
/// When a wait is not (work escaped the test's queues, such as a `Task` or URLSession's
/// own delegate queue), it records a warning naming the wait and where it was made, then
/// falls back to ``ExpectationWaiter``, so verdicts stay comparable across strategies.
public struct SynchronousWaiter: Waiter {
  /// `synchronous`.
  public let name = "synchronous"

  /// Creates the waiter.
  public init() {}

  /// The queues and clock this strategy gives each test.
  /// - Parameter test: The test the queues are for.
  /// - Returns: The test's queues and clock.
  public func makeQueues(for test: QueueSetup) -> any TestQueues {
    InlineQueues(for: test)
  }

  /// Blocks the calling thread until `condition` is done or `deadline` passes.
  /// - Parameters:
  ///   - condition: What the wait waits for.
  ///   - deadline: When the wait gives up.
  public func block(on condition: WaitCondition, until deadline: ContinuousClock.Instant) {
    guard !condition.isDone() else { return }
    warnFallback(condition)
    ExpectationWaiter().block(on: condition, until: deadline)
  }

  /// Suspends the calling task until `condition` is done or `deadline` passes.
  /// - Parameters:
  ///   - condition: What the wait waits for.
  ///   - deadline: When the wait gives up.
  public func suspend(on condition: WaitCondition, until deadline: ContinuousClock.Instant) async {
    guard !condition.isDone() else { return }
    warnFallback(condition)
    await ExpectationWaiter().suspend(on: condition, until: deadline)
  }

  private func warnFallback(_ condition: WaitCondition) {
    condition.recordWarning(
      "synchronous waiter: \(condition.summary) was not satisfied when the wait began at \(condition.sourceLocation); work escaped the test's queues, so it fell back to a blocking wait")
  }
}

extension Waiter where Self == SynchronousWaiter {
  /// Runs work inline and expects waits to be satisfied already (``SynchronousWaiter``).
  public static var synchronous: SynchronousWaiter { SynchronousWaiter() }
}
