/// Where a blocking wait's thread sleeps between evaluations of its condition, and how it is
/// woken: in the main run loop for a wait on the main thread that events end (so main-queue
/// work runs the moment it arrives), and on a parker otherwise. A polled wait on the main
/// thread parks too, and runs the main run loop's ready work after each sleep: it wakes
/// often, and a run-loop sleep costs about twice the CPU of a parked one on Linux. A spot
/// nothing wakes (the probe poller's) sleeps on a timer alone, without a parker's lock.
struct ParkingSpot: Sendable {
  /// `nil` for a spot nothing wakes.
  private let parker: ThreadParker?
  private let sleepsInRunLoop: Bool
  private let runsMainWork: Bool

  /// A spot for the calling thread; `pollsOften` for a wait re-evaluated on a schedule,
  /// `woken` unless nothing will call ``wake()``.
  init(pollsOften: Bool, woken: Bool = true) {
    let pumps = MainThreadPump.canPump
    sleepsInRunLoop = pumps && !pollsOften
    runsMainWork = pumps && pollsOften
    parker = woken ? ThreadParker() : nil
  }

  /// Ends a sleep in progress, or the next one; from any thread.
  func wake() {
    if sleepsInRunLoop { MainThreadPump.wake() } else { parker?.unpark() }
  }

  /// Sleeps until woken or `deadline`.
  func sleep(until deadline: ContinuousClock.Instant) {
    if sleepsInRunLoop { return MainThreadPump.turn(until: deadline) }
    if let parker { parker.park(until: deadline) } else { ThreadParker.sleep(until: deadline) }
    if runsMainWork { MainThreadPump.runReadyWork() }
  }
}

extension WaitCondition {
  /// Blocks the calling thread until the condition is done or the deadline passes, sleeping
  /// on a ``ParkingSpot`` woken by ``wake()`` (unless `pollsEverything`, which re-evaluates
  /// every condition on `schedule` and ignores wake-ups).
  func blockParked(deadline: ContinuousClock.Instant, schedule: PollSchedule = .standard,
                   pollsEverything: Bool = false) {
    let spot = ParkingSpot(pollsOften: isPolled || pollsEverything, woken: !pollsEverything)
    if !pollsEverything { onWake { spot.wake() } }
    blockUntilDone(deadline: deadline, schedule: schedule, pollsEverything: pollsEverything) { spot.sleep(until: $0) }
  }
}
