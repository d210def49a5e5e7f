import AsyncHarness
import Foundation
import Synchronization

/// What the background side does to end a wait of ours.
enum WakeKind: String, Sendable {
  /// `fulfill()` an expectation; the test waits with `t.wait(for:)`.
  case fulfill = "fulfill"
  /// Post a notification; the test waits for `t.expectation(forNotification:)`.
  case notification = "post"
  /// Set a flag; the test waits with `t.wait(until:)`.
  case probe = "probe"
}

/// Fires the background action of one wait and tells how long ago it fired: through the
/// ``Signaller`` for real queues, or through `t.background` for the synchronous strategy,
/// whose queues run work inline (what its users get).
private struct Trigger: Sendable {
  let signaller: Signaller
  let inline: Bool
  private final class Box: Sendable { let at = Atomic<UInt64>(0) }
  private let box = Box()

  init(signaller: Signaller, inline: Bool) {
    self.signaller = signaller
    self.inline = inline
  }

  func fire(in t: TestContext, _ action: @escaping @Sendable () -> Void) {
    guard inline else { return signaller.fire(action) }
    let box = box
    t.background.async {
      box.at.store(monotonicNanos(), ordering: .releasing)
      action()
    }
  }

  func elapsed() -> UInt64 {
    inline ? monotonicNanos() &- box.at.load(ordering: .acquiring) : signaller.elapsedSinceFired()
  }
}

/// Wake latency of our harness: tests of up to 100 waits each, run by our runner, each wait
/// ended by a background action a random 0–100 µs after the wait began. Waits use the
/// default timeout (1 s), as users' do.
func ourWakeLatency(_ waiter: any Waiter, _ place: Place, _ kind: WakeKind, waits: Int,
                    signaller: Signaller) -> (LatencyStats, RunOutcome) {
  let log = SampleLog(capacity: waits)
  // A probe flips on the signaller's thread under every strategy: its state is what the
  // test observes, not work sent to the test's queues.
  let trigger = Trigger(signaller: signaller, inline: waiter is SynchronousWaiter && kind != .probe)
  let center = SendableCenter()
  let name = Notification.Name("harness-bench.wake")
  // An expectation for a notification observes until its test ends, so each of those
  // tests makes one wait; other tests make 100.
  let batch = kind == .notification ? 1 : 100
  let tests = stride(from: 0, to: waits, by: batch).map { first in
    let count = min(batch, waits - first)
    return makeTest("waits \(first)", place, blocking: { t in
      for _ in 0..<count {
        switch kind {
        case .fulfill:
          let done = t.expectation("fulfilled")
          trigger.fire(in: t) { done.fulfill() }
          try t.wait(for: done)
        case .notification:
          let posted = t.expectation(forNotification: name, center: center.value)
          trigger.fire(in: t) { center.value.post(name: name, object: nil) }
          try t.wait(for: posted)
        case .probe:
          let flag = Flag()
          trigger.fire(in: t) { flag.set() }
          try t.wait(until: { flag.isSet })
        }
        log.add(trigger.elapsed())
      }
    }, suspending: { t in
      for _ in 0..<count {
        switch kind {
        case .fulfill:
          let done = t.expectation("fulfilled")
          trigger.fire(in: t) { done.fulfill() }
          try await t.wait(for: done)
        case .notification:
          let posted = t.expectation(forNotification: name, center: center.value)
          trigger.fire(in: t) { center.value.post(name: name, object: nil) }
          try await t.wait(for: posted)
        case .probe:
          let flag = Flag()
          trigger.fire(in: t) { flag.set() }
          try await t.wait(until: { flag.isSet })
        }
        log.add(trigger.elapsed())
      }
    })
  }
  let outcome = runOurs(tests, waiter: waiter, place: place)
  return (LatencyStats(nanoseconds: log.all), outcome)
}

/// A private notification center that closures on any thread may use (it is thread-safe).
struct SendableCenter: @unchecked Sendable {
  let value = NotificationCenter()
}

// MARK: Floors

/// A bare `DispatchSemaphore` handoff from the signaller to a waiting thread.
func semaphoreFloor(waits: Int, signaller: Signaller) -> LatencyStats {
  let log = SampleLog(capacity: waits)
  for _ in 0..<waits {
    let semaphore = DispatchSemaphore(value: 0)
    signaller.fire { semaphore.signal() }
    semaphore.wait()
    log.add(signaller.elapsedSinceFired())
  }
  return LatencyStats(nanoseconds: log.all)
}

/// A `CheckedContinuation` resumed by the signaller.
@MainActor
func continuationFloor(waits: Int, signaller: Signaller) -> LatencyStats {
  let log = SampleLog(capacity: waits)
  inTask {
    for _ in 0..<waits {
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        signaller.fire { continuation.resume() }
      }
      log.add(signaller.elapsedSinceFired())
    }
  }
  return LatencyStats(nanoseconds: log.all)
}

/// The main run loop, turned by the main thread, woken by `DispatchQueue.main.async`.
func mainQueueFloor(waits: Int, signaller: Signaller) -> LatencyStats {
  let log = SampleLog(capacity: waits)
  for _ in 0..<waits {
    let flag = Flag()
    signaller.fire {
      flag.set()
      DispatchQueue.main.async {}
    }
    while !flag.isSet {
      _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 5))
    }
    log.add(signaller.elapsedSinceFired())
  }
  return LatencyStats(nanoseconds: log.all)
}
