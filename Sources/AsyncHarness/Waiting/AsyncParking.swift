import Dispatch
import Synchronization

/// Suspends a task until it is unparked or a deadline passes. An unpark that arrives before
/// the task parks is kept, so no wake-up is lost.
///
/// The deadline is a dispatch timer made once for the parking and cancelled by
/// ``finish()``: nothing stays armed after the wait that used it ended.
final class AsyncParking: Sendable {
  private struct State {
    var pendingUnpark = false
    var continuation: CheckedContinuation<Void, Never>?
  }

  private let state = Mutex(State())
  private let timer: SendableBox<any DispatchSourceTimer>

  init() {
    let timer = DispatchSource.makeTimerSource(queue: .global())
    self.timer = SendableBox(timer)
    timer.setEventHandler { [weak self] in self?.unpark() }
    timer.activate()
  }

  deinit { timer.value.cancel() }

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

  /// Suspends until an unpark (one that arrived since the last park counts) or the deadline.
  func park(until deadline: ContinuousClock.Instant) async {
    let nanoseconds = ContinuousClock().now.duration(to: deadline).nanoseconds
    guard nanoseconds > 0 else { return }
    timer.value.schedule(deadline: .now() + .nanoseconds(nanoseconds), leeway: .microseconds(50))
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
  }

  /// Cancels the deadline timer: the wait is over.
  func finish() {
    timer.value.cancel()
  }
}
