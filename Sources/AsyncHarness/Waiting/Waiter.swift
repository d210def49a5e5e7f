/// A waiter strategy: how a test waits for expectations, a probe or a notification.
///
/// The harness turns every wait into a ``WaitCondition``; a waiter only decides how the
/// waiting thread (or task) sleeps and what wakes it. Any suite runs under any waiter.
///
/// A strategy must keep these rules (run `WaiterConformance` from the
/// `AsyncHarnessConformance` product to check them):
/// - return as soon as ``WaitCondition/isDone()`` is true, and no later than the deadline;
/// - lose no wake-up: register with ``WaitCondition/onWake(_:)`` before checking;
/// - on the main thread, keep the main run loop turning (use ``MainThreadPump``), so work
///   sent to `DispatchQueue.main` runs while the test waits;
/// - no fixed sleeps and no busy spinning; re-evaluate ``WaitCondition/isPolled``
///   conditions as time passes.
///
/// A strategy also decides which queues and which clock a test gets
/// (``makeQueues(for:)``): real ones by default, inline ones under the synchronous
/// strategy. Its waits find them again through ``WaitCondition/queues``.
///
/// Register a third-party strategy with ``WaiterRegistry/registering(_:)`` so that
/// `--waiter NAME` can pick it.
public protocol Waiter: Sendable {
  /// The name used by `--waiter` and shown in reports, e.g. `semaphore`.
  var name: String { get }
  /// Makes the queues and the clock of a test run under this strategy: `t.main`,
  /// `t.background`, `t.queue("label")` and `t.clock`. Defaults to ``RealQueues``.
  func makeQueues(for test: QueueSetup) -> any TestQueues
  /// Blocks the calling thread until the condition is done or the deadline passes.
  func block(on condition: WaitCondition, until deadline: ContinuousClock.Instant)
  /// Suspends the calling task until the condition is done or the deadline passes.
  func suspend(on condition: WaitCondition, until deadline: ContinuousClock.Instant) async

  /// The scope a test's code runs in under this strategy, when the strategy runs the
  /// test's `async` code itself (as the scheduled strategy does, on its schedule); `nil`
  /// by default, and the code runs on Swift's own executors.
  /// - Parameter context: the test's context, with the queues ``makeQueues(for:)`` made.
  func scope(for context: TestContext) -> (any WaiterScope)?

  /// Whether `async` tests under this strategy may run side by side with others in one
  /// process (tests of a ``SuiteTrait/parallel`` suite in a worker): `true` by default. A
  /// strategy that runs a test's code itself, as the scheduled strategy does, holds what its
  /// process has of Swift concurrency and says `false`: each of its tests runs alone.
  var runsTestsSideBySide: Bool { get }
}

extension Waiter {
  /// True: the test's code runs on Swift's own executors, beside other tests' if need be.
  public var runsTestsSideBySide: Bool { true }

  /// Real queues (``RealQueues``): the default for a strategy that does not order work itself.
  /// - Parameter test: The test the queues are for.
  /// - Returns: The test's queues and clock.
  public func makeQueues(for test: QueueSetup) -> any TestQueues {
    RealQueues(for: test)
  }

  /// Suspends on a continuation resumed by a wake-up, the deadline, or (for polled
  /// conditions) the next evaluation of the standard ``PollSchedule``.
  public func suspend(on condition: WaitCondition, until deadline: ContinuousClock.Instant) async {
    await condition.suspendUntilDone(deadline: deadline)
  }

  /// No scope: the test's `async` code runs on Swift's own executors.
  /// - Parameter context: the test's context.
  public func scope(for context: TestContext) -> (any WaiterScope)? { nil }
}

extension WaitCondition {
  /// Blocks the calling thread until the condition is done or the deadline passes: the one
  /// waiting loop of every blocking strategy.
  ///
  /// It checks ``isDone()``, then calls `sleep` with the instant to sleep until: the
  /// deadline, or for a polled condition (or every condition, with `pollsEverything`) the
  /// next evaluation of `schedule`. `sleep` must return early when woken, and must not lose
  /// a wake-up that arrived since it last returned.
  public func blockUntilDone(deadline: ContinuousClock.Instant, schedule: PollSchedule = .standard,
                             pollsEverything: Bool = false, sleep: (ContinuousClock.Instant) -> Void) {
    let start = ContinuousClock().now
    while let next = nextCheck(started: start, deadline: deadline, schedule: schedule, pollsEverything: pollsEverything) {
      sleep(next)
    }
  }

  /// Suspends the calling task until the condition is done or the deadline passes, woken by
  /// ``wake()`` and, for polled conditions, by `schedule`. Waiters without an `async` way
  /// of their own use this; it leaves no timer armed once it returns.
  ///
  /// With `pollsEverything`, every condition is re-evaluated on `schedule` and wake-ups are
  /// ignored (the probe poller's way).
  public func suspendUntilDone(deadline: ContinuousClock.Instant, schedule: PollSchedule = .standard,
                               pollsEverything: Bool = false) async {
    let parking = AsyncParking()
    defer { parking.finish() }
    if !pollsEverything { onWake { parking.unpark() } }
    let start = ContinuousClock().now
    while let next = nextCheck(started: start, deadline: deadline, schedule: schedule, pollsEverything: pollsEverything) {
      await parking.park(until: next)
    }
  }

  /// The instant the waiting loop sleeps until next, or `nil` when the wait is over (done,
  /// or past its deadline).
  func nextCheck(started start: ContinuousClock.Instant, deadline: ContinuousClock.Instant,
                 schedule: PollSchedule, pollsEverything: Bool) -> ContinuousClock.Instant? {
    guard !isDone() else { return nil }
    let now = ContinuousClock().now
    guard now < deadline else { return nil }
    guard isPolled || pollsEverything else { return deadline }
    return min(deadline, now.advanced(by: schedule.interval(afterWaiting: start.duration(to: now))))
  }
}
