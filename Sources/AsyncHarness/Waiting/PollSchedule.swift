/// When a wait re-evaluates a condition that can change without waking it (a probe over
/// plain state): often just after the wait begins, where a test's latency is decided, and
/// less and less often as the wait goes on, where an idle probe would only burn CPU.
///
/// The interval is the time waited so far divided by ``divisor``, kept between
/// ``minimumInterval`` and ``maximumInterval``. With the standard schedule that is 100 µs
/// for the first 1.6 ms, 1 ms at 16 ms, and 20 ms from 320 ms on: about 135 evaluations in
/// the first second, and a condition that flips a random 0.5–10 ms into the wait is seen a
/// median ~0.2 ms later (XCTest's predicate expectation polls every 10 ms).
///
/// A schedule with ``patience`` backs off once a wait has gone that long without its
/// condition holding: the interval is then the time waited divided by ``lateDivisor``.
public struct PollSchedule: Sendable, Hashable {
  /// The shortest interval, at the start of a wait.
  public var minimumInterval: Duration
  /// The longest interval, once a wait has gone on.
  public var maximumInterval: Duration
  /// The interval is the time waited so far divided by this.
  public var divisor: Int
  /// How long a wait is re-evaluated by ``divisor``; `nil`, for as long as it lasts.
  public var patience: Duration?
  /// The interval after ``patience`` is the time waited so far divided by this.
  public var lateDivisor: Int

  /// Creates a schedule.
  /// - Parameters:
  ///   - minimumInterval: The shortest interval, at the start of a wait.
  ///   - maximumInterval: The longest interval, once a wait has gone on.
  ///   - divisor: The interval is the time waited so far divided by this.
  ///   - patience: How long a wait is re-evaluated by `divisor`; `nil`, for as long as it lasts.
  ///   - lateDivisor: The divisor after `patience`.
  public init(minimumInterval: Duration = .microseconds(100), maximumInterval: Duration = .milliseconds(20),
              divisor: Int = 16, patience: Duration? = nil, lateDivisor: Int = 2) {
    self.minimumInterval = minimumInterval
    self.maximumInterval = maximumInterval
    self.divisor = max(1, divisor)
    self.patience = patience
    self.lateDivisor = max(1, lateDivisor)
  }

  /// The schedule of probe waits under every built-in strategy.
  public static let standard = PollSchedule()

  /// The probe poller's schedule: it polls every wait, expectations too, so it polls half
  /// as often (elapsed / 8), and after 10 ms a quarter as often again (elapsed / 2): about 80
  /// evaluations in the first second instead of 135, 36 in the first 100 ms, each waking a
  /// thread (~15 µs of CPU here); a flip 0.5–10 ms into the wait is seen as soon as before.
  public static let poller = PollSchedule(divisor: 8, patience: .milliseconds(10), lateDivisor: 2)

  /// The interval between evaluations after waiting `elapsed`.
  public func interval(afterWaiting elapsed: Duration) -> Duration {
    let patient = patience.map { elapsed <= $0 } ?? true
    return min(maximumInterval, max(minimumInterval, elapsed / (patient ? divisor : lateDivisor)))
  }
}
