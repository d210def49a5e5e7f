#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A lane's workers, as its loop sees them: the slots that may hold one, and each worker's
/// watch, decoder and supervision.
protocol WatchedLane {
  /// Where the lane holds a worker.
  associatedtype Slot: Equatable
  /// How its workers' channels and output are read.
  associatedtype Decoder: WorkerDecoder
  /// The slots of the workers the lane holds that have not ended.
  var slotsOfRunningWorkers: [Slot] { get }
  /// Hands the watch, decoder and supervision of the worker in `slot` to `body`, together.
  mutating func withWatch<Result>(_ slot: Slot, _ body: (inout WorkerWatch, inout Decoder, inout WorkerSupervision) -> Result)
    -> Result
  /// The worker in `slot` exited while the lane waited for another of its workers, and what
  /// it wrote was read: the lane decides what that means (a failure outside every test, when
  /// it ended by itself after its tests) and forgets it then. One that holds work (a request
  /// sent, a test not run yet) is kept: its end is heard when the lane waits for it.
  mutating func endedUnawaited(_ slot: Slot, _ exit: ProcessEnding)
  /// Time passed to `now` for the worker in `slot`, and the run was interrupted by
  /// `interrupt` when it was: the signals its deadlines and the interrupt ask for
  /// (``WorkerSupervision/signals(at:interrupt:)``) are sent to its process group.
  mutating func timePassed(_ slot: Slot, to now: ContinuousClock.Instant, interrupt: Int32?)
}

/// The one loop of a lane: one poll over every worker the lane holds (the one running tests
/// one at a time, the one running them side by side, the spare started for the next test),
/// the run's interrupt and the next deadline of any of them.
///
/// The worker the lane waits for is read (``WorkerWatch/descriptors(reading:)``) until what
/// the lane waits for happened or it exited. The others are watched meanwhile: their
/// deadlines pass, and their exits are heard as they happen. One that ends by itself after
/// its tests ended, while the lane waits for another, is a failure outside every test
/// (``WatchedLane/endedUnawaited(_:_:)``), as it is for `swift test` when a test left work
/// behind that crashes its process.
enum LaneWatch {
  /// Watches `lane`'s workers until what the lane waits for of the one in `awaited` happened:
  /// `nil`; or that worker ended: then how it ended, what it wrote read to its end, and its
  /// supervision's attempts are to be ended (``WorkerSupervision/exited(_:outputHeldBy:)``).
  static func watch<Lane: WatchedLane>(_ lane: inout Lane, until awaited: Lane.Slot) -> ProcessEnding? {
    switch lane.withWatch(awaited, { watch, decoder, supervision in watch.begin(&decoder, &supervision) }) {
    case .exited: return lane.withWatch(awaited) { watch, _, _ in watch.exit }
    case .waitOver: return nil
    case .goOn, nil: break
    }
    // The awaited worker last: the others' ends are heard before its wait is over.
    var slots = watched(lane, besides: awaited)
    var descriptors: [pollfd] = []
    while true {
      descriptors.removeAll(keepingCapacity: true)
      var timeout: Int32 = -1
      for slot in slots {
        lane.withWatch(slot) { watch, _, supervision in
          descriptors += watch.descriptors(reading: slot == awaited)
          timeout = Self.sooner(timeout, supervision.timeout(at: .now))
          // Without an exit descriptor, the process is asked whether it exited ten times a second.
          if watch.asksForExit { timeout = Self.sooner(timeout, 100) }
        }
      }
      let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
      if ready < 0 && errno != EINTR {
        return lane.withWatch(awaited) { watch, decoder, supervision in watch.finish(&decoder, &supervision) }
      }
      let now = ContinuousClock.now
      for (index, slot) in slots.enumerated() {
        let mine = descriptors[(index * WorkerWatch.descriptorCount)...].prefix(WorkerWatch.descriptorCount)
        lane.timePassed(slot, to: now, interrupt: lane.withWatch(slot) { watch, _, _ in watch.interrupt(in: mine) })
        let served = lane.withWatch(slot) { watch, decoder, supervision in
          watch.serve(mine, &decoder, &supervision)
        }
        switch served {
        case .goOn:
          continue
        case .waitOver:
          // Only the awaited worker is read: only its wait can be over.
          if slot == awaited { return nil }
        case .exited:
          let exit = lane.withWatch(slot) { watch, decoder, supervision in
            watch.finish(&decoder, &supervision)
          }
          if slot == awaited { return exit }
          lane.endedUnawaited(slot, exit)
          slots = watched(lane, besides: awaited)
        }
      }
    }
  }

  /// The slots of `lane`'s workers that have not ended, besides `awaited`, then `awaited`.
  private static func watched<Lane: WatchedLane>(_ lane: Lane, besides awaited: Lane.Slot) -> [Lane.Slot] {
    lane.slotsOfRunningWorkers.filter { $0 != awaited } + [awaited]
  }

  /// The sooner of two `poll` timeouts in milliseconds, -1 meaning none.
  private static func sooner(_ one: Int32, _ other: Int32) -> Int32 {
    one < 0 ? other : other < 0 ? one : min(one, other)
  }
}
