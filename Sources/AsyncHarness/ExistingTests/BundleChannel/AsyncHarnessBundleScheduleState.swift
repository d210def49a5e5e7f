// A schedule's state, in the library `harness test` preloads into a package's test bundle (see
// AsyncHarnessBundleExplorer.swift): its jobs, ready (kept by the schedule's queue, so that a
// step costs the same with one job waiting or a thousand) or asleep, its virtual time and what
// it counted of the running test.
#if os(Linux) && compiler(>=6.3)
import Synchronization

extension ExplorerScheduler {
  struct State {
    var picker: SchedulePicking
    var ready = ReadyJobs()
    /// Jobs asleep: due at `due` on virtual time, in the order they slept, and not before
    /// `realDue` on the continuous clock (a sleep takes the real time it says).
    var sleepers: [(due: Int64, order: Int, realDue: ContinuousClock.Instant, job: Job)] = []
    var sleepersAdded = 0
    var queues: [UInt64: Int] = [:]
    /// The schedule's queue of each serial Dispatch queue (by its address), whose blocks run
    /// in the order sent.
    var dispatchQueues: [UInt: Int] = [:]
    /// The `notify` blocks sent to Dispatch whose group is not empty yet.
    var notices: [SentBlock] = []
    var queueCount = 0
    /// Virtual time, in nanoseconds since the schedule began.
    var now: Int64 = 0
    var running = false
    /// The kernel's ID of the thread running the job, 0 until it is known: the scheduler's, or
    /// for a job on the main thread the one that drains the main queue, once the job began
    /// there (the main thread, or under `dispatchMain()` on Linux, which parks the main thread,
    /// one of Dispatch's).
    var runningThread: Int32 = 0
    /// Whether the scheduler's thread sleeps until a job comes.
    var idle = false
    var steps = 0
    /// FNV-1a 64 of the queues the steps ran, as `ScheduleTrace` folds it.
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    var jobs = 0
    /// The Swift concurrency jobs taken (the rest of ``jobs`` are Dispatch blocks).
    var swiftJobs = 0
    var outside = 0
    var firstOutsideStep: Int?
    /// The jobs taken when the running test began (none runs: `nil`), the Swift concurrency
    /// jobs among them, and whether it was reported stuck.
    var jobsAtTestStart: Int?
    var swiftJobsAtTestStart = 0
    var stuckReported = false
    /// Whether the running test holds the main thread (an XCTest test: XCTest runs each on it).
    var testHoldsTheMainThread = false
    /// The steps taken when the running test began.
    var stepsAtTestStart: Int?
    /// The process's threads when the running test began: those it starts may still fail it
    /// after its body returned (``ExplorerScheduler/awaitWorkLeft()``).
    var threadsAtTestStart: Set<Int32> = []
    /// The schedule's queues when the running test began: those of its testing library's tasks.
    var queuesAtTestStart = 0
    /// Until when, after a Swift Testing test's end, the queues below ``parkedBelow`` (the tasks
    /// there as it began: its testing library's, which would end the run) wait while work the
    /// test left can still run (AsyncHarnessBundleWorkLeft.swift); `nil` outside such a grace.
    var graceDeadline: ContinuousClock.Instant?
    var parkedBelow = 0
    /// The step whose job kept the schedule's thread, after which every job went to Swift's
    /// own executors; `nil` while the schedule runs them.
    var escapedAt: Int?
    /// The step after which the test's own executor hook took its jobs, which then went to
    /// Swift's own executors unexplored.
    var hookedAt: Int?
    /// Whether the schedule, with nothing of its own to run, waits for work that something
    /// outside it can still do (``OutsideWork``): a job sent from outside then is counted so.
    var awaitingOutside = false

    /// The queues whose first job may run now: the ready ones (``ReadyJobs/candidates``), but
    /// for those parked during a grace.
    var runnable: ReadyOrder {
      let candidates = ready.candidates
      guard graceDeadline != nil else { return candidates }
      return ReadyOrder(candidates.filter { $0 >= parkedBelow })
    }

    /// When the schedule, with nothing to run during a grace, looks again whether work the test
    /// left can still run: every 2 ms (a thread may end, or sleep for good).
    var nextGraceLook: ContinuousClock.Instant? {
      graceDeadline.map { _ in ContinuousClock.now + .milliseconds(2) }
    }

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
      defer { notices = [] }
      // A notify block waiting for its group is sent to Dispatch's own notify.
      let noticesLeft = notices.map { (Job(work: .dispatch($0), onMainThread: false, queue: 0, label: ""), Int64?.none) }
      return ready.removeAll().map { ($0, nil) } + noticesLeft + removeSleepers { _ in true }
    }

    /// Takes the sleepers `isTaken` says, each with what is left of its sleep, in nanoseconds.
    mutating func removeSleepers(where isTaken: (Job) -> Bool) -> [(job: Job, delay: Int64?)] {
      let realNow = ContinuousClock.now
      let taken = sleepers.filter { isTaken($0.job) }.map { sleeper in
        let left = realNow.duration(to: sleeper.realDue)
        return (sleeper.job, Int64?.some(max(sleeper.due - now, left > .zero ? Int64(left.components.seconds) * 1_000_000_000
          + left.components.attoseconds / 1_000_000_000 : 0)))
      }
      if !taken.isEmpty { sleepers.removeAll { isTaken($0.job) } }
      return taken
    }

    /// Whether the main thread waits in XCTest's waiter (for an `async` test's body, its
    /// `async` `setUp` or `tearDown`, or an expectation): the waiter's timeout, a block the main
    /// thread sent for later from outside the schedule to the waiter's queue, sleeps in the
    /// schedule, not cancelled (XCTest cancels it as the wait ends).
    var mainThreadWaits: Bool {
      sleepers.contains { sleeper in
        guard let sent = sleeper.job.sentBlock, sent.sentByTheMainThread else { return false }
        return RealDispatch.label(of: sent.queue) == "org.swift.XCTest.XCTWaiter"
      }
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
}

/// The ready jobs, by the schedule's queue: each queue's in the order taken, the queues in the
/// order they became ready. Blocks of a concurrent Dispatch queue (each a queue of the
/// schedule's own) keep that queue's barriers: a barrier runs after the blocks sent before it
/// and before those sent after it.
struct ReadyJobs {
  private var jobs: [Int: [ExplorerScheduler.Job]] = [:]
  /// The queues with a job ready, in the order they became ready (Shared/ReadyOrder.swift:
  /// each step costs O(log n), with a hundred thousand child tasks ready as with one).
  private(set) var queues = ReadyOrder()
  /// Of each concurrent Dispatch queue with a barrier waiting, its blocks waiting (their
  /// schedule's queues), in the order sent, and whether each is a barrier.
  private var barriered: [UInt: [(queue: Int, barrier: Bool)]] = [:]
  private(set) var count = 0

  var isEmpty: Bool { count == 0 }

  mutating func append(_ job: ExplorerScheduler.Job) {
    if jobs[job.queue, default: []].isEmpty { queues.append(job.queue) }
    jobs[job.queue, default: []].append(job)
    count += 1
    guard let sent = job.sentBlock, sent.concurrent, sent.barrier || barriered[sent.queue] != nil else { return }
    barriered[sent.queue, default: []].append((job.queue, sent.barrier))
  }

  /// The queues whose first job may run now: any but a block of a concurrent queue sent after
  /// a barrier still waiting, or a barrier sent after blocks still waiting.
  var candidates: ReadyOrder {
    guard !barriered.isEmpty else { return queues }
    return ReadyOrder(queues.filter { queue in
      guard let sent = jobs[queue]?.first?.sentBlock, let waiting = barriered[sent.queue],
        let index = waiting.firstIndex(where: { $0.queue == queue })
      else { return true }
      return sent.barrier ? index == 0 : !waiting[..<index].contains { $0.barrier }
    })
  }

  /// Takes the first job of `queue`, which has one.
  mutating func removeFirst(of queue: Int) -> ExplorerScheduler.Job {
    let job = jobs[queue]!.removeFirst()
    count -= 1
    if jobs[queue]!.isEmpty {
      jobs[queue] = nil
      queues.remove(queue)
    }
    if let sent = job.sentBlock, var waiting = barriered[sent.queue] {
      waiting.removeAll { $0.queue == queue }
      barriered[sent.queue] = waiting.contains { $0.barrier } ? waiting : nil
    }
    return job
  }

  /// Takes the blocks that keep the order of the Dispatch queue at `address`, in the order sent.
  mutating func removeBlocks(orderedBy address: UInt) -> [SentBlock] {
    var taken: [SentBlock] = []
    for queue in Array(queues) {
      while let sent = jobs[queue]?.first?.sentBlock, sent.orderedBy == address {
        taken.append(removeFirst(of: queue).sentBlock!)
      }
    }
    return taken
  }

  /// Takes every job, queue by queue.
  mutating func removeAll() -> [ExplorerScheduler.Job] {
    defer { self = ReadyJobs() }
    return queues.removeAll().flatMap { jobs[$0] ?? [] }
  }
}
#endif
