import CoreFoundation
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Finds what a test left running in its worker process when it returned, as cargo-nextest
/// finds leaky tests: tasks that hold every thread of Swift's cooperative pool (the next
/// `async` test could not start), threads it started that still run, and child processes
/// it did not wait for. Each finding becomes a `leaked` issue of the test, a warning; a held
/// pool or a running thread also retires the worker, so the next test starts clean.
///
/// The check costs about a microsecond when nothing leaked: the pool is probed by a
/// ``PoolCanary`` sent as the test's code ends (none after a test that sent the pool no
/// job), threads are counted by the link count of
/// `/proc/self/task`, children by one `waitid` that reaps nothing. Only a change costs more: new threads are
/// sampled for 20 ms, and a canary that has not run is waited for up to half a second.
struct LeakCheck {
  /// How long the canary may take before the pool counts as held by leaked work.
  static let poolPatience: Duration = .milliseconds(500)
  /// How long new threads are watched for the CPU they use.
  static let threadSample: Duration = .milliseconds(20)

  /// `/proc/self/task`, open, where the platform has it.
  private let taskDirectory: Int32
  /// The threads known not to be a test's: those of the process before its tests, the
  /// runtime's pool threads, and threads already reported or found idle.
  private var knownThreads: Set<Int32>
  /// The child processes already reported.
  private var knownChildren: Set<Int32> = []
  /// Whether the jobs sent to Swift's cooperative pool are counted, so that a test that sent
  /// none needs no canary.
  let countsPoolJobs = ConcurrencyCapture.countPoolJobs()

  /// Starts watching this process: descendants a test orphans become its children (Linux),
  /// and its threads now are known.
  init() {
    #if os(Linux)
    Self.becomeSubreaper()
    taskDirectory = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    #else
    taskDirectory = -1
    #endif
    knownThreads = []
    knownThreads = Set(threadIDs())
  }

  #if os(Linux)
  /// Makes this process the one that descendants orphaned by a test are reparented to
  /// (`prctl(PR_SET_CHILD_SUBREAPER, 1)`), so that they stay its children and are found. C's
  /// `prctl` takes variable arguments, which Swift cannot call, so it is called through its
  /// address with the five integer arguments the kernel reads.
  private static func becomeSubreaper() {
    typealias Prctl = @convention(c) (Int32, UInt, UInt, UInt, UInt) -> Int32
    guard let address = dlsym(nil, "prctl") else { return }
    let setChildSubreaper: Int32 = 36  // PR_SET_CHILD_SUBREAPER
    _ = unsafeBitCast(address, to: Prctl.self)(setChildSubreaper, 1, 0, 0, 0)
  }
  #endif

  /// What the test left running, each as the message of a `leaked` issue, and whether the
  /// worker must be retired for it.
  mutating func findings(canary: PoolCanary) -> (messages: [String], retire: Bool) {
    var messages: [String] = []
    var retire = false
    let held = canary.heldPools(within: Self.poolPatience)
    if !held.isEmpty {
      retire = true
      // The body's pool reads as before; another names its priority.
      let pool = held == [PoolPriority.high.name] ? "Swift's cooperative pool"
        : "Swift's cooperative pool at priority " + held.joined(separator: " and ")
      messages.append("Leaked work: the test returned while tasks it started hold every thread of \(pool) (a job sent "
        + "to the pool did not run within \(Self.poolPatience.secondsDescription) seconds), so the next async test "
        + "could not start" + Self.retired)
    }
    // After the canaries ran: a pool thread that ran a job has its name.
    let threads = runningNewThreads()
    if !threads.isEmpty {
      retire = true
      messages.append("Leaked work: the test returned while threads it started are still running ("
        + threads.joined(separator: ", ") + ")" + Self.retired)
    }
    let children = newChildren()
    if !children.isEmpty {
      messages.append("Leaked work: the test returned while child processes it started are still running ("
        + children.joined(separator: ", ") + "); they go on, and may hold the test's output open")
    }
    return (messages, retire)
  }

  private static let retired = "; the worker process is retired, so the next test runs in a fresh one"

  // MARK: Threads

  /// The threads of this process now, by ID; none where `/proc` is missing.
  private func threadIDs() -> [Int32] {
    taskDirectory >= 0 ? ProcessChildren.threads() : []
  }

  /// How many threads this process has: `/proc/self/task` links `.`, `..` and one
  /// directory a thread.
  private var threadCount: Int {
    var status = stat()
    guard taskDirectory >= 0, fstat(taskDirectory, &status) == 0 else { return knownThreads.count }
    return Int(status.st_nlink) - 2
  }

  /// New threads that ran while watched, named; every new thread becomes known (an idle one
  /// is the runtime's, or harmless). A thread ran when it used a quarter of the time watched,
  /// or used some and is still runnable: on a loaded machine a spinning thread waits its turn
  /// for most of the time, but never sleeps.
  private mutating func runningNewThreads() -> [String] {
    guard threadCount != knownThreads.count else { return [] }
    let current = Set(threadIDs())
    let new = current.subtracting(knownThreads).filter { !Self.isPoolThread($0) }.sorted()
    knownThreads = current
    guard !new.isEmpty else { return [] }
    let before = new.map(Self.cpuTime)
    Thread.sleep(forTimeInterval: Self.threadSample.timeInterval)
    let after = new.map(Self.cpuTime)
    let busy = Self.threadSample.nanoseconds / 4
    func ran(_ index: Int) -> Bool {
      let used = after[index] - before[index]
      return used >= busy || (used > 0 && Self.isRunnable(new[index]))
    }
    // A pool thread gets its name once it starts: one that was still unnamed is named now.
    return new.indices.filter { ran($0) && !Self.isPoolThread(new[$0]) }.map { "thread \(new[$0])" }
  }

  /// Whether a thread of this process is running or waiting for a processor (state `R` in
  /// `/proc/self/task/ID/stat`), not sleeping or ended.
  static func isRunnable(_ id: Int32) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/self/task/\(id)/stat", encoding: .utf8),
          let nameEnd = stat.lastIndex(of: ")") else { return false }
    // `ID (NAME) STATE …`: the name may hold spaces and parentheses; the state follows its last `)`.
    return stat[stat.index(after: nameEnd)...].split(separator: " ").first == "R"
  }

  /// Whether a thread is one of the runtime's pools (Dispatch's, which Swift's cooperative
  /// pool is on Linux): their names end in the queue's quality of service.
  private static func isPoolThread(_ id: Int32) -> Bool {
    let name = (try? String(contentsOfFile: "/proc/self/task/\(id)/comm", encoding: .utf8)) ?? ""
    return name.contains("qos")
  }

  /// The CPU time a thread of this process has used, in nanoseconds (0 once it ended).
  private static func cpuTime(_ id: Int32) -> Int {
    #if os(Linux)
    // The kernel's clock of one thread: MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED).
    let clock = clockid_t((~id) &<< 3 | 6)
    var time = timespec()
    guard clock_gettime(clock, &time) == 0 else { return 0 }
    return time.tv_sec * 1_000_000_000 + time.tv_nsec
    #else
    return 0
    #endif
  }

  // MARK: Children

  /// Child processes still running that were not reported yet, as `PID (command)`. Nothing
  /// is reaped: a child's status stays for whoever waits for it.
  private mutating func newChildren() -> [String] {
    var info = siginfo_t()
    // Fails with ECHILD when this process has no child at all: the usual case, one call.
    guard waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == 0 else { return [] }
    let children = Set(ProcessChildren.running(threads: threadIDs())).subtracting(knownChildren).sorted()
    knownChildren.formUnion(children)
    return children.map(ProcessChildren.described)
  }
}

/// A job sent to Swift's cooperative pool as a test's code ends, at the priority the harness
/// runs `async` test bodies at, and one at each other priority the test sent jobs to (on
/// Linux each priority has a pool of threads of its own): when one has not run a while later,
/// every thread of that pool is held by work the test left behind, and the next `async` test
/// (or the next of its priority) could not start. Sent from the end of the test's `async`
/// body, the first canary runs on the body's own thread as it frees up, so a clean test waits
/// for nothing; a test that sent no job at another priority (most) sends no other canary.
final class PoolCanary: Sendable {
  private let sent = Atomic(0)
  private let ran = DispatchSemaphore(value: 0)
  /// How many jobs had reached the pool when the test started, when they are counted.
  private let poolJobsAtStart: UInt64?

  /// Makes the canary of a test about to start.
  /// - Parameter countingPoolJobs: whether the pool's jobs are counted
  ///   (``ConcurrencyCapture/poolJobs``): a test that sent none then needs no canary.
  init(countingPoolJobs: Bool) {
    poolJobsAtStart = countingPoolJobs ? ConcurrencyCapture.poolJobs.load(ordering: .relaxed) : nil
  }

  /// The priority of the tasks the harness runs `async` bodies in (made on the main thread).
  private static let bodyPriority = PoolPriority.high

  /// Sends the canary; again after more of the test's code ran, until checked.
  func send() {
    send(at: Self.bodyPriority)
  }

  private func send(at priority: PoolPriority) {
    sent.add(1, ordering: .relaxed)
    Task.detached(priority: priority.taskPriority) { [ran] in ran.signal() }
  }

  /// The priorities of the pools held by the test's leftovers: those whose canary did not
  /// run within `patience`, by name; empty when every canary ran. When the test had no
  /// `async` code to send one from, one is sent now, unless the test sent the pool no job at
  /// all: then the pool is as it was before the test. A canary is sent now at each other
  /// priority the test sent jobs to.
  func heldPools(within patience: Duration) -> [String] {
    let others: [PoolPriority]
    if let start = poolJobsAtStart {
      let sentTo = PoolPriority.sentJobs(between: start, and: ConcurrencyCapture.poolJobs.load(ordering: .relaxed))
      if sent.load(ordering: .relaxed) == 0 && sentTo.isEmpty { return [] }
      others = sentTo.filter { $0 != Self.bodyPriority }
    } else {
      others = []
    }
    if sent.load(ordering: .relaxed) == 0 { send() }
    var held = ran(within: patience) ? [] : [Self.bodyPriority.name]
    // Each other pool's canary is awaited on its own, so that a held pool names itself.
    for priority in others {
      let canary = PoolCanary(countingPoolJobs: false)
      canary.send(at: priority)
      if !canary.ran(within: patience) { held.append(priority.name) }
    }
    return held
  }

  /// Whether every canary sent ran within `patience`.
  private func ran(within patience: Duration) -> Bool {
    let deadline = DispatchTime.now() + .nanoseconds(patience.nanoseconds)
    for _ in 0..<sent.load(ordering: .relaxed) where ran.wait(timeout: deadline) == .timedOut { return false }
    return true
  }
}
