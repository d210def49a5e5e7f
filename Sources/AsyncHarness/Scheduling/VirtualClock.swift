/// The clock of a test under the scheduled strategy (`t.clock`): its time starts at zero
/// when the test begins and moves only when the schedule moves it, to the next delayed item
/// when nothing else can run, or to a wait's timeout when nothing can satisfy the wait.
///
/// A sleep from the test's own `async` code runs the test's pending work until virtual time
/// reaches the deadline, then returns: `try await t.clock.sleep(for: .seconds(30))` takes
/// milliseconds. A sleep from any other task (code under test sleeping in a `Task`) is a
/// delayed item: it is resumed when a wait's schedule reaches it; what the task does next
/// runs on Swift's own executor, outside the schedule. A sleep still pending when the test
/// ends throws `CancellationError`.
public struct VirtualClock: Clock {
  /// An instant of virtual time: the duration since the test began.
  public struct Instant: InstantProtocol, Sendable, Hashable, Comparable {
    /// The virtual time since the test began.
    public var offset: Duration

    /// Creates an instant `offset` after the test began.
    public init(offset: Duration) { self.offset = offset }

    /// The instant `duration` after this one.
    public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
    /// The virtual time from this instant to `other`.
    public func duration(to other: Instant) -> Duration { other.offset - offset }
    /// Whether `lhs` comes before `rhs`.
    public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
  }

  let scheduler: Scheduler
  let record: TestRecord?

  /// The current virtual time: where the schedule has got to.
  public var now: Instant { Instant(offset: scheduler.now) }
  /// One nanosecond: virtual time has no coarser grain.
  public var minimumResolution: Duration { .nanoseconds(1) }

  /// Suspends until the schedule reaches `deadline`; the sleep is a pending item of the schedule.
  /// - Parameters:
  ///   - deadline: The virtual instant to wake at.
  ///   - tolerance: Ignored: virtual time is exact.
  /// - Throws: `CancellationError` when the task is cancelled or the test ends first.
  public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    try Task.checkCancellation()
    guard deadline.offset > scheduler.now else { return }
    if record?.isCallerTheBody ?? false, scheduler.driver == nil {
      await ScheduledWait.advance(scheduler, to: deadline.offset)
      return
    }
    let sleep = Sleep()
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        let key = scheduler.sleep(until: deadline.offset) { cancelled in
          sleep.resume(cancelled ? .failure(CancellationError()) : .success(()))
        }
        sleep.start(continuation, key: key, scheduler: scheduler)
      }
    } onCancel: {
      sleep.cancel(scheduler)
    }
  }
}

import Synchronization

/// One sleep on the virtual clock: its continuation, resumed exactly once by whichever
/// comes first (the schedule reaching it, the end of the test, cancellation).
private final class Sleep: Sendable {
  private struct State {
    var continuation: CheckedContinuation<Void, any Error>?
    var key: UInt64?
    var outcome: Result<Void, any Error>?
    var cancelled = false
  }

  private let state = Mutex(State())

  /// Registers the continuation of the sleep the scheduler knows as `key` (`nil`: the test
  /// has ended). A sleep cancelled before this point ends now.
  func start(_ continuation: CheckedContinuation<Void, any Error>, key: UInt64?, scheduler: Scheduler) {
    let (cancelled, outcome) = state.withLock { state in
      state.key = key
      state.continuation = continuation
      return (state.cancelled, state.outcome)
    }
    if key == nil || cancelled {
      if let key { _ = scheduler.cancelSleep(key) }
      resume(.failure(CancellationError()))
    } else if let outcome {
      resume(outcome)
    }
  }

  /// Ends the sleep with `outcome`, unless it ended already.
  func resume(_ outcome: Result<Void, any Error>) {
    let continuation = state.withLock { state -> CheckedContinuation<Void, any Error>? in
      guard state.outcome == nil || state.continuation != nil else { return nil }
      if state.outcome == nil { state.outcome = outcome }
      defer { state.continuation = nil }
      return state.continuation
    }
    continuation?.resume(with: state.withLock { $0.outcome! })
  }

  /// The task was cancelled: the sleep ends unless the schedule already resumed it.
  func cancel(_ scheduler: Scheduler) {
    let key = state.withLock { state in
      state.cancelled = true
      return state.key
    }
    if let key, scheduler.cancelSleep(key) { resume(.failure(CancellationError())) }
  }
}
