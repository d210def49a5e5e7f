import Synchronization

/// Suspends a task until it is unparked or a deadline passes. An unpark that arrives
/// before the task parks is kept, so no wake-up is lost.
final class AsyncParking: Sendable {
  private struct State {
    var pendingUnpark = false
    var continuation: CheckedContinuation<Void, Never>?
  }

  private let state = Mutex(State())

  func unpark() {
    let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
      guard let continuation = state.continuation else {
        state.pendingUnpark = true
        return nil
      }
      state.continuation = nil
      return continuation
    }
    continuation?.resume()
  }

  func park(until deadline: ContinuousClock.Instant) async {
    let timer = Task { [weak self] in
      try? await Task.sleep(until: deadline, clock: .continuous)
      self?.unpark()
    }
    await withCheckedContinuation { continuation in
      let resumeNow = state.withLock { state -> Bool in
        if state.pendingUnpark {
          state.pendingUnpark = false
          return true
        }
        state.continuation = continuation
        return false
      }
      if resumeNow { continuation.resume() }
    }
    timer.cancel()
    state.withLock { $0.pendingUnpark = false }
  }
}
