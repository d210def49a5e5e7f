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
  }

  private struct Queue {
    let identity: QueueIdentity
    let isMain: Bool
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
    /// Wakes the wait in progress when work arrives.
    var arrival: (@Sendable () -> Void)?
    /// The thread running an item now, whose submissions are the schedule's own.
    var runningThread: ObjectIdentifier?
    /// Items submitted from outside the schedule since the test began.
    var outsideArrivals = 0
    /// Sleepers on the virtual clock, by sequence, resumed when the test ends.
    var sleepers: [UInt64: @Sendable (_ cancelled: Bool) -> Void] = [:]
    /// The index of the queue of the clock's sleepers, made at the first sleep.
    var clockQueue: Int?
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
    state.withLock { state in
      state.queues.append(Queue(identity: identity, isMain: false))
      state.picker.queueAdded()
      return state.queues.count - 1
    }
  }

  /// The labels of the test's queues, in the order they were made: `main, background`.
  var queueNames: String {
    state.withLock { $0.queues.map(\.identity.label) }.joined(separator: ", ")
  }

  // MARK: Submitting

  /// Puts `work` on queue `index`, runnable at once or after `delay` of virtual time.
  /// Returns `false` when the test has ended: the caller then runs the work itself.
  func submit(to index: Int, after delay: Duration = .zero, _ work: @escaping @Sendable () -> Void) -> Bool {
    let outside = !isScheduleOwnCaller
    let arrival = state.withLock { state -> (@Sendable () -> Void)?? in
      guard !state.ended else { return .none }
      state.sequence += 1
      let queue = state.queues[index]
      let item = Item(sequence: state.sequence, queue: index, due: state.now + max(.zero, delay),
                      identity: queue.identity, runsOnMainThread: queue.isMain, isFromOutside: outside, work: work)
      if delay > .zero {
        Self.insert(item, into: &state.delayed)
      } else {
        state.queues[index].ready.append(item)
      }
      if outside { state.outsideArrivals += 1 }
      return .some(state.arrival)
    }
    guard case .some(let wake) = arrival else { return false }
    wake?()
    return true
  }

  /// Registers a sleeper on the virtual clock until `deadline`: `resume(false)` runs when
  /// a wait's schedule reaches it, `resume(true)` when the test ends first. Returns the
  /// sleeper's key for ``cancelSleep(_:)``, or `nil` when the test has ended.
  func sleep(until deadline: Duration, resume: @escaping @Sendable (_ cancelled: Bool) -> Void) -> UInt64? {
    let outside = !isScheduleOwnCaller
    let registered = state.withLock { state -> (key: UInt64, wake: (@Sendable () -> Void)?)? in
      guard !state.ended else { return nil }
      let clockQueue = state.clockQueue ?? {
        state.queues.append(Queue(identity: QueueIdentity(label: "clock"), isMain: false))
        state.picker.queueAdded()
        state.clockQueue = state.queues.count - 1
        return state.queues.count - 1
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
      if outside { state.outsideArrivals += 1 }
      return (key, state.arrival)
    }
    registered?.wake?()
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
    if state.withLock({ $0.runningThread == thread }) { return true }
    return record?.isCallerTheBody ?? false
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
        let candidates = state.queues.indices.filter { !state.queues[$0].ready.isEmpty }
        if !candidates.isEmpty {
          state.steps += 1
          let chosen = state.picker.choose(among: candidates, step: state.steps)
          return .run(state.queues[chosen].ready.removeFirst())
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
      return state.queues.contains { !$0.ready.isEmpty }
    }
  }

  /// Moves the delayed items whose time has come to the end of their queues.
  private static func promoteDue(_ state: inout State) {
    while let first = state.delayed.first, first.due <= state.now {
      state.delayed.removeFirst()
      state.queues[first.queue].ready.append(first)
    }
  }

  /// Takes the items queue `index` holds now, for a `sync` onto it: they run before the
  /// synchronous work, as a serial queue runs them.
  func takeReady(from index: Int) -> [Item] {
    state.withLock { state in
      Self.promoteDue(&state)
      defer { state.queues[index].ready.removeAll() }
      return state.queues[index].ready
    }
  }

  /// Runs an item on the calling thread, as the queue it was submitted to, with `chain` as
  /// the queues it runs for (the item's queue by default).
  func run(_ item: Item, chain: [QueueIdentity]? = nil) {
    let thread = ObjectIdentifier(Thread.current)
    let previous = state.withLock { state in
      defer { state.runningThread = thread }
      return state.runningThread
    }
    defer { state.withLock { $0.runningThread = previous } }
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
    state.withLock { $0.outsideArrivals += 1 }
  }

  /// Calls `wake` whenever work arrives, until ``stopWaking()``.
  func wakeOnArrival(_ wake: @escaping @Sendable () -> Void) {
    state.withLock { $0.arrival = wake }
  }

  func stopWaking() {
    state.withLock { $0.arrival = nil }
  }

  /// Ends the test's schedule: pending work is dropped, sleepers are resumed as cancelled,
  /// and later submissions run at once on their caller.
  func end() {
    let sleepers = state.withLock { state in
      state.ended = true
      state.delayed.removeAll()
      for index in state.queues.indices { state.queues[index].ready.removeAll() }
      defer { state.sleepers.removeAll() }
      return Array(state.sleepers.values)
    }
    for resume in sleepers { resume(true) }
  }
}
