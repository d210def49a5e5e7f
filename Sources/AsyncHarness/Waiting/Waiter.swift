/// A waiter strategy: how a test waits for expectations, a probe or a notification.
///
/// The harness turns every wait into a ``WaitCondition``; a waiter only decides how the
/// waiting thread (or task) sleeps and what wakes it. Any suite runs under any waiter.
///
/// A strategy must keep these rules (run ``WaiterConformance`` from the
/// `AsyncHarnessConformance` product to check them):
/// - return as soon as ``WaitCondition/isDone()`` is true, and no later than the deadline;
/// - lose no wake-up: register with ``WaitCondition/onWake(_:)`` before checking;
/// - on the main thread, keep the main run loop turning (use ``MainThreadPump``), so work
///   sent to `DispatchQueue.main` runs while the test waits;
/// - no fixed sleeps and no busy spinning; re-evaluate ``WaitCondition/isPolled``
///   conditions as time passes.
///
/// Register a third-party strategy with ``WaiterRegistry/registering(_:)`` so that
/// `--waiter NAME` can pick it.
public protocol Waiter: Sendable {
  /// The name used by `--waiter` and shown in reports, e.g. `semaphore`.
  var name: String { get }
  /// Whether tests under this waiter get queues that run work inline (``SyncQueue``)
  /// instead of real dispatch queues. Defaults to `false`.
  var runsWorkInline: Bool { get }
  /// Blocks the calling thread until the condition is done or the deadline passes.
  func block(on condition: WaitCondition, until deadline: ContinuousClock.Instant)
  /// Suspends the calling task until the condition is done or the deadline passes.
  func suspend(on condition: WaitCondition, until deadline: ContinuousClock.Instant) async
}

extension Waiter {
  public var runsWorkInline: Bool { false }

  /// Suspends on a continuation resumed by a wake-up, the deadline, or (for polled
  /// conditions) the next poll.
  public func suspend(on condition: WaitCondition, until deadline: ContinuousClock.Instant) async {
    await condition.suspendUntilDone(deadline: deadline, pollInterval: .milliseconds(1))
  }
}

extension WaitCondition {
  /// Suspends the calling task until the condition is done or the deadline passes, woken by
  /// ``wake()`` and, for polled conditions, every `pollInterval`. Waiters without an
  /// `async` way of their own use this.
  public func suspendUntilDone(deadline: ContinuousClock.Instant, pollInterval: Duration) async {
    let parking = AsyncParking()
    onWake { parking.unpark() }
    let clock = ContinuousClock()
    while !isDone() && clock.now < deadline {
      let until = isPolled ? min(deadline, clock.now.advanced(by: pollInterval)) : deadline
      await parking.park(until: until)
    }
  }
}
