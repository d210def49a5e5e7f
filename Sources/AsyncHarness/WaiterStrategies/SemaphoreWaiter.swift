import Dispatch

/// Sleeps on a semaphore made for each wait (never a global one), signalled by each
/// `fulfill()`: the ATHStart / ATHNotify / ATHWait pattern. On the main thread it turns
/// the main run loop instead, as every strategy must; in `async` code it suspends.
public struct SemaphoreWaiter: Waiter {
  /// `semaphore`.
  public let name = "semaphore"

  /// Creates the waiter.
  public init() {}

  /// Blocks the calling thread until `condition` is done or `deadline` passes.
  /// - Parameters:
  ///   - condition: What the wait waits for.
  ///   - deadline: When the wait gives up.
  public func block(on condition: WaitCondition, until deadline: ContinuousClock.Instant) {
    if MainThreadPump.canPump {
      condition.blockParked(deadline: deadline)
      return
    }
    let semaphore = DispatchSemaphore(value: 0)
    condition.onWake { semaphore.signal() }
    condition.blockUntilDone(deadline: deadline) { until in
      let nanoseconds = ContinuousClock().now.duration(to: until).nanoseconds
      _ = semaphore.wait(timeout: .now() + .nanoseconds(max(0, nanoseconds)))
    }
  }
}

extension Waiter where Self == SemaphoreWaiter {
  /// Sleeps on a per-wait semaphore (``SemaphoreWaiter``).
  public static var semaphore: SemaphoreWaiter { SemaphoreWaiter() }
}
