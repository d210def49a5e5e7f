/// Sleeps on nothing: re-evaluates every condition (expectations too) on a
/// ``PollSchedule``, like Kiwi's probe poller and Nimble's `toEventually`. It ignores
/// wake-ups, so it also proves a suite does not depend on them. On the main thread it runs
/// the run loop's ready work (main-queue blocks, main-actor jobs) at each evaluation.
public struct ProbePollerWaiter: Waiter {
  /// `probePoller`.
  public let name = "probePoller"
  /// When conditions are re-evaluated.
  public var schedule: PollSchedule

  /// Creates a poller that re-evaluates on `schedule`.
  public init(schedule: PollSchedule = .poller) {
    self.schedule = schedule
  }

  /// Blocks the calling thread until `condition` is done or `deadline` passes.
  /// - Parameters:
  ///   - condition: What the wait waits for.
  ///   - deadline: When the wait gives up.
  public func block(on condition: WaitCondition, until deadline: ContinuousClock.Instant) {
    condition.blockParked(deadline: deadline, schedule: schedule, pollsEverything: true)
  }

  /// Suspends the calling task until `condition` is done or `deadline` passes.
  /// - Parameters:
  ///   - condition: What the wait waits for.
  ///   - deadline: When the wait gives up.
  public func suspend(on condition: WaitCondition, until deadline: ContinuousClock.Instant) async {
    await condition.suspendUntilDone(deadline: deadline, schedule: schedule, pollsEverything: true)
  }
}

extension Waiter where Self == ProbePollerWaiter {
  /// Re-evaluates at an adaptive interval (``ProbePollerWaiter``).
  public static var probePoller: ProbePollerWaiter { ProbePollerWaiter() }
}
