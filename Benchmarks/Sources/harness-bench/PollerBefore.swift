import AsyncHarness
import Foundation

/// The probe poller as it was before issue 51, beside today's in the same run (parts 1 and 2):
/// every wait re-evaluated at the time waited / 8 throughout (100 µs to 20 ms), the thread
/// parked on a condition variable between evaluations, the main run loop's ready work run after
/// each. Today's backs off to / 2 after 10 ms and sleeps on a timer alone (nothing wakes it).
struct ProbePollerBeforeIssue51: Waiter {
  let name = "probePoller before #51"
  private static let schedule = PollSchedule(divisor: 8)

  func block(on condition: WaitCondition, until deadline: ContinuousClock.Instant) {
    let runsMainWork = MainThreadPump.canPump
    let parked = NSCondition()
    condition.blockUntilDone(deadline: deadline, schedule: Self.schedule, pollsEverything: true) { next in
      parked.lock()
      while true {
        let (seconds, attoseconds) = ContinuousClock().now.duration(to: next).components
        let remaining = Double(seconds) + Double(attoseconds) / 1e18
        guard remaining > 0 else { break }
        _ = parked.wait(until: Date(timeIntervalSinceNow: remaining))
      }
      parked.unlock()
      if runsMainWork { MainThreadPump.runReadyWork() }
    }
  }

  func suspend(on condition: WaitCondition, until deadline: ContinuousClock.Instant) async {
    await condition.suspendUntilDone(deadline: deadline, schedule: Self.schedule, pollsEverything: true)
  }
}
