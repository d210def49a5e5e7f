/// Sleeps on a condition variable (off the main thread) or in the main run loop (on it),
/// woken by each `fulfill()`: the model of XCTest's `XCTWaiter`, without its lost
/// wake-ups.
public struct ExpectationWaiter: Waiter {
  /// `expectation`.
  public let name = "expectation"

  /// Creates the waiter.
  public init() {}

  /// Blocks the calling thread until `condition` is done or `deadline` passes.
  /// - Parameters:
  ///   - condition: What the wait waits for.
  ///   - deadline: When the wait gives up.
  public func block(on condition: WaitCondition, until deadline: ContinuousClock.Instant) {
    condition.blockParked(deadline: deadline)
  }
}

extension Waiter where Self == ExpectationWaiter {
  /// Sleeps until a fulfillment wakes it (``ExpectationWaiter``).
  public static var expectation: ExpectationWaiter { ExpectationWaiter() }
}
