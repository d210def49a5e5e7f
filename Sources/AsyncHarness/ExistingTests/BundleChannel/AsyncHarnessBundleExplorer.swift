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
// this library from the very file the core's module AsyncHarnessShared is built from
// (Sources/AsyncHarness/Shared/SchedulePicking.swift).
//
// Dispatch is under the schedule too: the blocks the schedule's work sends (`dispatch_async`,
// `dispatch_barrier_async`, `dispatch_group_async`, `dispatch_after`, `dispatch_group_notify`,
// which this library interposes) are jobs of it, a serial queue's (and those of the queues
// that target it) in the order sent, a concurrent queue's in any order between its barriers, a
// notify block once its group is empty, each run on its queue by Dispatch while the schedule
// waits for it; `dispatch_sync` runs the blocks held for its queue's order first. What the main
// thread sends for later (XCTest's waiter's timeout) is a sleeper of the schedule too. Sleeps
// and `dispatch_after` take the real time they say.
//
// A job sent from a thread the schedule does not run (a thread of the test's own, the testing
// library's main thread) while the schedule's own work runs or waits is work outside
// its control: counted, and reported with the steps taken at each test's end
// (a `schedule` record), so the harness never claims an order it did not control. A test
// whose Swift concurrency work has nothing left to run, no sleeper due and no job arriving for
// a quiet period (the scheduled strategy's, 200 ms unless the harness says otherwise), while
// the main thread is free (not running a synchronous test body), is stuck (a continuation
// never resumed, a lost wake-up): that is reported at once (a `stuck` record), and the harness
// ends the test there. A job that keeps the schedule's thread for a long step (a quarter of the
// quiet period) while other work would run beside it on real threads either blocks on that
// work (a semaphore, a synchronous wait: it would hold the test until its time limit) or works
// on without it (a loop on the clock, waiting for it to be done): the schedule then hands every
// job to Swift's own executors and Dispatch, from that step on, and says so in its record
// (`escapedAt`), as the scheduled strategy gives a test's jobs back when one blocks its driver. Under `--trace`, each step a test's schedule takes is
// said as it is taken (a `step` record), up to the harness's limit of steps a test. Every
// record is a ``ChannelRecord`` (Shared/ChannelRecord.swift), sent by the channel's half.
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
  nonisolated(unsafe) static var send: (@Sendable (ChannelRecord) -> Void)?
  /// How long a schedule with nothing to run waits for work from outside before it reports
  /// the running test stuck, in seconds.
  nonisolated(unsafe) static var quietPeriod = 0.2
  /// How long a job may keep the schedule's thread while other work waits, in seconds: a
  /// quarter of the quiet period (keep in step with ``BundleChannelLibrary``'s `longStep`).
  static var longStep: Double { quietPeriod / 4 }
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
  static func record() -> ChannelRecord? {
    scheduler?.record()
  }

  /// A test began, on the main thread (an XCTest test) or not: from here its work having
  /// nothing to run is its being stuck.
  static func testStarted(holdingTheMainThread: Bool) {
    scheduler?.testStarted(holdingTheMainThread: holdingTheMainThread)
  }
}

/// Runs the bundle's jobs one at a time on a thread of its own (a `@MainActor` job on the
/// main thread, while that thread waits), each chosen by the picker among the queues with a
/// job ready; when none is ready, virtual time moves to the earliest sleeper's due time, once
/// the real time it said passed.
final class ExplorerScheduler: Sendable {
  /// What a step runs: a Swift concurrency job, or a block a test sent to Dispatch.
  enum Work {
    case swift(UnownedJob)
    case dispatch(SentBlock)
  }

  struct Job {
    let work: Work
    let onMainThread: Bool
    let queue: Int
    /// What the trace calls the job's queue: `task #3`, `an actor's job`.
    let label: String
  }

  // Its state: ``State`` (AsyncHarnessBundleScheduleState.swift).

  let state: Mutex<State>
  let wake = DispatchSemaphore(value: 0)
  /// The kernel's ID of the scheduler's thread, once it started.
  private let schedulerThread = Atomic<Int32>(0)
  /// Set on the scheduler's thread, and on the main thread while it runs a scheduled job:
  /// what those send is the schedule's own work.
  static let ownThread = ThreadMark()
  /// The kernel's IDs of the schedule's own threads (the scheduler's and its watch's), and of
  /// the main thread, whose being free is asked directly: none of them is outside work.
  static let ownThreads = Mutex<Set<Int32>>([getpid()])

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
      state.swiftJobs += 1
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

  /// Every tenth of a long step: when the job running has kept the schedule's thread for a long
  /// step (``BundleExplorer/longStep``) while other work would run beside it on real threads
  /// (ready, asleep past its real due time, or a notify block whose group is empty), it blocks
  /// on that work or works on without it (a loop on the clock waiting for it), and every job
  /// goes to Swift's own executors and Dispatch from then on. A job that only waited for a
  /// processor (a loaded machine: its thread runnable, having run for less than half the step),
  /// for a page, or for a lock its holder keeps while it waits for a processor (asleep for less
  /// than a long step), has not kept the thread yet. A job sent to the main queue is watched on
  /// the thread that runs it once it began: under `dispatchMain()` (Swift Testing's `async`
  /// entry point on Linux) the main thread is parked for good, asleep, and one of Dispatch's
  /// threads drains the queue.
  private func watch() {
    Self.ownThreads.withLock { _ = $0.insert(OutsideWork.currentThread()) }
    var running = (step: -1, thread: Int32(0), since: ContinuousClock.now, processorTime: Duration.zero,
                   asleepSince: ContinuousClock.Instant?.none)
    while true {
      usleep(UInt32(BundleExplorer.longStep * 100_000))
      let now = ContinuousClock.now
      let (step, thread) = state.withLock { ($0.running ? $0.steps : -1, $0.runningThread) }
      guard step >= 0, thread != 0, step == running.step, thread == running.thread else {
        // The thread's clock is read only as a step begins on it, not while none runs: a job
        // sent to the main queue keeps nothing until it began.
        running = (step, thread, now, step >= 0 && thread != 0 ? OutsideWork.cpuTime(of: thread) ?? .zero : .zero, nil)
        continue
      }
      guard running.since.duration(to: now) >= .seconds(BundleExplorer.longStep) else { continue }
      running.asleepSince = OutsideWork.sleepsInASystemCall(thread) ? running.asleepSince ?? now : nil
      let used = OutsideWork.cpuTime(of: thread).map { $0 - running.processorTime } ?? .seconds(BundleExplorer.longStep)
      let asleep = running.asleepSince.map { $0.duration(to: now) } ?? .zero
      guard used >= .seconds(BundleExplorer.longStep / 2) || asleep >= .seconds(BundleExplorer.longStep) else { continue }
      let handedOver = state.withLock { state -> [(job: Job, delay: Int64?)]? in
        guard state.running, state.steps == running.step, state.escapedAt == nil,
          !state.ready.isEmpty || state.sleepers.contains(where: { $0.realDue <= now }) || state.noticeDue
        else { return nil }
        return state.escape()
      }
      guard let handedOver else { continue }
      for pending in handedOver { Self.handOver(pending.job, delay: pending.delay) }
      return
    }
  }

  /// A test began.
  func testStarted(holdingTheMainThread: Bool) {
    // A test's end waits for the threads it starts (AsyncHarnessBundleWorkLeft.swift).
    let threads = Set(OutsideWork.threads())
    state.withLock { state in
      state.threadsAtTestStart = threads
      state.queuesAtTestStart = state.queueCount
      state.testHoldsTheMainThread = holdingTheMainThread
      state.jobsAtTestStart = state.jobs
      state.swiftJobsAtTestStart = state.swiftJobs
      state.stepsAtTestStart = state.steps
      state.stuckReported = false
    }
  }

  /// The `schedule` record of the steps taken so far, sent as a test ends (none runs after).
  func record() -> ChannelRecord {
    state.withLock { state in
      state.jobsAtTestStart = nil
      state.stepsAtTestStart = nil
      return .schedule(steps: state.steps, hash: state.hash, jobs: state.jobs, outside: state.outside,
                       firstOutsideStep: state.firstOutsideStep, escapedAt: state.escapedAt, hookedAt: state.hookedAt)
    }
  }

  /// The next job to run, once one is ready, said as a step of the running test under `--trace`.
  private func next() -> Job {
    while true {
      endGraceOnceNothingIsLeft()
      let (job, said, sleepUntil) = state.withLock { state -> (Job?, ChannelRecord?, ContinuousClock.Instant?) in
        state.takeNotifiedBlocks()
        if state.runnable.isEmpty, let earliest = state.sleepers.map(\.due).min() {
          // The sleeps due first wake in the schedule's order, once the real time they said passed.
          let realDue = state.sleepers.filter { $0.due <= max(state.now, earliest) }.map(\.realDue).max()!
          if realDue > ContinuousClock.now {
            state.idle = true
            // Beyond the horizon, the test may be stuck meanwhile (``stuck()``), each quiet period.
            let due = state.sleeperDueWithinTheHorizon ? realDue : nil
            return (nil, nil, state.nextGraceLook.map { min($0, due ?? $0) } ?? due)
          }
          state.now = max(state.now, earliest)
          let due = state.sleepers.filter { $0.due <= state.now }.sorted { ($0.due, $0.order) < ($1.due, $1.order) }
          state.sleepers.removeAll { $0.due <= state.now }
          for sleeper in due { state.ready.append(sleeper.job) }
        }
        let runnable = state.runnable
        guard !runnable.isEmpty else {
          state.idle = true
          return (nil, nil, state.nextGraceLook)
        }
        state.awaitingOutside = false
        state.steps += 1
        let chosen = state.picker.choose(among: runnable, step: state.steps)
        for byte in withUnsafeBytes(of: UInt64(chosen).littleEndian, Array.init) {
          state.hash = (state.hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        state.running = true
        let job = state.ready.removeFirst(of: chosen)
        state.runningThread = job.onMainThread ? 0 : schedulerThread.load(ordering: .relaxed)
        guard let start = state.stepsAtTestStart, state.steps - start <= BundleExplorer.stepsSaid else { return (job, nil, nil) }
        return (job, .step(state.steps - start, ran: job.label, virtualTime: state.now), nil)
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

  /// A job sent to the main queue runs on `thread`, or ended there (0): the scheduler's
  /// thread, woken, marks its step over once it has a processor.
  private func runs(on thread: Int32) {
    state.withLock { $0.runningThread = thread }
  }

  private func run() {
    Self.ownThread.set()
    schedulerThread.store(OutsideWork.currentThread(), ordering: .relaxed)
    Self.ownThreads.withLock { _ = $0.insert(schedulerThread.load(ordering: .relaxed)) }
    DispatchCaller.prepare()
    let taskExecutor = ExplorerExecutors.task.asUnownedTaskExecutor()
    while true {
      let next = next()
      switch next.work {
      case .swift(let job) where next.onMainThread:
        let done = DispatchSemaphore(value: 0)
        RealDispatch.onMain {
          self.runs(on: OutsideWork.currentThread())
          Self.ownThread.whileSet {
            job.runSynchronously(isolatedTo: ExplorerExecutors.main.asUnownedSerialExecutor(), taskExecutor: taskExecutor)
          }
          self.runs(on: 0)
          done.signal()
        }
        done.wait()
      case .swift(let job):
        job.runSynchronously(on: taskExecutor)
      case .dispatch(let sent) where next.onMainThread:
        // On the main queue, by the main thread: what it sends meanwhile is the schedule's own work.
        let done = DispatchSemaphore(value: 0)
        sent.send(after: nil, starting: { self.runs(on: OutsideWork.currentThread()) }) {
          self.runs(on: 0)
          done.signal()
        }
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
}

#else
enum BundleExplorer {
  nonisolated(unsafe) static var send: (@Sendable (ChannelRecord) -> Void)?
  static func record() -> ChannelRecord? { nil }
  static func testStarted(holdingTheMainThread: Bool) {}
  static var exploring: Bool { false }
  static func awaitWorkLeft() {}
  static func testEnded() {}
}
#endif
