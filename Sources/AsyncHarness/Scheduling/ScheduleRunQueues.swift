/// The run queues of one test's schedule, as a plain value: each queue's work items, the
/// delayed items, virtual time, the seeded choice of which queue runs next
/// (``SchedulePicker``), the counts, and the trace of the steps taken.
///
/// It holds no lock, knows no thread and reads no real clock: ``Scheduler`` keeps one under
/// its lock, tells it whether each submission came from outside the schedule, and runs the
/// items it hands out.
///
/// A serial queue exposes only its first item. Delayed items join the end of their queue when
/// virtual time reaches them; when no queue has a runnable item, ``next(upTo:)`` moves virtual
/// time to the next delayed item. A Swift concurrency task's jobs form a queue of their own,
/// numbered in the order the tasks were first seen; any other job (an actor's turn) a queue of
/// one.
struct ScheduleRunQueues: Sendable {
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

  /// What the schedule has for a wait that asks for the next item (``next(upTo:)``).
  enum NextItem {
    /// Run this item (``Scheduler/run(_:chain:)``).
    case run(Item)
    /// Nothing is runnable before the virtual deadline; `nextDue` is the first delayed
    /// item after it, if any. `submissions` is the count of submissions seen (``submissions``):
    /// work that arrives later changes it.
    case idle(nextDue: Duration?, submissions: UInt64)
  }

  /// One serial queue.
  private struct Queue: Sendable {
    let identity: QueueIdentity
    let isMain: Bool
    /// Whether it holds Swift concurrency jobs (not one of the test's `Dispatching` queues).
    var holdsJobs = false
    var ready: [Item] = []
  }

  /// The index of the main queue.
  static let mainQueue = 0

  private var queues: [Queue] = []
  /// Items waiting for virtual time, sorted by due instant, then sequence.
  private var delayed: [Item] = []
  /// The indices of the queues with a runnable item, in ascending order.
  private var runnable: [Int] = []
  private var picker: SchedulePicker
  /// The hash of the queues the steps picked, in order (``ScheduleTrace``).
  private var stepHash = StableHash.offsetBasis
  /// The index of the queue of the clock's sleepers, made at the first sleep.
  private var clockQueue: Int?
  /// The queue of each task whose jobs the schedule took, by the runtime's task id.
  private var taskQueues: [UInt64: Int] = [:]
  /// The virtual time since the test began.
  private(set) var now: Duration = .zero
  /// How many items and sleepers were submitted (the last one's sequence): a wait sees new
  /// work arrive when it changes.
  private(set) var submissions: UInt64 = 0
  /// How many steps the schedule has taken.
  private(set) var steps = 0
  /// How many items arrived from outside the schedule, and how many times outside work took
  /// part in a wait (``noteOutsideWork()``).
  private(set) var outsideArrivals = 0
  /// How many steps the schedule had taken when work from outside it first arrived, if it did:
  /// a replay follows the recorded run exactly up to there.
  private(set) var firstOutsideStep: Int?
  /// Whether the schedule has ended (``end()``): it takes no more work.
  private(set) var hasEnded = false

  /// Empty queues (the main queue only) at virtual time zero, picking as `schedule` says.
  init(schedule: Schedule) {
    picker = SchedulePicker(schedule)
    _ = addQueue(Queue(identity: .main, isMain: true))
  }

  // MARK: Queues

  /// Adds a serial queue of the test's and returns its index.
  mutating func addQueue(_ identity: QueueIdentity) -> Int {
    addQueue(Queue(identity: identity, isMain: false))
  }

  /// Adds `queue`, which the picker then counts too, and returns its index.
  private mutating func addQueue(_ queue: Queue) -> Int {
    queues.append(queue)
    picker.queueAdded()
    return queues.count - 1
  }

  /// The labels of the test's queues, in the order they were made: `main, background`, then
  /// how many Swift concurrency tasks took part.
  var queueNames: String {
    let tasks = taskQueues.count
    return (queues.filter { !$0.holdsJobs }.map(\.identity.label)
      + (tasks == 0 ? [] : ["\(tasks) Swift concurrency task\(tasks == 1 ? "" : "s")"]))
      .joined(separator: ", ")
  }

  // MARK: Submitting

  /// Puts `work` on queue `index`, runnable at once or after `delay` of virtual time.
  /// Returns `false` once the schedule has ended.
  mutating func submit(to index: Int, after delay: Duration = .zero, fromOutside: Bool,
                       _ work: @escaping @Sendable () -> Void) -> Bool {
    guard !hasEnded else { return false }
    let queue = queues[index]
    enqueue(Item(sequence: nextSequence(), queue: index, due: now + max(.zero, delay), identity: queue.identity,
                 runsOnMainThread: queue.isMain, isFromOutside: fromOutside, work: work),
            delayed: delay > .zero)
    return true
  }

  /// Takes a Swift concurrency job: one the schedule's own code enqueued, or a later job of a
  /// task it already took (then as work from outside). A job of a task not seen before opens
  /// a queue `task #N`; a job of no task, a queue of one (`an actor's job`).
  /// - Parameters:
  ///   - task: The runtime's id of the job's task; `nil` for a job that is not a task's.
  ///   - onMainThread: Whether it runs on the main actor.
  ///   - delay: For a sleep, the virtual time until it is due.
  ///   - fromOutside: Whether it was enqueued from outside the schedule.
  ///   - runningQueue: The queue of the item running now, if any: a delayed job the schedule's
  ///     own code enqueues is the timer of that task's sleep.
  ///   - work: Runs the job.
  ///   - returnToPlatform: Hands the job to the platform, if the test ends before it ran.
  /// - Returns: `false` for a job from outside of no task the schedule took, and once the
  ///   schedule has ended: the job is not the schedule's.
  mutating func submitJob(task: UInt64?, onMainThread: Bool, after delay: Duration, fromOutside: Bool,
                          runningQueue: Int?, work: @escaping @Sendable () -> Void,
                          returnToPlatform: @escaping @Sendable () -> Void) -> Bool {
    guard !hasEnded else { return false }
    let known = task.flatMap { taskQueues[$0] }
    guard !fromOutside || known != nil else { return false }
    let index = known ?? {
      let label = task == nil ? "an actor's job" : "task #\(taskQueues.count + 1)"
      let index = addQueue(Queue(identity: QueueIdentity(label: label), isMain: false, holdsJobs: true))
      if let task { taskQueues[task] = index }
      return index
    }()
    let delayed = delay > .zero
    let item = Item(sequence: nextSequence(), queue: index, due: now + max(.zero, delay),
                    identity: queues[index].identity, runsOnMainThread: onMainThread, isFromOutside: fromOutside,
                    work: work, returnToPlatform: returnToPlatform, sleeper: delayed && !fromOutside ? runningQueue : nil)
    if !delayed { releaseCancelledSleeps(of: index) }
    enqueue(item, delayed: delayed)
    return true
  }

  /// Adds a sleeper on the virtual clock, due at `deadline` (at once if that has passed), on
  /// the clock's queue (made at the first sleep); `wake(key)` is its work.
  /// - Returns: The sleeper's key, for ``removeSleeper(_:)``; `nil` once the schedule has ended.
  mutating func addSleeper(until deadline: Duration, fromOutside: Bool,
                           wake: @escaping @Sendable (_ key: UInt64) -> Void) -> UInt64? {
    guard !hasEnded else { return nil }
    let clockQueue = clockQueue ?? addQueue(Queue(identity: QueueIdentity(label: "clock"), isMain: false))
    self.clockQueue = clockQueue
    let key = nextSequence()
    enqueue(Item(sequence: key, queue: clockQueue, due: max(now, deadline), identity: queues[clockQueue].identity,
                 runsOnMainThread: false, isFromOutside: fromOutside, work: { wake(key) }),
            delayed: true)
    return key
  }

  /// Removes the sleeper `key` while it waits for virtual time (once due, its item stays).
  mutating func removeSleeper(_ key: UInt64) {
    delayed.removeAll { $0.sequence == key }
  }

  /// Counts a submission and returns its sequence.
  private mutating func nextSequence() -> UInt64 {
    submissions += 1
    return submissions
  }

  /// Makes the timers of the sleeps of the task whose queue is `index` due at once: the task
  /// runs again, so its sleep was cancelled, and the timer's job only cleans up.
  private mutating func releaseCancelledSleeps(of index: Int) {
    guard delayed.contains(where: { $0.sleeper == index }) else { return }
    for var timer in delayed.filter({ $0.sleeper == index }) {
      timer.isCancelledTimer = true
      append(timer)
    }
    delayed.removeAll { $0.sleeper == index }
  }

  /// Puts a new item among the delayed ones, or at the end of its queue, and counts it if it
  /// came from outside.
  private mutating func enqueue(_ item: Item, delayed isDelayed: Bool) {
    if isDelayed {
      let index = delayed.firstIndex { ($0.due, $0.sequence) > (item.due, item.sequence) } ?? delayed.endIndex
      delayed.insert(item, at: index)
    } else {
      append(item)
    }
    if item.isFromOutside { noteOutsideWork() }
  }

  /// Appends a runnable item to its queue, which becomes runnable if it was empty.
  private mutating func append(_ item: Item) {
    if queues[item.queue].ready.isEmpty {
      runnable.insert(item.queue, at: runnablePosition(of: item.queue))
    }
    queues[item.queue].ready.append(item)
  }

  /// Removes `queue` from the runnable ones.
  private mutating func stopRunning(_ queue: Int) {
    let position = runnablePosition(of: queue)
    if position < runnable.count && runnable[position] == queue { runnable.remove(at: position) }
  }

  /// Where `queue` is, or would go, in the ascending list of runnable queues (a binary
  /// search: a test may have thousands of tasks runnable at once).
  private func runnablePosition(of queue: Int) -> Int {
    var (low, high) = (0, runnable.count)
    while low < high {
      let middle = (low + high) / 2
      if runnable[middle] < queue { low = middle + 1 } else { high = middle }
    }
    return low
  }

  // MARK: Stepping

  /// Takes the next step of the schedule: the first item of the queue the picker chooses
  /// among the runnable ones; when none is runnable, virtual time first advances to the next
  /// delayed item, as long as that is no later than `deadline`.
  mutating func next(upTo deadline: Duration) -> NextItem {
    while true {
      promoteDue()
      if !runnable.isEmpty {
        steps += 1
        let chosen = picker.choose(among: runnable, step: steps)
        stepHash = StableHash.fnv1a64(continuing: stepHash, withUnsafeBytes(of: UInt32(chosen).littleEndian, Array.init))
        let item = queues[chosen].ready.removeFirst()
        if queues[chosen].ready.isEmpty { stopRunning(chosen) }
        return .run(item)
      }
      guard let next = delayed.first else { return .idle(nextDue: nil, submissions: submissions) }
      guard next.due <= deadline else { return .idle(nextDue: next.due, submissions: submissions) }
      now = max(now, next.due)
    }
  }

  /// Moves the delayed items whose time has come to the end of their queues.
  private mutating func promoteDue() {
    while let first = delayed.first, first.due <= now {
      delayed.removeFirst()
      append(first)
    }
  }

  /// Takes the items queue `index` holds now, for a `sync` onto it: they run before the
  /// synchronous work, as a serial queue runs them. No step is counted.
  mutating func takeReady(from index: Int) -> [Item] {
    promoteDue()
    defer {
      queues[index].ready.removeAll()
      stopRunning(index)
    }
    return queues[index].ready
  }

  /// Advances virtual time to `instant` (never back).
  mutating func advance(to instant: Duration) {
    now = max(now, instant)
  }

  // MARK: Outside work and the trace

  /// Records that work from outside the schedule arrived, or took part in a wait (it
  /// satisfied the wait, or woke it while nothing was runnable).
  mutating func noteOutsideWork() {
    outsideArrivals += 1
    firstOutsideStep = firstOutsideStep ?? steps
  }

  /// The steps the schedule took so far.
  var trace: ScheduleTrace {
    ScheduleTrace(steps: steps, hash: stepHash, firstOutsideStep: firstOutsideStep.map { $0 + 1 })
  }

  // MARK: Ending

  /// Takes the pending Swift concurrency jobs (delayed or runnable), to hand back to the
  /// platform's executors; the test's own queue items and sleepers stay.
  mutating func takeJobs() -> [Item] {
    let jobs = (delayed + queues.flatMap(\.ready)).filter { $0.returnToPlatform != nil }
    delayed.removeAll { $0.returnToPlatform != nil }
    for index in queues.indices where queues[index].holdsJobs {
      queues[index].ready.removeAll()
    }
    runnable.removeAll { queues[$0].ready.isEmpty }
    return jobs
  }

  /// Ends the schedule: pending items are dropped, and later submissions are refused.
  mutating func end() {
    hasEnded = true
    delayed.removeAll()
    for index in queues.indices { queues[index].ready.removeAll() }
    runnable.removeAll()
  }
}
