import Foundation
import Synchronization

/// Whoever drives a ``Scheduler``'s `async` code as a task of its schedule: the scheduler
/// wakes it when work arrives, and the waits of scheduled code register with it instead of
/// stepping the schedule themselves.
protocol ScheduleDriving: AnyObject, Sendable {
  /// Wakes the driver, parked while nothing was runnable: work arrived in the schedule.
  func wake()

  /// Suspends the calling scheduled code until `condition` is done, or its timeout passes
  /// (in virtual time when nothing else can happen), or `deadline`.
  func wait(on condition: WaitCondition, until deadline: ContinuousClock.Instant, timeout: Duration) async
}

/// The pending work of one test under the scheduled strategy: its run queues
/// (``ScheduleRunQueues``: the queues' work items, a virtual clock, and the seeded choices
/// of which item runs next) under a lock, and what ties them to threads.
///
/// Queues put items here instead of running them. A serial queue exposes only its first
/// item; delayed items (``Dispatching/asyncAfter(_:_:)``, sleeps on the test's clock) join
/// their queue when virtual time reaches them. A wait takes one step at a time
/// (``next(upTo:)``) and runs the item it gets (``run(_:chain:)``).
///
/// Swift concurrency's jobs join it too, while the test holds the capture
/// (``ConcurrencyCapture``): each task's jobs form a queue of their own, numbered in the order
/// the tasks were first seen, and any other job (an actor's turn) a queue of one.
///
/// Work that arrives from outside the schedule (a thread or task that is neither the test's
/// own code nor an item this scheduler is running) is counted: the waiter then warns and
/// falls back to real time, as the synchronous strategy does.
final class Scheduler: Sendable {
  /// The run queues, with what ties them to threads.
  private struct State {
    var runQueues: ScheduleRunQueues
    /// Wake the waits in progress (nested ones) when work arrives, by key.
    var arrivals: [UInt64: @Sendable () -> Void] = [:]
    var nextArrivalKey: UInt64 = 0
    /// The thread running an item now, whose submissions are the schedule's own.
    var runningThread: ObjectIdentifier?
    /// The item running now and when it began, on the real clock.
    var runningItem: (queue: Int, identity: QueueIdentity, start: ContinuousClock.Instant)?
    /// Sleepers on the virtual clock, by key, resumed when the test ends.
    var sleepers: [UInt64: @Sendable (_ cancelled: Bool) -> Void] = [:]
    /// The thread that drives the schedule of an `async` body, while it is not parked: what
    /// it resumes is the schedule's own work.
    var drivingThread: ObjectIdentifier?
    /// Whoever drives the `async` code running as a task of the schedule, if any.
    var driver: (any ScheduleDriving)?

    /// What to wake when work arrives: the waits in progress, and the driver.
    var wakeUps: [@Sendable () -> Void] {
      Array(arrivals.values) + (driver.map { driver in [{ driver.wake() }] } ?? [])
    }
  }

  /// The schedule this run follows.
  let schedule: Schedule
  private let record: TestRecord?
  /// Whether each step is reported as it is taken (`scheduleStep`).
  private let reportsSteps: Bool
  private let state: Mutex<State>

  init(schedule: Schedule, record: TestRecord?, reportsSteps: Bool) {
    self.schedule = schedule
    self.record = record
    self.reportsSteps = reportsSteps
    state = Mutex(State(runQueues: ScheduleRunQueues(schedule: schedule)))
  }

  // MARK: Queues

  /// Adds a serial queue and returns its index.
  func addQueue(_ identity: QueueIdentity) -> Int {
    state.withLock { $0.runQueues.addQueue(identity) }
  }

  /// The labels of the test's queues, in the order they were made: `main, background`, then
  /// how many Swift concurrency tasks took part.
  var queueNames: String { state.withLock { $0.runQueues.queueNames } }

  // MARK: Submitting

  /// Puts `work` on queue `index`, runnable at once or after `delay` of virtual time.
  /// Returns `false` when the test has ended: the caller then runs the work itself.
  func submit(to index: Int, after delay: Duration = .zero, _ work: @escaping @Sendable () -> Void) -> Bool {
    let fromOutside = !isScheduleOwnCaller
    return wakeIfTaken { $0.runQueues.submit(to: index, after: delay, fromOutside: fromOutside, work) }
  }

  /// Takes a Swift concurrency job (``ConcurrencyCapture``): one the schedule's own code
  /// enqueued, or a later job of a task it already took (then as work from outside).
  /// Returns `false` for any other job, and once the test has ended: the caller passes it
  /// to the platform's executors.
  /// - Parameters:
  ///   - task: The runtime's id of the job's task; `nil` for a job that is not a task's.
  ///   - onMainThread: Whether it runs on the main actor.
  ///   - delay: For a sleep, the virtual time until it is due.
  ///   - work: Runs the job.
  ///   - returnToPlatform: Hands the job to the platform, if the test ends before it ran.
  func submitJob(task: UInt64?, onMainThread: Bool, delay: Duration?, work: @escaping @Sendable () -> Void,
                 returnToPlatform: @escaping @Sendable () -> Void) -> Bool {
    let fromOutside = !isScheduleOwnCaller
    return wakeIfTaken { state in
      state.runQueues.submitJob(task: task, onMainThread: onMainThread, after: delay ?? .zero, fromOutside: fromOutside,
                                runningQueue: state.runningItem?.queue, work: work, returnToPlatform: returnToPlatform)
    }
  }

  /// Runs `submit` under the lock; when it took the work, wakes the waits in progress and
  /// the driver, after the lock is released. Returns whether it took the work.
  private func wakeIfTaken(_ submit: (inout State) -> Bool) -> Bool {
    let wakeUps = state.withLock { state in submit(&state) ? state.wakeUps : nil }
    guard let wakeUps else { return false }
    for wake in wakeUps { wake() }
    return true
  }

  /// Registers a sleeper on the virtual clock until `deadline`: `resume(false)` runs when
  /// a wait's schedule reaches it, `resume(true)` when the test ends first. Returns the
  /// sleeper's key for ``cancelSleep(_:)``, or `nil` when the test has ended.
  func sleep(until deadline: Duration, resume: @escaping @Sendable (_ cancelled: Bool) -> Void) -> UInt64? {
    let fromOutside = !isScheduleOwnCaller
    let registered = state.withLock { state -> (key: UInt64, wakeUps: [@Sendable () -> Void])? in
      let key = state.runQueues.addSleeper(until: deadline, fromOutside: fromOutside) { [weak self] key in
        guard let resume = self?.state.withLock({ $0.sleepers.removeValue(forKey: key) }) else { return }
        resume(false)
      }
      guard let key else { return nil }
      state.sleepers[key] = resume
      return (key, state.wakeUps)
    }
    for wake in registered?.wakeUps ?? [] { wake() }
    return registered?.key
  }

  /// Removes a sleeper that was cancelled; returns whether it was still asleep.
  func cancelSleep(_ key: UInt64) -> Bool {
    state.withLock { state in
      state.runQueues.removeSleeper(key)
      return state.sleepers.removeValue(forKey: key) != nil
    }
  }

  // MARK: Threads

  /// Whether the caller's submissions belong to the schedule: the test's own code (its
  /// body, set-up and teardown), or an item this scheduler is running. Anything else (a
  /// real queue, a `Task`, another thread) is outside it.
  private var isScheduleOwnCaller: Bool {
    let thread = ObjectIdentifier(Thread.current)
    if state.withLock({ $0.runningThread == thread || $0.drivingThread == thread }) { return true }
    return record?.isCallerTheBody ?? false
  }

  /// Whether the calling thread is the one driving the schedule (``drive(with:)``).
  var isCallerTheDriver: Bool {
    let thread = ObjectIdentifier(Thread.current)
    return state.withLock { $0.drivingThread == thread }
  }

  /// Whether the calling thread is running one of this scheduler's items now: the caller is
  /// scheduled work (a job of the test's tasks, or a queue's item).
  var isRunningItemOnThisThread: Bool {
    let thread = ObjectIdentifier(Thread.current)
    return state.withLock { $0.runningThread == thread }
  }

  /// Marks the calling thread as the one `driver` drives the schedule on, or, with `nil`, no
  /// thread: while it drives, what it enqueues is the schedule's own work, and work arriving
  /// wakes the driver.
  func drive(with driver: (any ScheduleDriving)?) {
    let thread = driver == nil ? nil : ObjectIdentifier(Thread.current)
    state.withLock { state in
      state.driver = driver
      state.drivingThread = thread
    }
  }

  /// Whoever runs the test's `async` code as a task of the schedule, if any: waits of
  /// scheduled code register with it.
  var driver: (any ScheduleDriving)? { state.withLock { $0.driver } }

  /// When the item running now began, on the real clock (for the delays of sleeps).
  var itemStart: ContinuousClock.Instant? { state.withLock { $0.runningItem?.start } }

  /// The item the driver's thread runs now, if it has run for `limit` or longer: its
  /// queue's label (`task #2`, `io`) and how long it has run.
  func itemBlockingTheDriver(longerThan limit: Duration) -> (label: String, duration: Duration)? {
    state.withLock { state in
      guard let running = state.runningItem, state.drivingThread != nil, state.runningThread == state.drivingThread else { return nil }
      let duration = running.start.duration(to: .now)
      return duration >= limit ? (running.identity.label, duration) : nil
    }
  }

  // MARK: Stepping

  /// Takes the next step of the schedule (``ScheduleRunQueues/next(upTo:)``): the item the
  /// policy picks among the runnable ones; when none is runnable, virtual time first
  /// advances to the next delayed item, as long as that is no later than `deadline`. When
  /// the run reports steps, each of an attempt's first ``Event/scheduleStepLimit`` is
  /// reported (`scheduleStep`) after the lock is released.
  func next(upTo deadline: Duration) -> ScheduleRunQueues.NextItem {
    let (next, step) = state.withLock { state -> (ScheduleRunQueues.NextItem, (Int, String, Duration)?) in
      let next = state.runQueues.next(upTo: deadline)
      guard reportsSteps, case .run(let item) = next, state.runQueues.steps <= Event.scheduleStepLimit else { return (next, nil) }
      return (next, (state.runQueues.steps, item.identity.label, state.runQueues.now))
    }
    if let (number, label, virtualTime) = step { record?.scheduleStep(number, ran: label, at: virtualTime) }
    return next
  }

  /// Takes the items queue `index` holds now, for a `sync` onto it: they run before the
  /// synchronous work, as a serial queue runs them.
  func takeReady(from index: Int) -> [ScheduleRunQueues.Item] {
    state.withLock { $0.runQueues.takeReady(from: index) }
  }

  /// Runs an item on the calling thread, as the queue it was submitted to, with `chain` as
  /// the queues it runs for (the item's queue by default).
  func run(_ item: ScheduleRunQueues.Item, chain: [QueueIdentity]? = nil) {
    let thread = ObjectIdentifier(Thread.current)
    let previous = state.withLock { state in
      defer {
        state.runningThread = thread
        state.runningItem = (item.queue, item.identity, .now)
      }
      return (state.runningThread, state.runningItem)
    }
    defer {
      state.withLock { state in
        state.runningThread = previous.0
        state.runningItem = previous.1
      }
    }
    DispatchChain.$frames.withValue(chain ?? [item.identity], operation: item.work)
  }

  // MARK: Time

  /// The virtual time since the test began.
  var now: Duration { state.withLock { $0.runQueues.now } }

  /// Advances virtual time to `instant` (never back).
  func advance(to instant: Duration) {
    state.withLock { $0.runQueues.advance(to: instant) }
  }

  // MARK: Waits

  /// How many items arrived from outside the schedule since the test began, and how many
  /// times outside work took part in a wait.
  var outsideArrivals: Int { state.withLock { $0.runQueues.outsideArrivals } }

  /// How many items and sleepers were submitted since the test began: a wait sees new work
  /// arrive when it changes.
  var submissions: UInt64 { state.withLock { $0.runQueues.submissions } }

  /// Records that work from outside the schedule took part in a wait (it satisfied the
  /// wait, or woke it while nothing was runnable).
  func noteOutsideWork() {
    state.withLock { $0.runQueues.noteOutsideWork() }
  }

  /// How many steps the schedule had taken when work from outside it first arrived, if it did:
  /// a replay follows the recorded run exactly up to there.
  var firstOutsideStep: Int? { state.withLock { $0.runQueues.firstOutsideStep } }

  /// The steps the schedule took so far.
  var trace: ScheduleTrace { state.withLock { $0.runQueues.trace } }

  /// Calls `wake` whenever work arrives, until ``stopWaking(_:)`` with the key it returns.
  func wakeOnArrival(_ wake: @escaping @Sendable () -> Void) -> UInt64 {
    state.withLock { state in
      state.nextArrivalKey += 1
      state.arrivals[state.nextArrivalKey] = wake
      return state.nextArrivalKey
    }
  }

  /// Stops the calls ``wakeOnArrival(_:)`` registered under `key`.
  func stopWaking(_ key: UInt64) {
    _ = state.withLock { $0.arrivals.removeValue(forKey: key) }
  }

  /// Ends the test's schedule: pending work is dropped, sleepers are resumed as cancelled,
  /// and later submissions run at once on their caller. Swift concurrency jobs still
  /// pending go back to the platform's executors (``returnLeftoverJobs()``).
  func end() {
    returnLeftoverJobs()
    let sleepers = state.withLock { state in
      state.runQueues.end()
      defer { state.sleepers.removeAll() }
      return Array(state.sleepers.values)
    }
    for resume in sleepers { resume(true) }
  }

  // MARK: Giving Swift concurrency back

  /// Gives the capture of Swift concurrency up when the test's `async` code has ended: jobs
  /// still pending (of a task it started and did not await, a sleep not yet due) go back to
  /// the platform's executors, and a warning counts them (not the timers of cancelled
  /// sleeps, which only clean up).
  func returnLeftoverJobs() {
    let count = returnJobs()
    guard count > 0 else { return }
    record?.record(Issue(kind: .warning, message: "scheduled waiter: \(count) Swift concurrency job\(count == 1 ? " was" : "s were") still pending when the test's async code ended (a task it started and did not await, or a sleep not yet due); they went back to Swift's own executors and run outside the schedule", sourceLocation: nil))
  }

  /// Gives the capture of Swift concurrency up while the test runs, because `job` has kept the
  /// driver's thread for `duration` (it blocks it, waiting for something only another job
  /// would do): pending jobs go back to the platform's executors, and the test's later waits
  /// fall back to real time, with a warning naming the job.
  func abandonCapture(blockedBy job: String, for duration: Duration) {
    let count = returnJobs()
    noteOutsideWork()
    record?.record(Issue(kind: .warning, message: "scheduled waiter: " + Self.blockedMessage(job, for: duration, handedBack: count),
                         sourceLocation: nil))
  }

  /// What a test says when `job` kept its schedule's thread for `duration` (`why` it was too
  /// long) and the schedule gave Swift concurrency back (with `count` pending jobs, when
  /// known): the scheduled strategy's words, and a package's own tests' under
  /// `harness test --explore`.
  static func blockedMessage(_ job: String, for duration: Duration, why: String = "longer than the quiet period (it blocks "
                               + "its thread: a semaphore, a lock, a synchronous wait for work of another task)",
                             handedBack count: Int?) -> String {
    "\(job) kept the schedule's thread for \(duration.secondsDescription) seconds, \(why); the schedule gave Swift "
      + "concurrency back to Swift's own executors\(count.map { " (\($0) pending job\($0 == 1 ? "" : "s"))" } ?? ""), so the "
      + "rest of the test runs in real time, neither ordered nor replayed"
  }

  /// Releases the capture and hands the pending jobs to the platform; returns how many,
  /// cancelled sleeps' timers aside.
  private func returnJobs() -> Int {
    ConcurrencyCapture.release(self)
    let jobs = state.withLock { $0.runQueues.takeJobs() }
    for job in jobs { job.returnToPlatform?() }
    return jobs.filter { !$0.isCancelledTimer }.count
  }
}
