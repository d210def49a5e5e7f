import Foundation

/// One wait under the scheduled strategy: it runs the schedule's steps, one work item at a
/// time, until the wait is decided.
///
/// When nothing is runnable, virtual time moves to the next delayed item (no later than the
/// wait's timeout). When nothing is runnable or due before the timeout, the wait parks for a
/// quiet period, woken by any work that arrives, any fulfillment and (for a probe) on the
/// poll schedule: what wakes it came from outside the schedule (a real queue, a `Task`,
/// another thread), and the wait goes on. A quiet period with nothing arriving means no
/// pending work can satisfy the wait: it ends at once, as a timeout in virtual time, saying
/// so. (A quiet period the waiting thread itself woke from late, on a busy machine, is
/// followed by another: outside work may be just as late.) Once work from outside the schedule has been seen in a test, its waits fall back to
/// real time instead (as the synchronous strategy does), and each wait it took part in
/// records a warning.
struct ScheduledWait {
  let condition: WaitCondition
  let scheduler: Scheduler
  /// The real deadline: the wait's timeout, or the test's time limit when that comes first.
  let deadline: ContinuousClock.Instant
  /// The wait's timeout on the virtual clock.
  let virtualDeadline: Duration
  let quietPeriod: Duration
  /// The wait's timeout.
  let timeout: Duration
  /// Whether work from outside the schedule may be waited for (not for a sleep of the
  /// test's own code, which only moves virtual time).
  let waitsForOutsideWork: Bool
  /// Whether work from outside the schedule took part in this wait.
  private var sawOutsideWork = false
  /// The idle period in progress, if any.
  private var idle: Idle?
  /// Whether the real deadline is the test's time limit, coming before the wait's timeout.
  private let endsAtTimeLimit: Bool

  /// Whether the test's time limit has ended the wait (the harness then records it).
  private var isCutByTimeLimit: Bool { endsAtTimeLimit && ContinuousClock().now >= deadline }

  init(_ condition: WaitCondition, scheduler: Scheduler, deadline: ContinuousClock.Instant, timeout: Duration,
       quietPeriod: Duration, waitsForOutsideWork: Bool = true) {
    self.condition = condition
    self.scheduler = scheduler
    self.deadline = deadline
    self.virtualDeadline = scheduler.now + timeout
    self.timeout = timeout
    endsAtTimeLimit = deadline < ContinuousClock().now.advanced(by: timeout - .milliseconds(1))
    self.quietPeriod = quietPeriod
    self.waitsForOutsideWork = waitsForOutsideWork
  }

  /// What the loop does next.
  private enum Action {
    case finish
    case run(ScheduleRunQueues.Item)
    case idle(until: ContinuousClock.Instant, then: WhenQuiet, submissions: UInt64)
  }

  /// What an idle period that nothing interrupted means.
  private enum WhenQuiet {
    /// Nothing: the real deadline has come, or outside work may still come.
    case keepWaiting
    /// No pending work can satisfy the wait: it expires. `nextDue` is the first delayed
    /// item after its timeout, if any.
    case expire(nextDue: Duration?)
  }

  /// How an idle period ended.
  private enum IdleEnd { case done, arrived, quiet }

  private mutating func nextAction() -> Action {
    guard !condition.isDone(), ContinuousClock().now < deadline else { return .finish }
    switch scheduler.next(upTo: virtualDeadline) {
    case .run(let item):
      if item.isFromOutside { sawOutsideWork = true }
      return .run(item)
    case .idle(let nextDue, let submissions):
      // Once outside work has been seen in the test, wait for it in real time.
      if waitsForOutsideWork && scheduler.outsideArrivals > 0 {
        return .idle(until: deadline, then: .keepWaiting, submissions: submissions)
      }
      let quietEnd = ContinuousClock().now.advanced(by: waitsForOutsideWork ? quietPeriod : .zero)
      return quietEnd < deadline ? .idle(until: quietEnd, then: .expire(nextDue: nextDue), submissions: submissions)
        : .idle(until: deadline, then: .keepWaiting, submissions: submissions)
    }
  }

  /// Records what an idle period showed: work from outside the schedule woke it, or it
  /// stayed quiet.
  private mutating func conclude(_ end: IdleEnd, then whenQuiet: WhenQuiet) {
    switch (end, whenQuiet) {
    case (.done, _) where isCutByTimeLimit:
      break  // the harness ended it, not outside work
    case (.done, _), (.arrived, _):
      sawOutsideWork = true
      scheduler.noteOutsideWork()
    case (.quiet, .expire(let nextDue)):
      if !condition.isDone() {
        scheduler.advance(to: virtualDeadline)
        Self.expire(condition, scheduler: scheduler, at: virtualDeadline, nextDue: nextDue)
      }
    case (.quiet, .keepWaiting):
      break
    }
  }

  /// Ends `condition` as timed out at `virtualDeadline`: no pending work could satisfy it.
  static func expire(_ condition: WaitCondition, scheduler: Scheduler, at virtualDeadline: Duration, nextDue: Duration?) {
    let queues = "the test's queues (\(scheduler.queueNames))"
    let later = nextDue.map { " (the next delayed work was due \(($0 - virtualDeadline).secondsDescription) seconds after the timeout)" } ?? ""
    condition.expire(because: "no work left on \(queues) could satisfy the wait\(later), so the scheduled waiter ended it at once instead of sitting out its timeout")
  }

  /// Records on `condition`'s test that work from outside the schedule took part in it,
  /// and after which step it first arrived: a replay follows the schedule up to there.
  static func warnOfOutsideWork(_ condition: WaitCondition, scheduler: Scheduler) {
    let step = scheduler.firstOutsideStep.map { "; it first arrived before step \($0 + 1) of the schedule, so a replay follows this run exactly only up to there" } ?? ""
    condition.recordWarning(
      "scheduled waiter: \(condition.summary) at \(condition.sourceLocation) depended on work from outside the test's queues (a real DispatchQueue, a thread, a continuation resumed from them), so it fell back to waiting in real time; the schedule neither orders nor replays that work\(step)")
  }

  private func finish(stopWaking arrivalKey: UInt64) {
    scheduler.stopWaking(arrivalKey)
    // A wait that sat out its timeout in real time (a short one, or one waiting for outside
    // work) has passed it in virtual time too.
    if !isCutByTimeLimit, !condition.isDone(), ContinuousClock().now >= deadline { scheduler.advance(to: virtualDeadline) }
    guard sawOutsideWork, !isCutByTimeLimit else { return }
    Self.warnOfOutsideWork(condition, scheduler: scheduler)
  }

  // MARK: The loop

  /// Where the loop stops to let its caller act in its own way (block or suspend).
  private enum Pause {
    /// Run this item of the main queue on the main thread (the caller is not on it).
    case runOnMainThread(ScheduleRunQueues.Item)
    /// Sleep until this instant, or until woken.
    case sleep(until: ContinuousClock.Instant)
  }

  /// An idle period in progress.
  private struct Idle {
    var until: ContinuousClock.Instant
    var whenQuiet: WhenQuiet
    var started: ContinuousClock.Instant
    /// The scheduler's submission count when it began: a change means work arrived.
    var submissions: UInt64
  }

  /// Takes steps until the caller must act: returns `nil` when the wait is over.
  private mutating func step() -> Pause? {
    while true {
      if let idle {
        let end: IdleEnd
        if condition.isDone() {
          end = .done
        } else if scheduler.submissions != idle.submissions {
          end = .arrived
        } else if let next = condition.nextCheck(started: idle.started, deadline: idle.until,
                                                 schedule: .standard, pollsEverything: false) {
          return .sleep(until: next)
        } else if let later = quietPeriodAgain(after: idle) {
          // This thread woke late: the machine is busy, and outside work may be late too.
          self.idle?.until = later
          continue
        } else {
          end = condition.isDone() ? .done : .quiet
        }
        self.idle = nil
        conclude(end, then: idle.whenQuiet)
        continue
      }
      switch nextAction() {
      case .finish:
        return nil
      case .run(let item) where item.runsOnMainThread && !Thread.isMainThread:
        return .runOnMainThread(item)
      case .run(let item):
        scheduler.run(item)
      case .idle(let until, let whenQuiet, let submissions):
        idle = Idle(until: until, whenQuiet: whenQuiet, started: ContinuousClock().now, submissions: submissions)
      }
    }
  }

  /// When a quiet period that would end the wait ran late (the thread woke more than a
  /// quarter of a period after it), the end of another quiet period; otherwise `nil`.
  private func quietPeriodAgain(after idle: Idle) -> ContinuousClock.Instant? {
    guard case .expire = idle.whenQuiet, waitsForOutsideWork else { return nil }
    let now = ContinuousClock().now
    let again = now.advanced(by: quietPeriod)
    return idle.until.duration(to: now) > quietPeriod / 4 && again < deadline ? again : nil
  }

  /// Runs the wait on the calling thread.
  mutating func block() {
    let spot = ParkingSpot(pollsOften: condition.isPolled)
    condition.onWake { spot.wake() }
    let arrivalKey = scheduler.wakeOnArrival { spot.wake() }
    defer { finish(stopWaking: arrivalKey) }
    while let pause = step() {
      switch pause {
      case .runOnMainThread(let item): DispatchQueue.main.sync { scheduler.run(item) }
      case .sleep(let until): spot.sleep(until: until)
      }
    }
  }

  /// Runs the wait in the calling task; items of the main queue run on the main actor.
  mutating func suspend() async {
    let parking = AsyncParking()
    defer { parking.finish() }
    condition.onWake { parking.unpark() }
    let arrivalKey = scheduler.wakeOnArrival { parking.unpark() }
    defer { finish(stopWaking: arrivalKey) }
    while let pause = step() {
      switch pause {
      case .runOnMainThread(let item):
        let scheduler = scheduler
        await MainActor.run { scheduler.run(item) }
      case .sleep(let until):
        await parking.park(until: until)
      }
    }
  }

  // MARK: Sleeping

  /// Runs the schedule until virtual time reaches `deadline`: a sleep on the test's clock
  /// made by the test's own code.
  static func advance(_ scheduler: Scheduler, to deadline: Duration) async {
    let reached = WaitCondition(summary: "the sleep on t.clock") { scheduler.now >= deadline }
    var wait = ScheduledWait(reached, scheduler: scheduler, deadline: .now.advanced(by: .seconds(86_400 * 365)),
                             timeout: deadline - scheduler.now, quietPeriod: .zero, waitsForOutsideWork: false)
    await wait.suspend()
  }
}
