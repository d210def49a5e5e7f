// The other half of the library `harness test` preloads into a package's own test bundle
// (compiled with AsyncHarnessBundleChannel.swift into one library; see that file): under
// `harness test --explore N` and `--schedule TOKEN`, it installs Swift concurrency executors of
// its own in the bundle, at load time, before `main`, so that the bundle's jobs (its tasks,
// actor turns, `@MainActor` work, `Task.yield`, continuations, task groups; the testing
// library's own as well) run one at a time, in an order a seed chooses, and `Task.sleep` and
// the continuous and suspending clocks' sleeps wake in the schedule's order of their virtual
// due times, no earlier than the real time they say. The harness runs each
// explored test alone in a bundle of its own, once per schedule.
//
// It chooses as the harness's scheduled strategy does (SchedulePicking: a SplitMix64 generator;
// a random walk, or PCT with priorities per queue and change points drawn from the first 1,024
// steps), over queues that are the bundle's tasks in the order they were first seen (a job of
// no task, an actor's turn, a queue of its own). It cannot import AsyncHarness (a bundle that
// links AsyncHarness must never see a second copy of it): SchedulePicking is compiled into
// this library from the very file the core's module AsyncHarnessSchedulePicking is built from
// (Sources/AsyncHarness/Shared/SchedulePicking.swift).
//
// Dispatch is under the schedule too: the blocks the schedule's work sends (`dispatch_async`,
// `dispatch_barrier_async`, `dispatch_group_async`, `dispatch_after`, which this library
// interposes) are jobs of it, a serial queue's in the order sent and a global queue's in any,
// each run on its queue by Dispatch while the schedule waits for it; `dispatch_sync` runs the
// blocks held for its queue first. Sleeps and `dispatch_after` take the real time they say.
//
// A job sent from a thread the schedule does not run (a thread of the test's own, the testing
// library's main thread) while the schedule's own work runs or waits is work outside
// its control: counted, and reported with the steps taken at each test's end
// (`{"record":"schedule",…}`), so the harness never claims an order it did not control. A test
// whose Swift concurrency work has nothing left to run, no sleeper due and no job arriving for
// a quiet period (the scheduled strategy's, 200 ms unless the harness says otherwise), while
// the main thread is free (not running a synchronous test body), is stuck. A job that keeps the
// schedule's thread for a quiet period while other jobs wait (it blocks on one of them: a
// semaphore, a synchronous wait) would hold the test until its time limit: the schedule then
// hands every job to Swift's own executors, from that step on, and says so in its record
// (`escapedAt`), as the scheduled strategy gives a test's jobs back when one blocks its driver. (a continuation never resumed, a lost wake-up): that
// is reported at once (`{"record":"stuck",…}`), and the harness ends the test there. Under
// `--trace`, each step a test's schedule takes is said as it is taken (`{"record":"step",…}`),
// up to the harness's limit of steps a test.
#if os(Linux) && compiler(>=6.3)
@_spi(ExperimentalCustomExecutors) @_spi(ExperimentalScheduling) import _Concurrency
import Dispatch
import Glibc
import Synchronization

/// The variable naming the schedule, the quiet period in milliseconds and how many steps of a
/// test to say (0: none), `SEED:POLICY:QUIET:STEPS` (`7:random:200:0`, `3:pct2:200:10000`);
/// keep in step with BundleChannelLibrary.swift.
private let scheduleVariable = "ASYNC_HARNESS_BUNDLE_SCHEDULE"

@used @section(".init_array")
private let installExplorer: @convention(c) () -> Void = { BundleExplorer.load() }

enum BundleExplorer {
  /// The schedule running this bundle's jobs, when the harness asked for one.
  nonisolated(unsafe) static var scheduler: ExplorerScheduler?
  /// Sends a record on the channel; set at load time by the channel's half.
  nonisolated(unsafe) static var send: (@Sendable (String) -> Void)?
  /// How long a schedule with nothing to run waits for work from outside before it reports
  /// the running test stuck, in seconds.
  nonisolated(unsafe) static var quietPeriod = 0.2
  /// How many steps of each test are said as they are taken (under `--trace`), 0 for none.
  nonisolated(unsafe) static var stepsSaid = 0

  /// Reads the schedule the harness asked for (and removes it from the environment, so that
  /// processes the tests start never see it) and installs the executors.
  static func load() {
    guard let value = getenv(scheduleVariable) else { return }
    let text = String(cString: value)
    unsetenv(scheduleVariable)
    let parts = text.split(separator: ":")
    guard parts.count == 4, let seed = UInt64(parts[0]), let quiet = Int(parts[2]), let steps = Int(parts[3]) else { return }
    quietPeriod = Double(quiet) / 1000
    stepsSaid = steps
    let depth: Int? = parts[1] == "random" ? nil : Int(parts[1].dropFirst(3))
    guard parts[1] == "random" || (parts[1].hasPrefix("pct") && depth != nil) else { return }
    scheduler = ExplorerScheduler(picker: SchedulePicking(seed: seed, pctDepth: depth))
    _createExecutors(factory: ExplorerExecutors.self)
  }

  /// The record of the steps taken so far, sent just before each test's end; `nil` when no
  /// schedule runs.
  static func record() -> String? {
    scheduler?.record()
  }

  /// A test began: from here its work having nothing to run is its being stuck.
  static func testStarted() {
    scheduler?.testStarted()
  }
}

/// Runs the bundle's jobs one at a time on a thread of its own (a `@MainActor` job on the
/// main thread, while that thread waits), each chosen by the picker among the queues with a
/// job ready; when none is ready, virtual time moves to the earliest sleeper's due time, once
/// the real time it said passed.
final class ExplorerScheduler: Sendable {
  /// What a step runs: a Swift concurrency job, or a block a test sent to Dispatch.
  private enum Work {
    case swift(UnownedJob)
    case dispatch(SentBlock)
  }

  private struct Job {
    let work: Work
    let onMainThread: Bool
    let queue: Int
    /// What the trace calls the job's queue: `task #3`, `an actor's job`.
    let label: String
  }

  private struct State {
    var picker: SchedulePicking
    var ready: [Job] = []
    /// Jobs asleep: due at `due` on virtual time, in the order they slept, and not before
    /// `realDue` on the continuous clock (a sleep takes the real time it says).
    var sleepers: [(due: Int64, order: Int, realDue: ContinuousClock.Instant, job: Job)] = []
    var sleepersAdded = 0
    var queues: [UInt64: Int] = [:]
    /// The schedule's queue of each serial Dispatch queue (by its address), whose blocks run
    /// in the order sent.
    var dispatchQueues: [UInt: Int] = [:]
    var queueCount = 0
    /// Virtual time, in nanoseconds since the schedule began.
    var now: Int64 = 0
    var running = false
    /// Whether the scheduler's thread sleeps until a job comes.
    var idle = false
    var steps = 0
    /// FNV-1a 64 of the queues the steps ran, as `ScheduleTrace` folds it.
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    var jobs = 0
    var outside = 0
    var firstOutsideStep: Int?
    /// The jobs taken when the running test began (none runs: `nil`), and whether it was
    /// reported stuck.
    var jobsAtTestStart: Int?
    var stuckReported = false
    /// The steps taken when the running test began.
    var stepsAtTestStart: Int?
    /// The step whose job kept the schedule's thread, after which every job went to Swift's
    /// own executors; `nil` while the schedule runs them.
    var escapedAt: Int?
    /// The step after which the test's own executor hook took its jobs, which then went to
    /// Swift's own executors unexplored.
    var hookedAt: Int?
    /// Whether the schedule, with nothing of its own to run, waits for work that something
    /// outside it can still do (``OutsideWork``): a job sent from outside then is counted so.
    var awaitingOutside = false

    /// Takes a job: ready now, or asleep for `delay` nanoseconds, of virtual time and of real.
    mutating func take(_ job: Job, delay: Int64?) {
      guard let delay else { return ready.append(job) }
      sleepers.append((now + max(0, delay), sleepersAdded, ContinuousClock.now.advanced(by: .nanoseconds(max(0, delay))), job))
      sleepersAdded += 1
    }

    /// Stops scheduling from this step on: the jobs waiting, each with what is left of its
    /// sleep, go to Swift's own executors.
    mutating func escape() -> [(job: Job, delay: Int64?)] {
      escapedAt = steps
      defer {
        ready = []
        sleepers = []
      }
      let realNow = ContinuousClock.now
      return ready.map { ($0, nil) } + sleepers.map { sleeper in
        let left = realNow.duration(to: sleeper.realDue)
        return (sleeper.job, max(sleeper.due - now, left > .zero ? Int64(left.components.seconds) * 1_000_000_000
          + left.components.attoseconds / 1_000_000_000 : 0))
      }
    }

    /// The schedule's queue of a block sent to the Dispatch queue at `address`: that queue's
    /// own, in the order sent, unless it is one of Dispatch's concurrent global queues, whose
    /// blocks may run in any order: then a queue of its own.
    mutating func queue(ofDispatchQueue address: UInt) -> Int {
      if RealDispatch.globalQueues.contains(address) { return queue(of: nil) }
      if let known = dispatchQueues[address] { return known }
      let index = queue(of: nil)
      dispatchQueues[address] = index
      return index
    }

    mutating func queue(of task: UInt64?) -> Int {
      if let task, let known = queues[task] { return known }
      let index = queueCount
      queueCount += 1
      picker.queueAdded()
      if let task { queues[task] = index }
      return index
    }
  }

  private let state: Mutex<State>
  private let wake = DispatchSemaphore(value: 0)
  /// Set on the scheduler's thread, and on the main thread while it runs a scheduled job:
  /// what those send is the schedule's own work.
  fileprivate static let ownThread = ThreadMark()
  /// The kernel's IDs of the schedule's own threads (the scheduler's and its watch's), and of
  /// the main thread, whose being free is asked directly: none of them is outside work.
  private static let ownThreads = Mutex<Set<Int32>>([getpid()])

  init(picker: SchedulePicking) {
    state = Mutex(State(picker: picker))
    ExplorerThread.start { [self] in run() }
    ExplorerThread.start { [self] in watch() }
  }

  /// Takes a job: ready now, or after `delay` nanoseconds of virtual time.
  func submit(_ job: UnownedJob, task: UInt64?, onMainThread: Bool, delay: Int64? = nil) {
    let own = Self.ownThread.isSet
    let hooked = ExecutorHooks.installed
    let (wakeUp, handedOver) = state.withLock { state -> (Bool?, [(job: Job, delay: Int64?)]) in
      if hooked && state.escapedAt == nil {
        // The test installed its own executor hook: the order is the one it asks for.
        state.hookedAt = state.steps
        return (nil, state.escape())
      }
      guard state.escapedAt == nil else { return (nil, []) }
      state.jobs += 1
      let queue = state.queue(of: task)
      // A new task started from outside while the schedule's last job ends (a testing
      // library starting a test's next phase) competes with nothing: it is not counted.
      let startsATask = task.map { _ in queue == state.queueCount - 1 } ?? false
      if !own && (!state.ready.isEmpty || (state.running && !startsATask) || state.awaitingOutside) {
        state.outside += 1
        if state.firstOutsideStep == nil { state.firstOutsideStep = state.steps + 1 }
      }
      let job = Job(work: .swift(job), onMainThread: onMainThread, queue: queue,
                    label: (task == nil ? "an actor's job" : "task #\(queue + 1)") + (onMainThread ? " on the main actor" : ""))
      state.take(job, delay: delay)
      defer { state.idle = false }
      return (state.idle, [])
    }
    for pending in handedOver { Self.handOver(pending.job, delay: pending.delay) }
    guard let wakeUp else { return Self.toPlatform(job, onMainThread: onMainThread, delay: delay) }
    if wakeUp { wake.signal() }
  }

  /// Takes a block a test's scheduled work sent to Dispatch (`dispatch_async`,
  /// `dispatch_barrier_async`, `dispatch_group_async`, `dispatch_after`), to run when the
  /// schedule picks it, on its queue; `false` when the schedule does not take it (another
  /// thread sent it, no test runs, the schedule gave its jobs back, a time of another clock):
  /// Dispatch runs it then as it would.
  func submit(_ sent: SentBlock, delay: Int64? = nil) -> Bool {
    // Only the work the schedule runs sends blocks it takes: a test's Swift concurrency, the
    // blocks it runs. What another thread sends (a synchronous XCTest body, the testing
    // library, a thread of the test's own) is Dispatch's, as it is outside the schedule.
    guard Self.ownThread.isSet, ExecutorHooks.installed == false else { return false }
    let wakeUp = state.withLock { state -> Bool? in
      guard state.escapedAt == nil, state.jobsAtTestStart != nil else { return nil }
      state.jobs += 1
      let onMain = sent.queue == RealDispatch.mainQueue
      let job = Job(work: .dispatch(sent), onMainThread: onMain, queue: state.queue(ofDispatchQueue: sent.queue),
                    label: "a Dispatch block on \(onMain ? "the main queue" : RealDispatch.label(of: sent.queue))")
      state.take(job, delay: delay)
      defer { state.idle = false }
      return state.idle
    }
    guard let wakeUp else { return false }
    if let group = sent.group { RealDispatch.groupEnter?(group) }
    if wakeUp { wake.signal() }
    return true
  }

  /// Before `dispatch_sync` onto the queue at `address`: the blocks sent to it and not run
  /// yet run first, here, in the order sent (a serial queue's order), so the synchronous
  /// block never jumps ahead of them.
  func drainBlocks(sentTo address: UInt) {
    guard !RealDispatch.globalQueues.contains(address) else { return }
    let held = state.withLock { state -> [SentBlock] in
      guard let queue = state.dispatchQueues[address] else { return [] }
      let held = state.ready.filter { $0.queue == queue }
      state.ready.removeAll { $0.queue == queue }
      return held.compactMap { if case .dispatch(let sent) = $0.work { sent } else { nil } }
    }
    for sent in held { sent.runOnItsQueue() }
  }

  /// Hands a job to what runs it outside the schedule: Swift's own executors, or Dispatch.
  private static func handOver(_ job: Job, delay: Int64?) {
    switch job.work {
    case .swift(let swift): toPlatform(swift, onMainThread: job.onMainThread, delay: delay)
    case .dispatch(let sent): sent.send(after: delay, then: nil)
    }
  }

  /// Hands `job` to Swift's own executors, after `delay` nanoseconds of real time when given.
  private static func toPlatform(_ job: UnownedJob, onMainThread: Bool, delay: Int64?) {
    if onMainThread { return PlatformExecutorFactory.mainExecutor.enqueue(ExecutorJob(job)) }
    let platform = PlatformExecutorFactory.defaultExecutor
    if let delay, let scheduling = platform as? any SchedulingExecutor {
      return scheduling.enqueue(ExecutorJob(job), after: .nanoseconds(delay), tolerance: nil, clock: ContinuousClock())
    }
    platform.enqueue(ExecutorJob(job))
  }

  /// Every quiet period: when the job running is the one that ran a quiet period ago and
  /// others wait, it blocks on them, and every job goes to Swift's own executors from then on.
  private func watch() {
    Self.ownThreads.withLock { _ = $0.insert(OutsideWork.currentThread()) }
    var lastStep = -1
    while true {
      usleep(UInt32(BundleExplorer.quietPeriod * 1_000_000))
      let handedOver = state.withLock { state -> [(job: Job, delay: Int64?)]? in
        defer { lastStep = state.steps }
        guard state.escapedAt == nil, state.running, state.steps == lastStep,
          !state.ready.isEmpty || !state.sleepers.isEmpty
        else { return nil }
        return state.escape()
      }
      guard let handedOver else { continue }
      for pending in handedOver { Self.handOver(pending.job, delay: pending.delay) }
      return
    }
  }

  /// A test began.
  func testStarted() {
    state.withLock { state in
      state.jobsAtTestStart = state.jobs
      state.stepsAtTestStart = state.steps
      state.stuckReported = false
    }
  }

  /// `{"record":"schedule","steps":N,"hash":H,"jobs":J,"outside":O,"firstOutsideStep":S}`, sent
  /// as a test ends (none runs after).
  func record() -> String {
    state.withLock { state in
      state.jobsAtTestStart = nil
      state.stepsAtTestStart = nil
      return #"{"record":"schedule","steps":\#(state.steps),"hash":"\#(String(state.hash, radix: 16))","jobs":\#(state.jobs),"#
        + #""outside":\#(state.outside)\#(state.firstOutsideStep.map { #","firstOutsideStep":\#($0)"# } ?? "")"#
        + #"\#(state.escapedAt.map { #","escapedAt":\#($0)"# } ?? "")"#
        + #"\#(state.hookedAt.map { #","hookedAt":\#($0)"# } ?? "")}"#
    }
  }

  /// The next job to run, once one is ready, said as a step of the running test under `--trace`.
  private func next() -> Job {
    while true {
      let (job, said, sleepUntil) = state.withLock { state -> (Job?, String?, ContinuousClock.Instant?) in
        if state.ready.isEmpty, let earliest = state.sleepers.map(\.due).min() {
          // The sleeps due first wake in the schedule's order, once the real time they said passed.
          let realDue = state.sleepers.filter { $0.due <= max(state.now, earliest) }.map(\.realDue).max()!
          if realDue > ContinuousClock.now {
            state.idle = true
            return (nil, nil, realDue)
          }
          state.now = max(state.now, earliest)
          let due = state.sleepers.filter { $0.due <= state.now }.sorted { ($0.due, $0.order) < ($1.due, $1.order) }
          state.sleepers.removeAll { $0.due <= state.now }
          state.ready += due.map(\.job)
        }
        guard !state.ready.isEmpty else {
          state.idle = true
          return (nil, nil, nil)
        }
        state.awaitingOutside = false
        state.steps += 1
        var candidates: [Int] = []
        for job in state.ready where !candidates.contains(job.queue) { candidates.append(job.queue) }
        let chosen = state.picker.choose(among: candidates, step: state.steps)
        for byte in withUnsafeBytes(of: UInt64(chosen).littleEndian, Array.init) {
          state.hash = (state.hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        state.running = true
        let job = state.ready.remove(at: state.ready.firstIndex { $0.queue == chosen }!)
        guard let start = state.stepsAtTestStart, state.steps - start <= BundleExplorer.stepsSaid else { return (job, nil, nil) }
        return (job, #"{"record":"step","step":\#(state.steps - start),"ran":"\#(job.label)","virtualTime":\#(state.now)}"#, nil)
      }
      if let said { BundleExplorer.send?(said) }
      if let job { return job }
      if let sleepUntil {
        let left = ContinuousClock.now.duration(to: sleepUntil)
        _ = wake.wait(timeout: .now() + .nanoseconds(Int(left.components.seconds) * 1_000_000_000
          + Int(left.components.attoseconds / 1_000_000_000)))
        continue
      }
      if wake.wait(timeout: .now() + BundleExplorer.quietPeriod) == .timedOut, let stuck = stuck() {
        BundleExplorer.send?(stuck)
      }
    }
  }

  /// `{"record":"stuck","virtualTime":NANOSECONDS}` when the running test sent Swift
  /// concurrency work and none of it can run, none is due and none came for the quiet
  /// period, while the main thread is free (it answers within another quiet period: a
  /// synchronous test body blocking it, as XCTest runs one, is running, not stuck); once a test.
  private func stuck() -> String? {
    let candidate = state.withLock { state in
      state.escapedAt == nil && state.idle && state.ready.isEmpty && state.sleepers.isEmpty && !state.stuckReported
        && state.jobsAtTestStart.map { state.jobs > $0 } == true
    }
    guard candidate else { return nil }
    let answered = DispatchSemaphore(value: 0)
    RealDispatch.onMain { answered.signal() }
    guard answered.wait(timeout: .now() + BundleExplorer.quietPeriod) == .success else { return nil }
    // Something outside the schedule can still resume the test: wait for it, in real time.
    if OutsideWork.canResume(besides: Self.ownThreads.withLock { $0 }) {
      state.withLock { $0.awaitingOutside = true }
      return nil
    }
    return state.withLock { state in
      guard state.idle, state.ready.isEmpty, state.sleepers.isEmpty, !state.stuckReported, state.jobsAtTestStart != nil
      else { return nil }
      state.stuckReported = true
      return #"{"record":"stuck","virtualTime":\#(state.now)}"#
    }
  }

  private func run() {
    Self.ownThread.set()
    Self.ownThreads.withLock { _ = $0.insert(OutsideWork.currentThread()) }
    let taskExecutor = ExplorerExecutors.task.asUnownedTaskExecutor()
    while true {
      let next = next()
      switch next.work {
      case .swift(let job) where next.onMainThread:
        let done = DispatchSemaphore(value: 0)
        RealDispatch.onMain {
          Self.ownThread.set()
          job.runSynchronously(isolatedTo: ExplorerExecutors.main.asUnownedSerialExecutor(), taskExecutor: taskExecutor)
          Self.ownThread.clear()
          done.signal()
        }
        done.wait()
      case .swift(let job):
        job.runSynchronously(on: taskExecutor)
      case .dispatch(let sent) where next.onMainThread:
        // On the main queue, by the main thread: what it sends meanwhile is the schedule's own work.
        let done = DispatchSemaphore(value: 0)
        sent.send(after: nil) { done.signal() }
        done.wait()
      case .dispatch(let sent):
        // On its own queue, on this thread: a synchronous dispatch runs the block here, as
        // on its queue (its queue's specifics, one at a time with the queue's other blocks).
        sent.runOnItsQueue()
      }
      let escaped = state.withLock { state in
        state.running = false
        return state.escapedAt != nil
      }
      // Swift's own executors run every job from now on.
      if escaped { return }
    }
  }

  /// The runtime's id of a job's task ("ExecutorJob(id: 7)"), `nil` for a job of no task.
  static func task(of job: borrowing ExecutorJob) -> UInt64? {
    job.description.split(separator: " ").last.flatMap { UInt64($0.dropLast()) }
  }

  /// The nanoseconds from now until `instant` of `clock`; `nil` for a clock that is neither
  /// the continuous nor the suspending one (its sleeps stay on real time).
  static func delay<C: Clock>(until instant: C.Instant, of clock: C) -> Int64? {
    guard C.self == ContinuousClock.self || C.self == SuspendingClock.self,
      let remaining = clock.now.duration(to: instant) as? Duration
    else { return nil }
    let parts = remaining.components
    return max(0, parts.seconds * 1_000_000_000 + parts.attoseconds / 1_000_000_000)
  }
}

/// A block a test sent to Dispatch, which the schedule runs on its queue when it picks it: the
/// queue (its address), whether it was sent as a barrier, and the group it belongs to, which
/// was entered as it was sent and is left once it ran.
final class SentBlock: @unchecked Sendable {
  let queue: UInt
  /// The block, copied to the heap (a caller in C may send a block of its stack, which
  /// Dispatch copies as it takes it): released with the last reference to this.
  private let copied: UnsafeRawPointer
  let barrier: Bool
  let group: OpaquePointer?

  init(queue: OpaquePointer?, block: UnsafeRawPointer, barrier: Bool = false, group: OpaquePointer? = nil) {
    self.queue = UInt(bitPattern: queue)
    copied = Blocks.copy(block)
    self.barrier = barrier
    self.group = group
    // Kept alive while the block waits, as Dispatch keeps them for a block it holds.
    RealDispatch.retain?(queue)
    if let group { RealDispatch.retain?(group) }
  }

  deinit {
    Blocks.release(copied)
    RealDispatch.release?(OpaquePointer(bitPattern: queue))
    if let group { RealDispatch.release?(group) }
  }

  /// Runs the block here: what it sends is the schedule's own work; then its group is left
  /// and `then` called.
  func run(then: (@Sendable () -> Void)?) {
    ExplorerScheduler.ownThread.set()
    Blocks.invoke(copied)
    ExplorerScheduler.ownThread.clear()
    if let group { RealDispatch.groupLeave?(group) }
    then?()
  }

  /// Runs it on its queue from this thread (`dispatch_sync_f`, as a barrier when it was sent
  /// as one): Dispatch runs it here, without a hand-off to another thread and back.
  func runOnItsQueue() {
    let context = Unmanaged.passUnretained(self).toOpaque()
    let work: @convention(c) (UnsafeMutableRawPointer?) -> Void = { context in
      Unmanaged<SentBlock>.fromOpaque(context!).takeUnretainedValue().run(then: nil)
    }
    if barrier {
      RealDispatch.barrierSyncFunction?(OpaquePointer(bitPattern: queue), context, work)
    } else {
      RealDispatch.syncFunction?(OpaquePointer(bitPattern: queue), context, work)
    }
  }

  /// Sends it to its queue (after `delay` nanoseconds when given, as a barrier when it was
  /// sent as one), through Dispatch's function-and-context calls: Swift makes no block of it.
  func send(after delay: Int64?, then: (@Sendable () -> Void)?) {
    let queue = OpaquePointer(bitPattern: self.queue)
    let context = Unmanaged.passRetained(Sending(self, then: then)).toOpaque()
    let work: @convention(c) (UnsafeMutableRawPointer?) -> Void = { context in
      let sending = Unmanaged<Sending>.fromOpaque(context!).takeRetainedValue()
      sending.sent.run(then: sending.then)
    }
    if let delay, let when = RealDispatch.time?(0, delay) {
      RealDispatch.afterFunction?(when, queue, context, work)
    } else if barrier {
      RealDispatch.barrierAsyncFunction?(queue, context, work)
    } else {
      RealDispatch.asyncFunction?(queue, context, work)
    }
  }

  /// A block on its way, with what is called once it ran.
  private final class Sending {
    let sent: SentBlock
    let then: (@Sendable () -> Void)?
    init(_ sent: SentBlock, then: (@Sendable () -> Void)?) {
      self.sent = sent
      self.then = then
    }
  }
}

/// The blocks runtime's copy, release and call, by hand, on a block's address: a block a
/// caller in C sends may live on its stack, and Swift, handed one, neither copies it nor passes
/// a block of its own to a C function pointer safely on Linux; the library never converts a
/// block to a Swift closure or back.
enum Blocks {
  private typealias Copy = @convention(c) (UnsafeRawPointer?) -> UnsafeRawPointer?
  private typealias Release = @convention(c) (UnsafeRawPointer?) -> Void
  private static let copyFunction = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "_Block_copy")
    .map { unsafeBitCast($0, to: Copy.self) }
  private static let releaseFunction = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "_Block_release")
    .map { unsafeBitCast($0, to: Release.self) }

  /// `block` copied to the heap (retained, when it is there already).
  static func copy(_ block: UnsafeRawPointer) -> UnsafeRawPointer {
    copyFunction?(block) ?? block
  }

  static func release(_ block: UnsafeRawPointer) { releaseFunction?(block) }

  /// Calls a block: its function (at offset 16, after its isa, flags and reserved fields)
  /// with the block itself, as the blocks ABI does.
  static func invoke(_ block: UnsafeRawPointer) {
    block.load(fromByteOffset: 16, as: (@convention(c) (UnsafeRawPointer) -> Void).self)(block)
  }
}

/// Libdispatch's own functions, found past this library, and the queues the schedule knows:
/// the main queue, and the concurrent global ones.
enum RealDispatch {
  typealias QueueBlock = @convention(c) (OpaquePointer?, UnsafeRawPointer) -> Void
  typealias TimeQueueBlock = @convention(c) (UInt64, OpaquePointer?, UnsafeRawPointer) -> Void
  typealias GroupQueueBlock = @convention(c) (OpaquePointer?, OpaquePointer?, UnsafeRawPointer) -> Void
  /// A call on a Dispatch object: a group's enter and leave, an object's retain and release.
  typealias GroupCall = @convention(c) (OpaquePointer?) -> Void
  typealias GlobalQueue = @convention(c) (Int, UInt) -> OpaquePointer?
  typealias Time = @convention(c) (UInt64, Int64) -> UInt64
  typealias Label = @convention(c) (OpaquePointer?) -> UnsafePointer<CChar>?
  typealias Work = @convention(c) (UnsafeMutableRawPointer?) -> Void
  typealias QueueWork = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Work) -> Void
  typealias TimeQueueWork = @convention(c) (UInt64, OpaquePointer?, UnsafeMutableRawPointer?, Work) -> Void

  // Each cast where its type is known: a C function pointer passed through a generic
  // parameter is not one any more.
  static let async = next("dispatch_async").map { unsafeBitCast($0, to: QueueBlock.self) }
  static let barrierAsync = next("dispatch_barrier_async").map { unsafeBitCast($0, to: QueueBlock.self) }
  static let sync = next("dispatch_sync").map { unsafeBitCast($0, to: QueueBlock.self) }
  static let barrierSync = next("dispatch_barrier_sync").map { unsafeBitCast($0, to: QueueBlock.self) }
  static let after = next("dispatch_after").map { unsafeBitCast($0, to: TimeQueueBlock.self) }
  static let groupAsync = next("dispatch_group_async").map { unsafeBitCast($0, to: GroupQueueBlock.self) }
  static let groupEnter = next("dispatch_group_enter").map { unsafeBitCast($0, to: GroupCall.self) }
  static let groupLeave = next("dispatch_group_leave").map { unsafeBitCast($0, to: GroupCall.self) }
  static let retain = next("dispatch_retain").map { unsafeBitCast($0, to: GroupCall.self) }
  static let release = next("dispatch_release").map { unsafeBitCast($0, to: GroupCall.self) }
  static let time = next("dispatch_time").map { unsafeBitCast($0, to: Time.self) }
  static let asyncFunction = next("dispatch_async_f").map { unsafeBitCast($0, to: QueueWork.self) }
  static let barrierAsyncFunction = next("dispatch_barrier_async_f").map { unsafeBitCast($0, to: QueueWork.self) }
  static let syncFunction = next("dispatch_sync_f").map { unsafeBitCast($0, to: QueueWork.self) }
  static let barrierSyncFunction = next("dispatch_barrier_sync_f").map { unsafeBitCast($0, to: QueueWork.self) }
  static let afterFunction = next("dispatch_after_f").map { unsafeBitCast($0, to: TimeQueueWork.self) }
  private static let queueLabel = next("dispatch_queue_get_label").map { unsafeBitCast($0, to: Label.self) }
  /// The main queue's address.
  static let mainQueue = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "_dispatch_main_q").map { UInt(bitPattern: $0) } ?? 0
  /// The global queues' addresses, of every quality of service and priority.
  static let globalQueues: Set<UInt> = {
    guard let get = next("dispatch_get_global_queue").map({ unsafeBitCast($0, to: GlobalQueue.self) }) else { return [] }
    return Set([0x21, 0x19, 0x15, 0x11, 0x09, 2, 0, -2, Int(Int16.min)].compactMap { get($0, 0) }.map { UInt(bitPattern: $0) })
  }()

  /// The address of the function `name` of the library loaded after this one (libdispatch's).
  private static func next(_ name: String) -> UnsafeMutableRawPointer? {
    dlsym(UnsafeMutableRawPointer(bitPattern: -1), name)
  }

  /// `a queue's label`, as Dispatch gives it, or its address.
  static func label(of queue: UInt) -> String {
    guard let label = queueLabel?(OpaquePointer(bitPattern: queue)).map({ String(cString: $0) }), !label.isEmpty else {
      return "queue 0x\(String(queue, radix: 16))"
    }
    return label
  }

  /// The nanoseconds from now until `when` (a `dispatch_time_t` of the uptime clock); `nil`
  /// for a time of another clock, or forever.
  static func delay(until when: UInt64) -> Int64? {
    guard when >> 62 == 0, let now = time?(0, 0) else { return nil }
    return when > now ? Int64(when - now) : 0
  }

  /// Runs `body` on the main queue, past the schedule: the explorer's own use of Dispatch.
  static func onMain(_ body: @escaping @Sendable () -> Void) {
    final class Body {
      let run: @Sendable () -> Void
      init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
    asyncFunction?(OpaquePointer(bitPattern: mainQueue), Unmanaged.passRetained(Body(body)).toOpaque()) { context in
      Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
    }
  }
}

/// `dispatch_async`, as this process calls it: a block a test sends is the schedule's to run.
/// (A block is taken by its address: the library never makes a Swift closure of it.)
@_cdecl("dispatch_async")
public func asyncHarnessDispatchAsync(_ queue: OpaquePointer?, _ block: UnsafeRawPointer) {
  if BundleExplorer.scheduler?.submit(SentBlock(queue: queue, block: block)) != true { RealDispatch.async?(queue, block) }
}

/// `dispatch_barrier_async`, as this process calls it.
@_cdecl("dispatch_barrier_async")
public func asyncHarnessDispatchBarrierAsync(_ queue: OpaquePointer?, _ block: UnsafeRawPointer) {
  if BundleExplorer.scheduler?.submit(SentBlock(queue: queue, block: block, barrier: true)) != true {
    RealDispatch.barrierAsync?(queue, block)
  }
}

/// `dispatch_group_async`, as this process calls it: the group is entered as the block is sent.
@_cdecl("dispatch_group_async")
public func asyncHarnessDispatchGroupAsync(_ group: OpaquePointer?, _ queue: OpaquePointer?, _ block: UnsafeRawPointer) {
  if BundleExplorer.scheduler?.submit(SentBlock(queue: queue, block: block, group: group)) != true {
    RealDispatch.groupAsync?(group, queue, block)
  }
}

/// `dispatch_after`, as this process calls it: a block due later is a sleeper of the schedule.
@_cdecl("dispatch_after")
public func asyncHarnessDispatchAfter(_ when: UInt64, _ queue: OpaquePointer?, _ block: UnsafeRawPointer) {
  guard let scheduler = BundleExplorer.scheduler, let delay = RealDispatch.delay(until: when),
    scheduler.submit(SentBlock(queue: queue, block: block), delay: delay)
  else { return RealDispatch.after?(when, queue, block) ?? () }
}

/// `dispatch_sync`, as this process calls it: the blocks sent to the queue before run first.
@_cdecl("dispatch_sync")
public func asyncHarnessDispatchSync(_ queue: OpaquePointer?, _ block: UnsafeRawPointer) {
  BundleExplorer.scheduler?.drainBlocks(sentTo: UInt(bitPattern: queue))
  RealDispatch.sync?(queue, block)
}

/// `dispatch_barrier_sync`, as this process calls it.
@_cdecl("dispatch_barrier_sync")
public func asyncHarnessDispatchBarrierSync(_ queue: OpaquePointer?, _ block: UnsafeRawPointer) {
  BundleExplorer.scheduler?.drainBlocks(sentTo: UInt(bitPattern: queue))
  RealDispatch.barrierSync?(queue, block)
}

/// Whether something outside the schedule can still resume a test whose schedule has nothing
/// to run (the rule, docs in FindingOrderingBugs.md): a thread of the process other than the
/// schedule's own and the main thread (whose being free is asked apart) that runs, or waits
/// in a system call that ends by itself or by something outside the process (I/O, a sleep, a
/// wait with a timeout, a child process), or waits for events (`epoll`, `poll`) while a timer
/// is armed to go off within the hour or a socket is open. A thread that waits only for another thread (a futex wait
/// with no timeout, an idle Dispatch worker waiting for work, a wait for a signal) cannot:
/// when every thread is so, nothing can resume the test, and it is stuck. Read from
/// `/proc/self`: each thread's state and the system call it waits in, and each timer's due time.
enum OutsideWork {
  /// How a thread waits.
  private enum Wait {
    /// It runs, or waits for something that ends by itself or comes from outside.
    case endsByItself
    /// It waits for events of its file descriptors, with no timeout.
    case forEvents
    /// It waits for another thread of the process.
    case forAnotherThread
  }

  /// The kernel's ID of the calling thread.
  static func currentThread() -> Int32 {
    Int32(readSmallFile("/proc/thread-self/stat").split(separator: " ").first ?? "") ?? getpid()
  }

  /// Whether a thread other than `own` can still resume the test.
  static func canResume(besides own: Set<Int32>) -> Bool {
    var waitsForEvents = false
    for thread in threads() where !own.contains(thread) {
      switch wait(of: thread) {
      case .endsByItself: return true
      case .forEvents: waitsForEvents = true
      case .forAnotherThread: continue
      }
    }
    return waitsForEvents && timerArmedOrSocketOpen()
  }

  /// The kernel's IDs of the process's threads.
  private static func threads() -> [Int32] {
    directoryEntries("/proc/self/task").compactMap { Int32($0) }
  }

  /// How `thread` waits, from its state and its system call (`/proc/self/task/N/syscall`: the
  /// call's number and its arguments, in hexadecimal).
  private static func wait(of thread: Int32) -> Wait {
    let stat = readSmallFile("/proc/self/task/\(thread)/stat")
    // The state follows the command, which is in parentheses and may hold spaces.
    guard let state = stat.split(separator: ")").last?.split(separator: " ").first else { return .forAnotherThread }
    if state == "R" || state == "D" { return .endsByItself }
    let call = readSmallFile("/proc/self/task/\(thread)/syscall").split(separator: " ")
    guard let number = call.first.flatMap({ Int($0) }) else { return call.first == "running" ? .endsByItself : .forAnotherThread }
    let arguments = call.dropFirst().map { UInt64($0.dropFirst(2), radix: 16) ?? 0 }
    func argument(_ index: Int) -> UInt64 { index < arguments.count ? arguments[index] : 0 }
    let command = readSmallFile("/proc/self/task/\(thread)/comm")
    switch number {
    case Calls.futex:
      // A wait with no timeout waits for another thread; an idle Dispatch worker waits for
      // work (with a timeout, after which it ends) that only another thread can send.
      let operation = argument(1) & 0x7F
      guard [0, 6, 9, 11, 13].contains(operation) else { return .endsByItself }
      return argument(3) == 0 || command.contains("qos") ? .forAnotherThread : .endsByItself
    case Calls.epollWait, Calls.epollPwait, Calls.poll:
      return Int32(truncatingIfNeeded: argument(Calls.poll == number ? 2 : 3)) < 0 ? .forEvents : .endsByItself
    case Calls.epollPwait2, Calls.ppoll:
      return argument(number == Calls.ppoll ? 2 : 3) == 0 ? .forEvents : .endsByItself
    case Calls.pselect, Calls.select:
      return argument(4) == 0 ? .forEvents : .endsByItself
    case Calls.sigsuspend, Calls.pause:
      return .forAnotherThread
    default:
      return .endsByItself
    }
  }

  /// Whether a timer (`timerfd`) of the process is armed or a socket is open: what can end a
  /// wait for events from outside.
  private static func timerArmedOrSocketOpen() -> Bool {
    var target = [CChar](repeating: 0, count: 256)
    for name in directoryEntries("/proc/self/fd") where Int(name) != nil {
      let count = readlink("/proc/self/fd/\(name)", &target, target.count - 1)
      guard count > 0 else { continue }
      let link = String(decoding: target[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
      if link.hasPrefix("socket:") { return true }
      if link == "anon_inode:[timerfd]", let seconds = secondsLeft(onTimer: readSmallFile("/proc/self/fdinfo/\(name)")),
        seconds < timerHorizon {
        return true
      }
    }
    return false
  }

  /// How far away a timer may be due and still count as one that can end a wait: a timer armed
  /// further off (a run loop's or Dispatch's "never", 30 days ahead) resumes no test.
  private static let timerHorizon: UInt64 = 3600

  /// The whole seconds until a `timerfd` is due, from its `fdinfo` (`it_value: (SECONDS,
  /// NANOSECONDS)`); `nil` when it is not armed.
  private static func secondsLeft(onTimer info: String) -> UInt64? {
    guard let start = info.firstRange(of: "it_value: (") else { return nil }
    let value = info[start.upperBound...].prefix { $0 != ")" }.split(separator: ",")
    guard value.count == 2, let seconds = UInt64(value[0].filter { $0 != " " }),
      let nanoseconds = UInt64(value[1].filter { $0 != " " }), seconds > 0 || nanoseconds > 0
    else { return nil }
    return seconds
  }

  /// The system calls' numbers on this machine.
  private enum Calls {
    #if arch(x86_64)
    static let futex = 202, epollWait = 232, epollPwait = 281, epollPwait2 = 441, poll = 7, ppoll = 271
    static let select = 23, pselect = 270, sigsuspend = 130, pause = 34
    #else
    static let futex = 98, epollWait = -1, epollPwait = 22, epollPwait2 = 441, poll = -1, ppoll = 73
    static let select = -1, pselect = 72, sigsuspend = 133, pause = -1
    #endif
  }
}

/// The runtime's hooks a test installs to run Swift concurrency its own way
/// (`swift_task_enqueueGlobal_hook`, as `withMainSerialExecutor` of swift-concurrency-extras
/// does): a test that installed one asks for its own order, which the schedule then leaves it.
enum ExecutorHooks {
  private static let names: [String] = ["swift_task_enqueueGlobal_hook", "swift_task_enqueueGlobalWithDelay_hook",
                                         "swift_task_enqueueGlobalWithDeadline_hook", "swift_task_enqueueMainExecutor_hook"]
  /// The addresses of the hooks' variables.
  private static let hooks: [UInt] = names.compactMap { name in
    dlsym(UnsafeMutableRawPointer(bitPattern: 0), name).map { UInt(bitPattern: $0) }
  }

  /// Whether one of the hooks is installed now.
  static var installed: Bool {
    hooks.contains { UnsafeRawPointer(bitPattern: $0)?.load(as: UnsafeRawPointer?.self) != nil }
  }
}

/// A mark a thread sets on itself.
private final class ThreadMark: Sendable {
  private let key: pthread_key_t

  init() {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    self.key = key
  }

  var isSet: Bool { pthread_getspecific(key) != nil }
  func set() { pthread_setspecific(key, UnsafeRawPointer(bitPattern: 1)) }
  func clear() { pthread_setspecific(key, nil) }
}

/// A detached thread running a closure.
private enum ExplorerThread {
  private final class Body {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
  }

  static func start(_ run: @escaping @Sendable () -> Void) {
    var thread = pthread_t()
    let body = Unmanaged.passRetained(Body(run)).toOpaque()
    pthread_create(&thread, nil, { raw in
      Unmanaged<Body>.fromOpaque(raw!).takeRetainedValue().run()
      return nil
    }, body)
    pthread_detach(thread)
  }
}

/// The executors the runtime uses once the schedule is installed.
private struct ExplorerExecutors: ExecutorFactory {
  static let main = ExplorerMainExecutor()
  static let task = ExplorerTaskExecutor()
  static var mainExecutor: any MainExecutor { main }
  static var defaultExecutor: any TaskExecutor { task }
}

/// The default executor: every job and sleep goes to the schedule.
private final class ExplorerTaskExecutor: TaskExecutor, SchedulingExecutor {
  private let platform = PlatformExecutorFactory.defaultExecutor

  func enqueue(_ job: consuming ExecutorJob) {
    let task = ExplorerScheduler.task(of: job)
    BundleExplorer.scheduler?.submit(UnownedJob(job), task: task, onMainThread: false)
  }

  func enqueue<C: Clock>(_ job: consuming ExecutorJob, at instant: C.Instant, tolerance: C.Duration?, clock: C) {
    guard let delay = ExplorerScheduler.delay(until: instant, of: clock) else {
      // Another clock's sleep stays on real time, in the platform's executor.
      if let scheduling = platform as? any SchedulingExecutor {
        return scheduling.enqueue(job, at: instant, tolerance: tolerance, clock: clock)
      }
      return platform.enqueue(job)
    }
    let task = ExplorerScheduler.task(of: job)
    BundleExplorer.scheduler?.submit(UnownedJob(job), task: task, onMainThread: false, delay: delay)
  }

  func enqueue<C: Clock>(_ job: consuming ExecutorJob, after delay: C.Duration, tolerance: C.Duration?, clock: C) {
    enqueue(job, at: clock.now.advanced(by: delay), tolerance: tolerance, clock: clock)
  }
}

/// The main executor: the platform's run loop, with `@MainActor` jobs going to the schedule,
/// which runs each on the main thread.
private final class ExplorerMainExecutor: MainExecutor {
  private let platform = PlatformExecutorFactory.mainExecutor

  func run() throws { try platform.run() }
  func stop() { platform.stop() }
  var isMainExecutor: Bool { true }
  func checkIsolated() { platform.checkIsolated() }

  func enqueue(_ job: consuming ExecutorJob) {
    let task = ExplorerScheduler.task(of: job)
    BundleExplorer.scheduler?.submit(UnownedJob(job), task: task, onMainThread: true)
  }
}
#else
enum BundleExplorer {
  nonisolated(unsafe) static var send: (@Sendable (String) -> Void)?
  static func record() -> String? { nil }
  static func testStarted() {}
}
#endif
