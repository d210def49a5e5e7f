/// Runs the test's work itself, one item at a time, in an order chosen by a seeded
/// ``Schedule``, on virtual time: the strategy that makes ordering bugs reproducible.
///
/// Tests get ``ScheduledQueues``: `t.main`, `t.background` and `t.queue(_:)` put work into
/// a pending set instead of running it, and `t.clock` is a ``VirtualClock``. During a wait
/// the waiter repeatedly takes the item the schedule's policy picks among the runnable ones
/// and runs it, until the wait is decided; when nothing is runnable, virtual time jumps to
/// the next delayed item (`asyncAfter`, a sleep on `t.clock`), so a 30 s back-off takes no
/// time. When nothing is runnable and nothing is due before the wait's timeout, the wait
/// ends at once (after a quiet period of 200 ms in which work from outside may still arrive),
/// as a timeout whose failure says no pending work could satisfy it and names the queues.
///
/// Swift concurrency joins the schedule while the test's `async` code runs (Swift 6.3 and
/// later): the body runs as a task of the schedule, and the jobs of the tasks, child tasks,
/// actors and main-actor work it reaches become pending items (a task's jobs form one queue,
/// in first-seen order); `Task.sleep` and sleeps on `ContinuousClock` wait on virtual time.
/// The body's waits register with the schedule's driver instead of stepping themselves. A
/// body suspended on something nothing can resume, with no wait pending, fails at once
/// saying so; a job that blocks its thread longer than the quiet period makes the schedule
/// give Swift concurrency back to Swift's own executors, with a warning naming it.
///
/// Work that escapes the schedule (a real `DispatchQueue` or `DispatchQueue.main`, threads,
/// URLSession's delegate queue, actors with a custom executor, a blocking body's `Task {}`)
/// is not ordered: when it wakes a wait or sends work to the schedule, the wait records a
/// warning naming it and falls back to real time, and so do the test's later waits, as
/// under ``SynchronousWaiter``.
///
/// The same schedule gives the same order on every machine; a failing test carries a
/// replay token (`replay: --schedule 7:pct3:9f2c1a:41-0be311`: the schedule, the test, the
/// steps its run took), `--schedule TOKEN` reruns that schedule and warns if the steps
/// differ, and `--explore N` runs each test under N seeds.
public struct ScheduledWaiter: Waiter {
  /// `scheduled`.
  public let name = "scheduled"
  /// False: the schedule holds the process's capture of Swift concurrency while a test runs,
  /// so each test runs alone in its process.
  public var runsTestsSideBySide: Bool { false }
  /// The schedule of a run that chooses none (no `--explore` or `--schedule`).
  public var defaultSchedule: Schedule
  /// How long a wait with no runnable or due work stays parked for work from outside the
  /// schedule before it ends as unsatisfiable.
  public var quietPeriod: Duration

  /// Creates the waiter.
  /// - Parameters:
  ///   - defaultSchedule: the schedule of runs that choose none; `--explore` keeps its
  ///     policy and varies the seed.
  ///   - quietPeriod: how long a wait that no pending work can satisfy waits for work from
  ///     outside the schedule before it ends.
  public init(defaultSchedule: Schedule = Schedule(seed: 0, policy: .randomWalk),
              quietPeriod: Duration = .milliseconds(200)) {
    self.defaultSchedule = defaultSchedule
    self.quietPeriod = quietPeriod
  }

  /// The queues and clock this strategy gives each test.
  /// - Parameter test: The test the queues are for.
  /// - Returns: The test's queues and clock.
  public func makeQueues(for test: QueueSetup) -> any TestQueues {
    ScheduledQueues(for: test, schedule: test.schedule ?? defaultSchedule)
  }

  /// The test's schedule as its scope: on the main thread its `async` code runs as a task
  /// of the schedule, and the steps it took become its trace.
  /// - Parameter context: the test's context, whose queues this strategy made.
  public func scope(for context: TestContext) -> (any WaiterScope)? {
    guard let scheduler = (context.queues as? ScheduledQueues)?.scheduler else { return nil }
    return ScheduleScope(scheduler: scheduler, quietPeriod: quietPeriod)
  }

  /// Blocks the calling thread until `condition` is done or `deadline` passes.
  /// - Parameters:
  ///   - condition: What the wait waits for.
  ///   - deadline: When the wait gives up.
  public func block(on condition: WaitCondition, until deadline: ContinuousClock.Instant) {
    guard var wait = scheduledWait(condition, until: deadline) else {
      return condition.blockParked(deadline: deadline)
    }
    wait.block()
  }

  /// Whether a wait of the caller must run in real time: a driver runs the schedule
  /// and the caller is not scheduled work, so stepping the schedule here would run items
  /// beside the driver.
  private static func isOutsideDrivenSchedule(_ scheduler: Scheduler) -> Bool {
    scheduler.driver != nil && !scheduler.isRunningItemOnThisThread
  }

  /// Suspends the calling task until `condition` is done or `deadline` passes.
  /// - Parameters:
  ///   - condition: What the wait waits for.
  ///   - deadline: When the wait gives up.
  public func suspend(on condition: WaitCondition, until deadline: ContinuousClock.Instant) async {
    guard var wait = scheduledWait(condition, until: deadline) else {
      return await condition.suspendUntilDone(deadline: deadline)
    }
    if let driver = wait.scheduler.driver {
      // Scheduled code registers its wait with the driver, which runs the schedule.
      return await driver.wait(on: condition, until: deadline, timeout: wait.timeout)
    }
    await wait.suspend()
  }

  /// The scheduled wait on the test's pending work, or `nil` for a condition whose test has
  /// no scheduled queues (one made outside a test): that one waits in real time.
  private func scheduledWait(_ condition: WaitCondition, until deadline: ContinuousClock.Instant) -> ScheduledWait? {
    guard let scheduler = (condition.queues as? ScheduledQueues)?.scheduler,
          !Self.isOutsideDrivenSchedule(scheduler) else { return nil }
    return ScheduledWait(condition, scheduler: scheduler, deadline: deadline,
                         timeout: condition.timeout ?? ContinuousClock().now.duration(to: deadline),
                         quietPeriod: quietPeriod)
  }
}

extension Waiter where Self == ScheduledWaiter {
  /// Runs the test's work in a seeded order on virtual time (``ScheduledWaiter``).
  public static var scheduled: ScheduledWaiter { ScheduledWaiter() }
}
