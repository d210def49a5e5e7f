import Foundation
import Synchronization

/// The pending work of one test under the scheduled strategy: the queues' work items, a
/// virtual clock, and the seeded choices of which item runs next.
///
/// Queues put items here instead of running them. A serial queue exposes only its first
/// item; delayed items (``Dispatching/asyncAfter(_:_:)``, sleeps on the test's clock) join
/// their queue when virtual time reaches them. A wait takes one step at a time
/// (``next(upTo:)``) and runs the item it gets (``run(_:)``).
///
/// Swift concurrency's jobs join it too, while the test holds the capture
/// (``ConcurrencyCapture``): each task's jobs form a queue of their own, numbered in the order
/// the tasks were first seen, and any other job (an actor's turn) a queue of one.
///
/// Work that arrives from outside the schedule (a thread or task that is neither the test's
/// own code nor an item this scheduler is running) is counted: the waiter then warns and
/// falls back to real time, as the synchronous strategy does.
final class Scheduler: Sendable {
  /// One work item.
  struct Item: Sendable {
    /// The order items were submitted in: ties in virtual time go to the earlier.
    let sequence: UInt64
    /// The queue's index.
    let queue: Int
    /// The virtual instant it becomes runnable.
    let due: Duration
    let identity: QueueIdentity
    let runsOnMainThread: Bool
    /// Whether it was submitted from outside the schedule.
    let isFromOutside: Bool
    let work: @Sendable () -> Void
    /// For a Swift concurrency job: hands it back to the platform's executors when the test
    /// ends before it ran.
    var returnToPlatform: (@Sendable () -> Void)? = nil
    /// For the timer of a `Task.sleep`: the queue of the task that sleeps. When that task
    /// runs again before the timer is due, the sleep was cancelled, and the timer's job (which
    /// then only cleans up) is due at once.
    var sleeper: Int? = nil
    /// Whether it is the timer of a cancelled sleep: left pending, it is no task's work.
    var isCancelledTimer = false
  }

  private struct Queue {
    let identity: QueueIdentity
    let isMain: Bool
    /// Whether it holds Swift concurrency jobs (not one of the test's `Dispatching` queues).
    var holdsJobs = false
    var ready: [Item] = []
  }

  private struct State {
    var queues: [Queue] = []
    /// Items waiting for virtual time, sorted by due instant, then sequence.
    var delayed: [Item] = []
    var now: Duration = .zero
    var sequence: UInt64 = 0
    var steps = 0
    var picker: SchedulePicker
    var ended = false
    /// Wake the waits in progress (nested ones, and the driver's) when work arrives, by key.
    var arrivals: [UInt64: @Sendable () -> Void] = [:]
    var nextArrivalKey: UInt64 = 0
    /// The thread running an item now, whose submissions are the schedule's own.
    var runningThread: ObjectIdentifier?
    /// Items submitted from outside the schedule since the test began.
    var outsideArrivals = 0
    var firstOutsideStep: Int?
    /// The hash of the queues the steps picked, in order (``ScheduleTrace``).
    var stepHash = StableHash.offsetBasis
    /// Sleepers on the virtual clock, by sequence, resumed when the test ends.
    var sleepers: [UInt64: @Sendable (_ cancelled: Bool) -> Void] = [:]
    /// The index of the queue of the clock's sleepers, made at the first sleep.
    var clockQueue: Int?
    /// The indices of the queues with a runnable item, in ascending order.
    var runnable: [Int] = []
    /// The queue of each task whose jobs this scheduler took, by the runtime's task id.
    var taskQueues: [UInt64: Int] = [:]
    /// The item running now and when it began, on the real clock.
    var runningItem: (queue: Int, identity: QueueIdentity, start: ContinuousClock.Instant)?
    /// The thread that drives the schedule of an `async` body (``ScheduleDriver``), while it
    /// is not parked: what it resumes is the schedule's own work.
    var drivingThread: ObjectIdentifier?
    /// The driver of the `async` code running as a task of the schedule, if any.
    var driver: ScheduleDriver?
  }

  /// The schedule this run follows.
  let schedule: Schedule
  private let record: TestRecord?
  private let state: Mutex<State>
  /// The index of the main queue.
  static let mainQueue = 0

  init(schedule: Schedule, record: TestRecord?) {
    self.schedule = schedule
    self.record = record
    var state = State(picker: SchedulePicker(schedule))
    state.queues.append(Queue(identity: .main, isMain: true))
    state.picker.queueAdded()
    self.state = Mutex(state)
  }

  // MARK: Queues

  /// Adds a serial queue and returns its index.
  func addQueue(_ identity: QueueIdentity) -> Int {
    state.withLock { Self.addQueue(Queue(identity: identity, isMain: false), to: &$0) }
  }

  private static func addQueue(_ queue: Queue, to state: inout State) -> Int {
    state.queues.append(queue)
    state.picker.queueAdded()
    return state.queues.count - 1
  }

  /// The labels of the test's queues, in the order they were made: `main, background`, then
  /// how many Swift concurrency tasks took part.
  var queueNames: String {
    let (names, tasks) = state.withLock { state in
      (state.queues.filter { !$0.holdsJobs }.map(\.identity.label), state.taskQueues.count)
    }
    return (names + (tasks == 0 ? [] : ["\(tasks) Swift concurrency task\(tasks == 1 ? "" : "s")"]))
      .joined(separator: ", ")
  }

  // MARK: Submitting

  /// Puts `work` on queue `index`, runnable at once or after `delay` of virtual time.
  /// Returns `false` when the test has ended: the caller then runs the work itself.
  func submit(to index: Int, after delay: Duration = .zero, _ work: @escaping @Sendable () -> Void) -> Bool {
    let outside = !isScheduleOwnCaller
    let arrivals = state.withLock { state -> [@Sendable () -> Void]? in
      guard !state.ended else { return nil }
      state.sequence += 1
      let queue = state.queues[index]
      let item = Item(sequence: state.sequence, queue: index, due: state.now + max(.zero, delay),
                      identity: queue.identity, runsOnMainThread: queue.isMain, isFromOutside: outside, work: work)
      Self.enqueue(item, delayed: delay > .zero, in: &state)
      if outside { Self.countOutsideArrival(in: &state) }
      return Array(state.arrivals.values)
    }
    guard let arrivals else { return false }
    for wake in arrivals { wake() }
    return true
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
    let own = isScheduleOwnCaller
    let arrivals = state.withLock { state -> [@Sendable () -> Void]? in
      guard !state.ended else { return nil }
      let known = task.flatMap { state.taskQueues[$0] }
      guard own || known != nil else { return nil }
      let index = known ?? {
        let label = task == nil ? "an actor's job" : "task #\(state.taskQueues.count + 1)"
        let queue = Queue(identity: QueueIdentity(label: label), isMain: false, holdsJobs: true)
        let index = Self.addQueue(queue, to: &state)
        if let task { state.taskQueues[task] = index }
        return index
      }()
      state.sequence += 1
      let delayed = (delay ?? .zero) > .zero
      // A sleep's timer is enqueued by the sleeping task's own job, the one running now.
      let sleeper = delayed && own ? state.runningItem.map(\.queue) : nil
      let item = Item(sequence: state.sequence, queue: index, due: state.now + (delay ?? .zero),
                      identity: state.queues[index].identity, runsOnMainThread: onMainThread, isFromOutside: !own,
                      work: work, returnToPlatform: returnToPlatform, sleeper: sleeper)
      if !delayed { Self.releaseCancelledSleeps(of: index, in: &state) }
      Self.enqueue(item, delayed: delayed, in: &state)
      if !own { Self.countOutsideArrival(in: &state) }
      return Array(state.arrivals.values)
    }
    guard let arrivals else { return false }
    for wake in arrivals { wake() }
    return true
  }

  /// Makes the timers of the sleeps of the task whose queue is `index` due at once: the task
  /// runs again, so its sleep was cancelled, and the timer's job only cleans up.
  private static func releaseCancelledSleeps(of index: Int, in state: inout State) {
    guard state.delayed.contains(where: { $0.sleeper == index }) else { return }
    for var timer in state.delayed.filter({ $0.sleeper == index }) {
      timer.isCancelledTimer = true
      append(timer, in: &state)
    }
    state.delayed.removeAll { $0.sleeper == index }
  }

  /// Puts `item` among the delayed ones, or at the end of its queue.
  private static func enqueue(_ item: Item, delayed: Bool, in state: inout State) {
    if delayed {
      insert(item, into: &state.delayed)
    } else {
      append(item, in: &state)
    }
  }

  /// Appends a runnable item to its queue, which becomes runnable if it was empty.
  private static func append(_ item: Item, in state: inout State) {
    if state.queues[item.queue].ready.isEmpty {
      state.runnable.insert(item.queue, at: runnablePosition(of: item.queue, in: state.runnable))
    }
    state.queues[item.queue].ready.append(item)
  }

  /// Takes the first item of a runnable queue, which stops being runnable if it empties.
  private static func takeFirst(of queue: Int, in state: inout State) -> Item {
    let item = state.queues[queue].ready.removeFirst()
    if state.queues[queue].ready.isEmpty { stopRunning(queue, in: &state) }
    return item
  }

  /// Removes `queue` from the runnable ones.
  private static func stopRunning(_ queue: Int, in state: inout State) {
    let position = runnablePosition(of: queue, in: state.runnable)
    if position < state.runnable.count && state.runnable[position] == queue { state.runnable.remove(at: position) }
  }

  /// Where `queue` is, or would go, in the ascending list of runnable queues (a binary
  /// search: a test may have thousands of tasks runnable at once).
  private static func runnablePosition(of queue: Int, in runnable: [Int]) -> Int {
    var (low, high) = (0, runnable.count)
    while low < high {
      let middle = (low + high) / 2
      if runnable[middle] < queue { low = middle + 1 } else { high = middle }
    }
    return low
  }

  /// Registers a sleeper on the virtual clock until `deadline`: `resume(false)` runs when
  /// a wait's schedule reaches it, `resume(true)` when the test ends first. Returns the
  /// sleeper's key for ``cancelSleep(_:)``, or `nil` when the test has ended.
  func sleep(until deadline: Duration, resume: @escaping @Sendable (_ cancelled: Bool) -> Void) -> UInt64? {
    let outside = !isScheduleOwnCaller
    let registered = state.withLock { state -> (key: UInt64, wake: [@Sendable () -> Void])? in
      guard !state.ended else { return nil }
      let clockQueue = state.clockQueue ?? {
        let index = Self.addQueue(Queue(identity: QueueIdentity(label: "clock"), isMain: false), to: &state)
        state.clockQueue = index
        return index
      }()
      state.sequence += 1
      let key = state.sequence
      let item = Item(sequence: key, queue: clockQueue, due: max(state.now, deadline),
                      identity: state.queues[clockQueue].identity, runsOnMainThread: false, isFromOutside: outside,
                      work: { [weak self] in
                        guard let resume = self?.state.withLock({ $0.sleepers.removeValue(forKey: key) }) else { return }
                        resume(false)
                      })
      state.sleepers[key] = resume
      Self.insert(item, into: &state.delayed)
      if outside { Self.countOutsideArrival(in: &state) }
      return (key, Array(state.arrivals.values))
    }
    for wake in registered?.wake ?? [] { wake() }
    return registered?.key
  }

  /// Removes a sleeper that was cancelled; returns whether it was still asleep.
  func cancelSleep(_ key: UInt64) -> Bool {
    state.withLock { state in
      state.delayed.removeAll { $0.sequence == key }
      return state.sleepers.removeValue(forKey: key) != nil
    }
  }

  private static func insert(_ item: Item, into delayed: inout [Item]) {
    let index = delayed.firstIndex { ($0.due, $0.sequence) > (item.due, item.sequence) } ?? delayed.endIndex
    delayed.insert(item, at: index)
  }

  /// Whether the caller's submissions belong to the schedule: the test's own code (its
  /// body, set-up and teardown), or an item this scheduler is running. Anything else (a
  /// real queue, a `Task`, another thread) is outside it.
  private var isScheduleOwnCaller: Bool {
    let thread = ObjectIdentifier(Thread.current)
    if state.withLock({ $0.runningThread == thread || $0.drivingThread == thread }) { return true }
    return record?.isCallerTheBody ?? false
  }

  /// Whether the calling thread is the one driving the schedule (``ScheduleDriver``).
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

  /// Marks the calling thread as the driver of the schedule (``ScheduleDriver``), or, with
  /// `nil`, no thread: while it drives, what it enqueues is the schedule's own work.
  func drive(with driver: ScheduleDriver?) {
    let thread = driver == nil ? nil : ObjectIdentifier(Thread.current)
    state.withLock { state in
      state.driver = driver
      state.drivingThread = thread
    }
  }

  /// The driver running the test's `async` code as a task of the schedule, if any: waits of
  /// scheduled code register with it.
  var driver: ScheduleDriver? { state.withLock { $0.driver } }

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

  /// What a wait does next.
  enum Step {
    /// Run this item (``run(_:)``).
    case run(Item)
    /// Nothing is runnable before the virtual deadline; `nextDue` is the first delayed
    /// item after it, if any. `submissions` is the count of submissions seen (``submissions``):
    /// work that arrives later changes it.
    case idle(nextDue: Duration?, submissions: UInt64)
  }

  /// Takes the next step of the schedule: the item the policy picks among the runnable
  /// ones; when none is runnable, virtual time first advances to the next delayed item, as
  /// long as that is no later than `deadline`.
  func next(upTo deadline: Duration) -> Step {
    state.withLock { state in
      while true {
        Self.promoteDue(&state)
        if !state.runnable.isEmpty {
          state.steps += 1
          let chosen = state.picker.choose(among: state.runnable, step: state.steps)
          state.stepHash = StableHash.fnv1a64(continuing: state.stepHash, withUnsafeBytes(of: UInt32(chosen).littleEndian, Array.init))
          return .run(Self.takeFirst(of: chosen, in: &state))
        }
        guard let next = state.delayed.first else { return .idle(nextDue: nil, submissions: state.sequence) }
        guard next.due <= deadline else { return .idle(nextDue: next.due, submissions: state.sequence) }
        state.now = max(state.now, next.due)
      }
    }
  }

  /// Whether an item is runnable now, without advancing virtual time.
  var hasRunnableWork: Bool {
    state.withLock { state in
      Self.promoteDue(&state)
      return !state.runnable.isEmpty
    }
  }

  /// Moves the delayed items whose time has come to the end of their queues.
  private static func promoteDue(_ state: inout State) {
    while let first = state.delayed.first, first.due <= state.now {
      state.delayed.removeFirst()
      append(first, in: &state)
    }
  }

  /// Takes the items queue `index` holds now, for a `sync` onto it: they run before the
  /// synchronous work, as a serial queue runs them.
  func takeReady(from index: Int) -> [Item] {
    state.withLock { state in
      Self.promoteDue(&state)
      defer {
        state.queues[index].ready.removeAll()
        Self.stopRunning(index, in: &state)
      }
      return state.queues[index].ready
    }
  }

  /// Runs an item on the calling thread, as the queue it was submitted to, with `chain` as
  /// the queues it runs for (the item's queue by default).
  func run(_ item: Item, chain: [QueueIdentity]? = nil) {
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
  var now: Duration { state.withLock { $0.now } }

  /// Advances virtual time to `instant` (never back).
  func advance(to instant: Duration) {
    state.withLock { $0.now = max($0.now, instant) }
  }

  /// How many steps the schedule has taken.
  var steps: Int { state.withLock { $0.steps } }

  // MARK: Waits

  /// How many items arrived from outside the schedule since the test began, and how many
  /// times outside work took part in a wait.
  var outsideArrivals: Int { state.withLock { $0.outsideArrivals } }

  /// How many items and sleepers were submitted since the test began: a wait sees new work
  /// arrive when it changes.
  var submissions: UInt64 { state.withLock { $0.sequence } }

  /// Records that work from outside the schedule took part in a wait (it satisfied the
  /// wait, or woke it while nothing was runnable).
  func noteOutsideWork() {
    state.withLock { Self.countOutsideArrival(in: &$0) }
  }

  private static func countOutsideArrival(in state: inout State) {
    state.outsideArrivals += 1
    state.firstOutsideStep = state.firstOutsideStep ?? state.steps
  }

  /// How many steps the schedule had taken when work from outside it first arrived, if it did:
  /// a replay follows the recorded run exactly up to there.
  var firstOutsideStep: Int? { state.withLock { $0.firstOutsideStep } }

  /// The steps the schedule took so far.
  var trace: ScheduleTrace {
    state.withLock { ScheduleTrace(steps: $0.steps, hash: $0.stepHash, firstOutsideStep: $0.firstOutsideStep.map { $0 + 1 }) }
  }

  /// Calls `wake` whenever work arrives, until ``stopWaking(_:)`` with the key it returns.
  func wakeOnArrival(_ wake: @escaping @Sendable () -> Void) -> UInt64 {
    state.withLock { state in
      state.nextArrivalKey += 1
      state.arrivals[state.nextArrivalKey] = wake
      return state.nextArrivalKey
    }
  }

  func stopWaking(_ key: UInt64) {
    _ = state.withLock { $0.arrivals.removeValue(forKey: key) }
  }

  /// Ends the test's schedule: pending work is dropped, sleepers are resumed as cancelled,
  /// and later submissions run at once on their caller. Swift concurrency jobs still
  /// pending go back to the platform's executors (``returnLeftoverJobs()``).
  func end() {
    returnLeftoverJobs()
    let sleepers = state.withLock { state in
      state.ended = true
      state.delayed.removeAll()
      for index in state.queues.indices { state.queues[index].ready.removeAll() }
      state.runnable.removeAll()
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
    record?.record(Issue(kind: .warning, message: "scheduled waiter: \(job) kept the schedule's thread for \(duration.secondsDescription) seconds, longer than the quiet period (it blocks its thread: a semaphore, a lock, a synchronous wait for work of another task); the schedule gave Swift concurrency back to Swift's own executors (\(count) pending job\(count == 1 ? "" : "s")), so the rest of the test runs in real time, neither ordered nor replayed", sourceLocation: nil))
  }

  /// Releases the capture and hands the pending jobs to the platform; returns how many,
  /// cancelled sleeps' timers aside.
  private func returnJobs() -> Int {
    ConcurrencyCapture.release(self)
    let (jobs, count) = state.withLock { state -> ([@Sendable () -> Void], Int) in
      let pending = (state.delayed + state.queues.flatMap(\.ready)).filter { $0.returnToPlatform != nil }
      state.delayed.removeAll { $0.returnToPlatform != nil }
      for index in state.queues.indices where state.queues[index].holdsJobs {
        state.queues[index].ready.removeAll()
      }
      state.runnable.removeAll { state.queues[$0].ready.isEmpty }
      return (pending.compactMap(\.returnToPlatform), pending.filter { !$0.isCancelledTimer }.count)
    }
    for job in jobs { job() }
    return count
  }
}
