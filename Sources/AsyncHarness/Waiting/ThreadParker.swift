import CoreFoundation
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Parks a thread on a condition variable until it is unparked or a deadline passes. An
/// unpark that arrives while the thread is not parked is kept for its next park, so no
/// wake-up is lost.
///
/// `@unchecked Sendable`: `pending` is only touched with `condition` locked.
final class ThreadParker: @unchecked Sendable {
  private let condition = NSCondition()
  private var pending = false

  func unpark() {
    condition.lock()
    pending = true
    condition.signal()
    condition.unlock()
  }

  /// Sleeps until an unpark (one that arrived since the last park counts) or the deadline.
  func park(until deadline: ContinuousClock.Instant) {
    let clock = ContinuousClock()
    condition.lock()
    defer { condition.unlock() }
    while !pending {
      let remaining = clock.now.duration(to: deadline).timeInterval
      guard remaining > 0 else { return }
      _ = condition.wait(until: Date(timeIntervalSinceNow: remaining))
    }
    pending = false
  }

  /// Sleeps the calling thread until `deadline`, or until a signal interrupts the sleep: one
  /// system call, for a thread nothing wakes (a parked sleep also takes and signals its lock).
  static func sleep(until deadline: ContinuousClock.Instant) {
    let remaining = ContinuousClock().now.duration(to: deadline)
    guard remaining > .zero else { return }
    let (seconds, attoseconds) = remaining.components
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
    _ = nanosleep(&request, nil)
  }
}
