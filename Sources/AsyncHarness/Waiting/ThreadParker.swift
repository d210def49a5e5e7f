import Foundation

/// Parks a thread on a condition variable until it is unparked or a deadline passes. An
/// unpark that arrives before the thread parks is kept, so no wake-up is lost.
///
/// `@unchecked Sendable`: `generation` is only touched with `condition` locked.
final class ThreadParker: @unchecked Sendable {
  private let condition = NSCondition()
  private var generation = 0

  /// The current generation; pass it to ``park(after:until:)`` after checking what you
  /// wait for, so an unpark in between is not lost.
  var ticket: Int {
    condition.lock()
    defer { condition.unlock() }
    return generation
  }

  func unpark() {
    condition.lock()
    generation += 1
    condition.signal()
    condition.unlock()
  }

  /// Sleeps until an unpark newer than `ticket`, or the deadline.
  func park(after ticket: Int, until deadline: ContinuousClock.Instant) {
    let clock = ContinuousClock()
    condition.lock()
    defer { condition.unlock() }
    while generation == ticket {
      let remaining = clock.now.duration(to: deadline).timeInterval
      guard remaining > 0 else { return }
      _ = condition.wait(until: Date(timeIntervalSinceNow: remaining))
    }
  }

  /// Blocks the calling thread on `waitCondition`, parked between checks, until it is done
  /// or the deadline passes; polled conditions are re-evaluated every `pollInterval`.
  func wait(on waitCondition: WaitCondition, until deadline: ContinuousClock.Instant,
            pollInterval: Duration) {
    let clock = ContinuousClock()
    while true {
      let seen = ticket
      guard !waitCondition.isDone(), clock.now < deadline else { return }
      park(after: seen, until: waitCondition.isPolled
           ? min(deadline, clock.now.advanced(by: pollInterval)) : deadline)
    }
  }
}
