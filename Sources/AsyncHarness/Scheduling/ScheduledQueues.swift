import Dispatch

/// A ``Dispatching`` queue whose work the scheduled strategy runs itself: `async` and
/// `asyncAfter` put items in the test's pending set, and the test's waits run them one at a
/// time, in the order the test's ``Schedule`` picks, on virtual time. The queue is serial:
/// only its first item is ever runnable. Items of the main queue run on the main thread.
///
/// `sync` first runs the items the queue already holds, in order, then the work, on the
/// caller's thread (as a serial queue would make the caller wait for them); a `sync` that
/// closes a dispatch cycle is reported as a deadlock, as on every other queue. After its
/// test ended, the queue runs work at once on the caller's thread.
package struct ScheduledQueue: Dispatching {
  /// The queue's identity, which ``QueueIdentity/current`` reports while its work runs.
  package let identity: QueueIdentity
  private let index: Int
  private let scheduler: Scheduler
  private let issues: IssueSink

  init(identity: QueueIdentity, index: Int, scheduler: Scheduler, issues: IssueSink) {
    self.identity = identity
    self.index = index
    self.scheduler = scheduler
    self.issues = issues
  }

  /// Runs `work` on this queue, later.
  package func async(_ work: @escaping @Sendable () -> Void) {
    guard !scheduler.submit(to: index, work) else { return }
    DispatchChain.$frames.withValue([identity], operation: work)
  }

  /// Runs `work` on this queue once `delay` has passed.
  package func asyncAfter(_ delay: Duration, _ work: @escaping @Sendable () -> Void) {
    guard !scheduler.submit(to: index, after: delay, work) else { return }
    let identity = identity
    DispatchQueue.global().asyncAfter(deadline: .now() + delay.dispatchInterval) {
      DispatchChain.$frames.withValue([identity], operation: work)
    }
  }

  /// Runs `work` on this queue and waits for it.
  /// - Returns: What `work` returns.
  package func sync<T>(_ work: () throws -> T) rethrows -> T {
    let (chain, isCycle) = DispatchChain.enter(identity, issues: issues)
    if !isCycle {
      for item in scheduler.takeReady(from: index) { scheduler.run(item, chain: chain) }
    }
    return try DispatchChain.$frames.withValue(chain, operation: work)
  }
}

/// The queues and the clock of a test under the scheduled strategy: `ScheduledQueue`s
/// sharing one pending set, and a ``VirtualClock`` that moves only when the schedule
/// advances it.
public struct ScheduledQueues: TestQueues {
  /// The schedule the test's work runs in.
  public var schedule: Schedule { scheduler.schedule }
  /// The queue that stands for the main queue (`t.main`).
  public let main: any Dispatching
  /// The clock the test hands to code that sleeps or reads time.
  public let clock: any Clock<Duration>
  let scheduler: Scheduler
  private let issues: IssueSink

  /// The scheduled queues of the test `setup` names, following `schedule`. Their pending
  /// work is dropped when the test ends.
  public init(for setup: QueueSetup, schedule: Schedule) {
    let scheduler = Scheduler(schedule: schedule, record: setup.record, reportsSteps: setup.reportsSteps)
    self.scheduler = scheduler
    issues = setup.issues
    main = ScheduledQueue(identity: .main, index: ScheduleRunQueues.mainQueue, scheduler: scheduler, issues: setup.issues)
    clock = VirtualClock(scheduler: scheduler, record: setup.record)
    setup.whenTestEnds { scheduler.end() }
  }

  /// Makes a queue for the test, named `label` (as `t.queue("io")` does).
  /// - Parameter label: The queue's name in messages.
  /// - Returns: The queue.
  public func makeQueue(label: String) -> any Dispatching {
    let identity = QueueIdentity(label: label)
    return ScheduledQueue(identity: identity, index: scheduler.addQueue(identity), scheduler: scheduler, issues: issues)
  }
}
