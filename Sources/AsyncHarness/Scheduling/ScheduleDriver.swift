import Foundation
import Synchronization

/// Runs a scheduled test's `async` code (its body, an `async` teardown block) as a task of the
/// test's schedule, when the test holds the capture of Swift concurrency
/// (``ConcurrencyCapture``).
///
/// The driver takes the schedule's steps one at a time on a thread of its own: the task's
/// jobs, the jobs of every task and actor it reaches, the test's queue items and sleepers, in
/// the order the seed picks; main-actor jobs run on the main thread, which turns its run loop
/// meanwhile (``run(until:isFinished:start:)``), as it does while any test waits there. The
/// waits of scheduled code do not run loops of their own: they register here
/// (``wait(on:until:timeout:)``) and suspend, and the driver resumes each when its condition
/// is done. When nothing is runnable, virtual time moves to the next due item, no later than
/// the earliest registered wait's timeout; when nothing is due either, the driver parks for
/// the quiet period, in which work from outside the schedule may arrive. If none does, the
/// wait with the earliest timeout expires in virtual time, or, with no wait registered, the
/// code is suspended on something nothing can resume: the driver stops and says so
/// (``Outcome/stuck(virtualTime:)``). A job that keeps the driver's thread longer than the
/// quiet period (it blocks on a semaphore, waiting for work the schedule would run next) makes
/// the schedule give Swift concurrency back to the platform's executors
/// (``Scheduler/abandonCapture(blockedBy:for:)``), so such code runs on as it would anywhere.
final class ScheduleDriver: ScheduleDriving {
  /// A wait of scheduled code.
  private struct Wait {
    let condition: WaitCondition
    /// Its timeout on the virtual clock.
    let virtualDeadline: Duration
    /// Its real deadline: its timeout, or the test's time limit when that comes first.
    let deadline: ContinuousClock.Instant
    /// How much outside work the scheduler had seen when the wait began.
    let outsideArrivals: Int
    let resume: @Sendable () -> Void
  }

  /// How a drive ended.
  enum Outcome: Equatable {
    /// The code ran to its end.
    case finished
    /// The real deadline (the test's time limit) came first.
    case deadlinePassed
    /// Nothing could resume the code: it stopped at this virtual time.
    case stuck(virtualTime: Duration)
  }

  private struct State {
    var waits: [Wait] = []
    var wake: (@Sendable () -> Void)?
    /// Whether a wait already warned that work from outside the schedule took part.
    var warnedOfOutsideWork = false
  }

  let scheduler: Scheduler
  /// How long it parks for outside work before it ends a wait or finds the code stuck.
  let quietPeriod: Duration
  private let state = Mutex(State())
  /// Later than any virtual deadline a test reaches.
  private static let endOfTime = Duration.seconds(1 << 40)

  init(scheduler: Scheduler, quietPeriod: Duration) {
    self.scheduler = scheduler
    self.quietPeriod = quietPeriod
  }

  /// Starts the code (`start` makes its task on the driver's thread, so its first job joins
  /// the schedule) and drives the schedule there until `finished` is done or `deadline`,
  /// while the calling thread, the main one, turns its run loop (main-actor jobs and
  /// main-queue work run there) and watches for a job that blocks the driver. When work from
  /// outside the schedule took part and no wait said so, `finished` records the warning.
  func run(until deadline: ContinuousClock.Instant, finished: WaitCondition,
           start: @escaping @Sendable () -> Void) -> Outcome {
    let outsideAtStart = scheduler.outsideArrivals
    defer {
      if scheduler.outsideArrivals > outsideAtStart, !state.withLock({ $0.warnedOfOutsideWork }) {
        ScheduledWait.warnOfOutsideWork(finished, scheduler: scheduler)
      }
    }
    let isFinished = finished.isDone
    // The code's end wakes the driver: once a blocking job gave Swift concurrency back, the
    // code ends on Swift's own executors, and nothing arrives in the schedule to wake it.
    finished.onWake { [self] in wake() }
    let outcome = Mutex<Outcome?>(nil)
    let ended = WaitCondition(summary: "the schedule's drive") { outcome.withLock { $0 != nil } }
    let thread = Thread { [self] in
      let result = drive(until: deadline, isFinished: isFinished, start: start)
      outcome.withLock { $0 = result }
      ended.wake()
    }
    thread.start()
    while !ended.isDone() {
      let now = ContinuousClock().now
      guard now < deadline else { break }
      ended.blockParked(deadline: min(deadline, now.advanced(by: quietPeriod)))
      if !ended.isDone(), let blocked = scheduler.itemBlockingTheDriver(longerThan: quietPeriod) {
        scheduler.abandonCapture(blockedBy: Self.describe(blocked.label), for: blocked.duration)
        state.withLock { $0.warnedOfOutsideWork = true }
        wake()
      }
    }
    // At the deadline the driver stops after the job it is running: wait that long (up to a
    // quiet period; a job that blocks the driver's thread is left to it), so the jobs it
    // leaves are counted before the test records its time limit.
    if !ended.isDone() { ended.blockParked(deadline: ContinuousClock().now.advanced(by: quietPeriod)) }
    return outcome.withLock { $0 } ?? .deadlinePassed
  }

  /// A running item's queue label, as a warning names it.
  private static func describe(_ label: String) -> String {
    label.hasPrefix("task #")
      ? "a job of Swift concurrency \(label) (numbered in the order the schedule first saw them; #1 is the test's async code)"
      : label == "an actor's job" ? label : "an item of queue \(label)"
  }

  /// Drives the schedule on the calling thread (the driver's).
  private func drive(until deadline: ContinuousClock.Instant, isFinished: () -> Bool, start: () -> Void) -> Outcome {
    let spot = ParkingSpot(pollsOften: false)
    state.withLock { $0.wake = { spot.wake() } }
    scheduler.drive(with: self)
    defer {
      scheduler.drive(with: nil)
      state.withLock { $0.wake = nil }
    }
    start()
    while true {
      if isFinished() { return .finished }
      if ContinuousClock().now >= deadline { return .deadlinePassed }
      if settleWaits() { continue }
      let earliest = state.withLock { $0.waits.min { $0.virtualDeadline < $1.virtualDeadline } }
      switch scheduler.next(upTo: earliest?.virtualDeadline ?? Self.endOfTime) {
      case .run(let item) where item.runsOnMainThread:
        DispatchQueue.main.sync { scheduler.run(item) }
      case .run(let item):
        scheduler.run(item)
      case .idle(let nextDue, let submissions):
        let waitsForOutside = scheduler.outsideArrivals > 0
        let quietEnd = ContinuousClock().now.advanced(by: quietPeriod)
        let until = min(deadline, earliest?.deadline ?? deadline, waitsForOutside ? deadline : quietEnd)
        guard park(on: spot, until: until, submissions: submissions, isFinished: isFinished),
              !waitsForOutside, ContinuousClock().now >= quietEnd else { continue }
        guard let earliest else { return .stuck(virtualTime: scheduler.now) }
        scheduler.advance(to: earliest.virtualDeadline)
        ScheduledWait.expire(earliest.condition, scheduler: scheduler, at: earliest.virtualDeadline, nextDue: nextDue)
      }
    }
  }

  /// Parks until `until`, work arrives, a wait is done or the code finishes; returns whether
  /// it stayed quiet (nothing arrived, nothing was done). Polled conditions are checked
  /// every few milliseconds.
  private func park(on spot: ParkingSpot, until: ContinuousClock.Instant, submissions: UInt64,
                    isFinished: () -> Bool) -> Bool {
    let polled = state.withLock { $0.waits.contains { $0.condition.isPolled } }
    while ContinuousClock().now < until {
      if scheduler.submissions != submissions || isFinished() || anyWaitDone() { return false }
      spot.sleep(until: polled ? min(until, .now.advanced(by: .milliseconds(5))) : until)
    }
    return scheduler.submissions == submissions && !isFinished() && !anyWaitDone()
  }

  /// Wakes the driver's thread, parked while nothing was runnable, to look again: work
  /// arrived in the schedule, a wait's condition or the code's end may be done.
  func wake() {
    state.withLock { $0.wake }?()
  }

  private func anyWaitDone() -> Bool {
    state.withLock { $0.waits }.contains { $0.condition.isDone() }
  }

  /// Resumes the waits that are done or past their real deadline; returns whether any was.
  private func settleWaits() -> Bool {
    let now = ContinuousClock().now
    let settled = state.withLock { state -> [Wait] in
      let (done, open) = state.waits.reduce(into: ([Wait](), [Wait]())) { split, wait in
        if wait.condition.isDone() || now >= wait.deadline { split.0.append(wait) } else { split.1.append(wait) }
      }
      state.waits = open
      return done
    }
    for wait in settled {
      if !wait.condition.isDone() { scheduler.advance(to: wait.virtualDeadline) }
      if scheduler.outsideArrivals > wait.outsideArrivals {
        state.withLock { $0.warnedOfOutsideWork = true }
        ScheduledWait.warnOfOutsideWork(wait.condition, scheduler: scheduler)
      }
      wait.resume()
    }
    return !settled.isEmpty
  }

  /// Suspends the calling scheduled code until `condition` is done, or its timeout passes
  /// (in virtual time when nothing else can happen), or `deadline`.
  func wait(on condition: WaitCondition, until deadline: ContinuousClock.Instant, timeout: Duration) async {
    let virtualDeadline = scheduler.now + timeout
    let outsideArrivals = scheduler.outsideArrivals
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let wake = state.withLock { state in
        state.waits.append(Wait(condition: condition, virtualDeadline: virtualDeadline, deadline: deadline,
                                outsideArrivals: outsideArrivals, resume: { continuation.resume() }))
        return state.wake
      }
      condition.onWake { [weak self] in self?.wake() }
      wake?()
    }
  }
}
