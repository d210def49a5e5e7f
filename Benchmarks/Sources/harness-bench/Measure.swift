import Foundation
import Synchronization

/// Nanoseconds on the monotonic clock: cheap enough to stamp every wait.
func monotonicNanos() -> UInt64 {
  var now = timespec()
  clock_gettime(CLOCK_MONOTONIC, &now)
  return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// User plus system CPU time of the whole process, in seconds.
func processCPUSeconds() -> Double {
  cpuSeconds(RUSAGE_SELF)
}

/// User plus system CPU time of the child processes that ended and were waited for, in seconds.
func childrenCPUSeconds() -> Double {
  cpuSeconds(RUSAGE_CHILDREN)
}

private func cpuSeconds(_ who: __rusage_who) -> Double {
  var usage = rusage()
  getrusage(__rusage_who_t(who.rawValue), &usage)
  func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
  return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// A flag set from one thread and read from another.
final class Flag: Sendable {
  private let value = Atomic<Bool>(false)
  var isSet: Bool { value.load(ordering: .acquiring) }
  func set() { value.store(true, ordering: .releasing) }
}

/// Latency samples collected from any thread.
final class SampleLog: Sendable {
  private let samples: Mutex<[UInt64]>

  init(capacity: Int) {
    var samples: [UInt64] = []
    samples.reserveCapacity(capacity)
    self.samples = Mutex(samples)
  }

  func add(_ nanoseconds: UInt64) { samples.withLock { $0.append(nanoseconds) } }
  var all: [UInt64] { samples.withLock { $0 } }
}

/// The distribution of a set of wake latencies.
struct LatencyStats {
  var count: Int
  var p50: Double
  var p99: Double
  var p999: Double
  var max: Double
  /// Waits slower than 1 ms and 50 ms.
  var over1ms: Int
  var over50ms: Int

  /// Summarizes latencies given in nanoseconds; the figures are in microseconds.
  init(nanoseconds: [UInt64]) {
    let sorted = nanoseconds.sorted()
    count = sorted.count
    func percentile(_ fraction: Double) -> Double {
      guard !sorted.isEmpty else { return .nan }
      let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
      return Double(sorted[Swift.max(0, Swift.min(sorted.count - 1, rank))]) / 1000
    }
    p50 = percentile(0.5)
    p99 = percentile(0.99)
    p999 = percentile(0.999)
    max = percentile(1)
    over1ms = sorted.count - (sorted.firstIndex { $0 > 1_000_000 } ?? sorted.count)
    over50ms = sorted.count - (sorted.firstIndex { $0 > 50_000_000 } ?? sorted.count)
  }
}

/// A background thread that performs one action at a time, a random delay after it is
/// armed, and stamps the moment it acted: the "background fulfill" of every wake-latency
/// measurement. The default 0–100 µs lets the action land before, while and after the
/// waiter goes to sleep, as real callbacks do; probe rows use ``flip`` (0.5–10 ms), so a
/// poller cannot look fast by catching the flip on its first evaluation.
final class Signaller: @unchecked Sendable {
  // `pending` is only touched with `lock` held.
  private let lock = NSLock()
  private var pending: [@Sendable () -> Void] = []
  private let armed = DispatchSemaphore(value: 0)
  private let stopped = Flag()
  private let firedAt = Atomic<UInt64>(0)
  private let delays: Range<UInt64>

  /// The delays of probe rows: a condition flips a random 0.5–10 ms into the wait.
  static let flip: Range<UInt64> = 500_000..<10_000_000

  /// Creates a signaller acting a random number of nanoseconds in `delays` after each arming.
  init(delays: Range<UInt64> = 0..<100_000) {
    self.delays = delays
    let thread = Thread { [self] in loop() }
    thread.name = "signaller"
    thread.start()
  }

  /// Performs `action` on the signaller's thread after a random delay.
  func fire(_ action: @escaping @Sendable () -> Void) {
    lock.lock()
    pending.append(action)
    lock.unlock()
    armed.signal()
  }

  /// Nanoseconds from the moment the last action began to now.
  func elapsedSinceFired() -> UInt64 {
    let now = monotonicNanos()
    return now &- firedAt.load(ordering: .acquiring)
  }

  func stop() {
    stopped.set()
    armed.signal()
  }

  private func loop() {
    var generator = SystemRandomNumberGenerator()
    while true {
      armed.wait()
      if stopped.isSet { return }
      lock.lock()
      let action = pending.removeFirst()
      lock.unlock()
      let due = monotonicNanos() + UInt64.random(in: delays, using: &generator)
      // Sleep through long delays, then spin the last 200 µs so the action lands on time.
      let spinFrom = due &- 200_000
      if monotonicNanos() < spinFrom && due > 200_000 {
        Thread.sleep(forTimeInterval: Double(spinFrom &- monotonicNanos()) / 1e9)
      }
      while monotonicNanos() < due {}
      firedAt.store(monotonicNanos(), ordering: .releasing)
      action()
    }
  }
}

/// Runs `work` on a new thread and blocks until it returns.
func onBackgroundThread<T: Sendable>(_ work: @escaping @Sendable () -> T) -> T {
  let result = Mutex<T?>(nil)
  let done = DispatchSemaphore(value: 0)
  let thread = Thread {
    let value = work()
    result.withLock { $0 = value }
    done.signal()
  }
  thread.stackSize = 8 << 20
  thread.start()
  done.wait()
  return result.withLock { $0! }
}

/// Runs `work` in a task while the main thread turns its run loop, and returns what it
/// returned: the task may need the main actor (Nimble's polling does).
@MainActor
func inTask<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
  let result = Mutex<T?>(nil)
  Task.detached {
    let value = await work()
    result.withLock { $0 = value }
    DispatchQueue.main.async {}
  }
  while true {
    if let value = result.withLock({ $0 }) { return value }
    _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 1))
  }
}
