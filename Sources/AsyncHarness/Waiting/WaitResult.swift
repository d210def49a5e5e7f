/// How a wait made with `t.result(waitingFor:timeout:)`
/// ended: XCTWaiter's `Result`, for tests that branch on whether something happened in
/// time instead of failing.
public enum WaitResult: Sendable, Hashable {
  /// Every expectation was fulfilled (inverted ones stayed unfulfilled through the timeout).
  case completed
  /// The timeout passed with expectations unfulfilled.
  case timedOut
  /// Expectations were fulfilled out of the enforced order.
  case incorrectOrder
  /// An inverted expectation was fulfilled.
  case invertedFulfillment
  /// The wait ended before it was decided: a failing issue was recorded during it, the
  /// test ran out of time, or the wait was misuse (that issue is recorded).
  case interrupted
}
