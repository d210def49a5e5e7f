import Synchronization

/// A lost wake-up: a one-shot signal whose `ring` is lost when it comes before anyone waits.
public final class Doorbell: Sendable {
  private let state = Mutex<(waiter: CheckedContinuation<Void, Never>?, rung: Bool)>((nil, false))
  /// Whether a ring before the wait is remembered (the fix) or lost (the bug).
  private let remembersEarlyRings: Bool

  public init(remembersEarlyRings: Bool = false) {
    self.remembersEarlyRings = remembersEarlyRings
  }

  /// Wakes the one waiting, if any.
  public func ring() {
    let waiter = state.withLock { state in
      defer { state.waiter = nil }
      if state.waiter == nil && remembersEarlyRings { state.rung = true }
      return state.waiter
    }
    waiter?.resume()
  }

  /// Waits for a ring.
  public func wait() async {
    await withCheckedContinuation { continuation in
      let rungAlready = state.withLock { state in
        if state.rung { return true }
        state.waiter = continuation
        return false
      }
      if rungAlready { continuation.resume() }
    }
  }
}
