// What can still resume a test whose schedule has nothing to run, in the library `harness
// test` preloads into a package's test bundle (see AsyncHarnessBundleExplorer.swift).
#if os(Linux) && compiler(>=6.3)
import Dispatch
import Glibc

/// Whether something outside the schedule can still resume a test whose schedule has nothing
/// to run (the rule, docs in FindingOrderingBugs.md): a thread of the process other than the
/// schedule's own and the main thread (whose being free is asked apart) that runs, or waits
/// in a system call that ends by itself or by something outside the process (I/O, a sleep, a
/// wait with a timeout, a child process), or waits for events (`epoll`, `poll`) while a timer
/// is armed to go off within the hour, a socket is open, or a child process can end (a
/// `pidfd` is open, or a child still runs: swift-subprocess waits for its child's exit so). A thread that waits only for another thread (a futex wait
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

  /// The processor time `thread` of this process used so far: its own clock, named as glibc's
  /// `pthread_getcpuclockid` names it (the kernel's `MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)`).
  static func cpuTime(of thread: Int32) -> Duration? {
    var time = timespec()
    guard clock_gettime(clockid_t(~thread << 3 | 6), &time) == 0 else { return nil }
    return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
  }

  /// Whether `thread` sleeps in a system call (`S`: a futex, a pipe, `poll`, `nanosleep`), rather
  /// than runs or waits for a processor (`R`) or for a device (`D`: a page fault or a disk read,
  /// which end by themselves).
  static func sleepsInASystemCall(_ thread: Int32) -> Bool {
    state(of: thread) == "S"
  }

  /// A thread's state as `/proc` says it: `R` (it runs, or is about to), `S` (it sleeps in a
  /// system call), `D` (it waits for a device) …
  private static func state(of thread: Int32) -> Substring? {
    let stat = readSmallFile("/proc/self/task/\(thread)/stat")
    // The state follows the command, which is in parentheses and may hold spaces.
    return stat.split(separator: ")").last?.split(separator: " ").first
  }

  /// Whether a thread other than `own` can still resume the test; with `orWaitsForEvents`
  /// false, only one that runs or waits for something that ends by itself (a thread serving
  /// events, as an event loop waits, is not counted).
  static func canResume(besides own: Set<Int32>, orWaitsForEvents: Bool = true) -> Bool {
    var waitsForEvents = false
    for thread in threads() where !own.contains(thread) {
      switch wait(of: thread) {
      case .endsByItself: return true
      case .forEvents: waitsForEvents = orWaitsForEvents
      case .forAnotherThread: continue
      }
    }
    return waitsForEvents && (timerArmedOrSocketOrProcessOpen() || childRunning())
  }

  /// The kernel's IDs of the process's threads.
  static func threads() -> [Int32] {
    directoryEntries("/proc/self/task").compactMap { Int32($0) }
  }

  /// How `thread` waits, from its state and its system call (`/proc/self/task/N/syscall`: the
  /// call's number and its arguments, in hexadecimal).
  private static func wait(of thread: Int32) -> Wait {
    guard let state = state(of: thread) else { return .forAnotherThread }
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

  /// Whether a timer (`timerfd`) of the process is armed, a socket is open or a process is
  /// watched (`pidfd`): what can end a wait for events from outside.
  private static func timerArmedOrSocketOrProcessOpen() -> Bool {
    var target = [CChar](repeating: 0, count: 256)
    for name in directoryEntries("/proc/self/fd") where Int(name) != nil {
      let count = readlink("/proc/self/fd/\(name)", &target, target.count - 1)
      guard count > 0 else { continue }
      let link = String(decoding: target[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
      if link.hasPrefix("socket:") || link == "anon_inode:[pidfd]" { return true }
      if link == "anon_inode:[timerfd]", let seconds = secondsLeft(onTimer: readSmallFile("/proc/self/fdinfo/\(name)")),
        seconds < horizon {
        return true
      }
    }
    return false
  }

  /// Whether a child process of the process still runs: its exit, or what it writes, can end
  /// a wait for events (on a pipe, a `signalfd`).
  private static func childRunning() -> Bool {
    threads().contains { thread in
      readSmallFile("/proc/self/task/\(thread)/children").split(separator: " ").contains { child in
        let state = readSmallFile("/proc/\(child)/stat").split(separator: ")").last?.split(separator: " ").first
        return state != nil && state != "Z" && state != "X"
      }
    }
  }

  /// How far away, in seconds, a timer or a sleeper may be due and still count as one that can
  /// end a wait: one due further off (a run loop's or Dispatch's "never", 30 days ahead; XCTest's
  /// timeout of an `async` test) resumes no test.
  static let horizon: UInt64 = 3600

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

extension ExplorerScheduler.State {
  /// Whether a sleeper is due within the horizon of real time: one that can still resume the test.
  var sleeperDueWithinTheHorizon: Bool {
    let horizon = ContinuousClock.now.advanced(by: .seconds(OutsideWork.horizon))
    return sleepers.contains { $0.realDue < horizon }
  }
}

extension ExplorerScheduler {
  /// The `stuck` record (at the virtual time, in nanoseconds) when the running test sent Swift
  /// concurrency work and none of it can run, none is due and none came for the quiet
  /// period, while the main thread is free (it answers within another quiet period: a
  /// synchronous test body blocking it, as XCTest runs one, is running, not stuck); once a test.
  /// An XCTest test holds the main thread: it can be stuck only while the main thread waits in
  /// XCTest's waiter (for its `async` body, `setUp` or `tearDown`). Otherwise its synchronous
  /// body runs there, even as it runs the run loop between its own looks at the clock
  /// (Nimble's `toEventually` and `toAlways` poll so), and is given its real time. A
  /// synchronous body waiting in XCTest's waiter is not stuck either: its timeout, sent for later
  /// from the main thread, is a sleeper due within the hour.
  func stuck() -> ChannelRecord? {
    let candidate = state.withLock { state in
      state.escapedAt == nil && state.idle && state.ready.isEmpty && !state.sleeperDueWithinTheHorizon && !state.stuckReported
        && state.jobsAtTestStart != nil && state.swiftJobs > state.swiftJobsAtTestStart
        && (!state.testHoldsTheMainThread || state.mainThreadWaits)
    }
    guard candidate else { return nil }
    guard RealDispatch.mainThreadFree(within: BundleExplorer.quietPeriod) else { return nil }
    // Something outside the schedule can still resume the test: wait for it, in real time.
    if OutsideWork.canResume(besides: Self.ownThreads.withLock { $0 }) {
      state.withLock { $0.awaitingOutside = true }
      return nil
    }
    return state.withLock { state in
      guard state.idle, state.ready.isEmpty, !state.sleeperDueWithinTheHorizon, !state.stuckReported,
        state.jobsAtTestStart != nil, !state.testHoldsTheMainThread || state.mainThreadWaits
      else { return nil }
      state.stuckReported = true
      return .stuck(virtualTime: state.now)
    }
  }
}
#endif
