// The jobs a schedule can run next, in the library `harness test` preloads into a package's
// test bundle (see AsyncHarnessBundleExplorer.swift): kept by the schedule's queue, so that a
// step costs the same with one job waiting or a thousand.
#if os(Linux) && compiler(>=6.3)

/// The ready jobs, by the schedule's queue: each queue's in the order taken, the queues in the
/// order they became ready. Blocks of a concurrent Dispatch queue (each a queue of the
/// schedule's own) keep that queue's barriers: a barrier runs after the blocks sent before it
/// and before those sent after it.
struct ReadyJobs {
  private var jobs: [Int: [ExplorerScheduler.Job]] = [:]
  /// The queues with a job ready, in the order they became ready.
  private(set) var queues: [Int] = []
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
  var candidates: [Int] {
    guard !barriered.isEmpty else { return queues }
    return queues.filter { queue in
      guard let sent = jobs[queue]?.first?.sentBlock, let waiting = barriered[sent.queue],
        let index = waiting.firstIndex(where: { $0.queue == queue })
      else { return true }
      return sent.barrier ? index == 0 : !waiting[..<index].contains { $0.barrier }
    }
  }

  /// Takes the first job of `queue`, which has one.
  mutating func removeFirst(of queue: Int) -> ExplorerScheduler.Job {
    let job = jobs[queue]!.removeFirst()
    count -= 1
    if jobs[queue]!.isEmpty {
      jobs[queue] = nil
      queues.removeAll { $0 == queue }
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
    for queue in queues {
      while let sent = jobs[queue]?.first?.sentBlock, sent.orderedBy == address {
        taken.append(removeFirst(of: queue).sentBlock!)
      }
    }
    return taken
  }

  /// Takes every job, queue by queue.
  mutating func removeAll() -> [ExplorerScheduler.Job] {
    defer { self = ReadyJobs() }
    return queues.flatMap { jobs[$0] ?? [] }
  }
}
#endif
