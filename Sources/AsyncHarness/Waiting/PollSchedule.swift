/// When a wait re-evaluates a condition that can change without waking it (a probe over
/// plain state): often just after the wait begins, where a test's latency is decided, and
/// less and less often as the wait goes on, where an idle probe would only burn CPU.
///
/// The interval is the time waited so far divided by ``divisor``, kept between
/// ``minimumInterval`` and ``maximumInterval``. With the standard schedule that is 100 µs
/// for the first 1.6 ms, 1 ms at 16 ms, and 20 ms from 320 ms on: about 135 evaluations in
/// the first second, and a condition that flips a random 0.5–10 ms into the wait is seen a
/// median ~0.2 ms later (XCTest's predicate expectation polls every 10 ms).
public struct PollSchedule: Sendable, Hashable {
  /// The shortest interval, at the start of a wait.
  public var minimumInterval: Duration
  /// The longest interval, once a wait has gone on.
  public var maximumInterval: Duration
  /// The interval is the time waited so far divided by this.
  public var divisor: Int

  /// Creates a schedule.
  public init(minimumInterval: Duration = .microseconds(100), maximumInterval: Duration = .milliseconds(20),
              divisor: Int = 16) {
    self.minimumInterval = minimumInterval
    self.maximumInterval = maximumInterval
    self.divisor = max(1, divisor)
  }

  /// The schedule of probe waits under every built-in strategy.
  public static let standard = PollSchedule()

  /// The probe poller's schedule: it polls every wait, expectations too, so it polls half
  /// as often (elapsed / 8): about 90 evaluations in the first second instead of 135, and
  /// a median ~0.1 ms after a flip 0.5–10 ms into the wait.
  public static let poller = PollSchedule(divisor: 8)

  /// The interval between evaluations after waiting `elapsed`.
  public func interval(afterWaiting elapsed: Duration) -> Duration {
    min(maximumInterval, max(minimumInterval, elapsed / divisor))
  }
}
