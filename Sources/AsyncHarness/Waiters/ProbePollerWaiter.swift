import Foundation

/// Sleeps on nothing: re-evaluates the condition at an adaptive interval, starting short
/// and growing to ``maximumInterval``, like Kiwi's probe poller and Nimble's
/// `toEventually`. It ignores wake-ups, so it also proves a suite does not depend on them.
/// On the main thread the run loop turns between polls.
public struct ProbePollerWaiter: Waiter {
  /// `probePoller`.
  public let name = "probePoller"
  /// The first interval between polls.
  public var initialInterval: Duration
  /// The longest interval between polls.
  public var maximumInterval: Duration

  /// Creates a poller whose interval starts at `initialInterval` and doubles up to
  /// `maximumInterval`.
  public init(initialInterval: Duration = .microseconds(50), maximumInterval: Duration = .milliseconds(5)) {
    self.initialInterval = initialInterval
    self.maximumInterval = maximumInterval
  }

  public func block(on condition: WaitCondition, until deadline: ContinuousClock.Instant) {
    let pumps = MainThreadPump.canPump
    poll(condition, until: deadline) { until in
      if pumps {
        MainThreadPump.turn(until: until)
      } else {
        Thread.sleep(forTimeInterval: ContinuousClock().now.duration(to: until).timeInterval)
      }
    }
  }

  public func suspend(on condition: WaitCondition, until deadline: ContinuousClock.Instant) async {
    let clock = ContinuousClock()
    var interval = initialInterval
    while !condition.isDone() && clock.now < deadline {
      try? await Task.sleep(until: min(deadline, clock.now.advanced(by: interval)), clock: clock)
      interval = min(interval * 2, maximumInterval)
    }
  }

  private func poll(_ condition: WaitCondition, until deadline: ContinuousClock.Instant,
                    sleep: (ContinuousClock.Instant) -> Void) {
    let clock = ContinuousClock()
    var interval = initialInterval
    while !condition.isDone() && clock.now < deadline {
      sleep(min(deadline, clock.now.advanced(by: interval)))
      interval = min(interval * 2, maximumInterval)
    }
  }
}

extension Waiter where Self == ProbePollerWaiter {
  /// Re-evaluates at an adaptive interval (``ProbePollerWaiter``).
  public static var probePoller: ProbePollerWaiter { ProbePollerWaiter() }
}
