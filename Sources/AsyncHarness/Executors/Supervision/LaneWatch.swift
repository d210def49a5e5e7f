#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A worker process that a lane's loop (``LaneWatch``) watches: its watch, what it knows of
/// its attempts, and how what it says is read.
protocol WatchedWorker {
  associatedtype Decoder: WorkerDecoder
  /// The worker's watch: its descriptors, and how it ended once it has.
  var watch: WorkerWatch { get }
  /// Hands the worker's watch, decoder and supervision to `body`, together.
  mutating func withWatch<Result>(_ body: (inout WorkerWatch, inout Decoder, inout WorkerSupervision) -> Result) -> Result
}

/// A lane's workers, as its loop sees them: the slots that may hold one.
protocol WatchedLane {
  associatedtype Worker: WatchedWorker
  /// Every slot of a worker the lane holds.
  static var workerSlots: [WritableKeyPath<Self, Worker?>] { get }
  /// The worker in `slot` exited while the lane waited for another of its workers, and what
  /// it wrote was read: the lane decides what that means (a failure outside every test, when
  /// it ended by itself after its tests) and forgets it then. One that holds work (a request
  /// sent, a test not run yet) is kept: its end is heard when the lane waits for it.
  mutating func endedUnawaited(_ slot: WritableKeyPath<Self, Worker?>, _ exit: ProcessEnding)
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
  static func watch<Lane: WatchedLane>(_ lane: inout Lane, until awaited: WritableKeyPath<Lane, Lane.Worker?>) -> ProcessEnding? {
    switch lane[keyPath: awaited]!.withWatch({ watch, decoder, supervision in watch.begin(&decoder, &supervision) }) {
    case .exited: return lane[keyPath: awaited]!.watch.exit
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
        lane[keyPath: slot]!.withWatch { watch, _, supervision in
          descriptors += watch.descriptors(reading: slot == awaited)
          timeout = Self.sooner(timeout, supervision.timeout(at: .now))
          // Without an exit descriptor, the process is asked whether it exited ten times a second.
          if watch.asksForExit { timeout = Self.sooner(timeout, 100) }
        }
      }
      let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
      if ready < 0 && errno != EINTR {
        return lane[keyPath: awaited]!.withWatch { watch, decoder, supervision in watch.finish(&decoder, &supervision) }
      }
      for (index, slot) in slots.enumerated() {
        let mine = descriptors[(index * WorkerWatch.descriptorCount)...].prefix(WorkerWatch.descriptorCount)
        let served = lane[keyPath: slot]!.withWatch { watch, decoder, supervision in
          watch.serve(mine, &decoder, &supervision)
        }
        switch served {
        case .goOn:
          continue
        case .waitOver:
          // Only the awaited worker is read: only its wait can be over.
          if slot == awaited { return nil }
        case .exited:
          let exit = lane[keyPath: slot]!.withWatch { watch, decoder, supervision in
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
  private static func watched<Lane: WatchedLane>(_ lane: Lane, besides awaited: WritableKeyPath<Lane, Lane.Worker?>)
    -> [WritableKeyPath<Lane, Lane.Worker?>] {
    Lane.workerSlots.filter { $0 != awaited && lane[keyPath: $0].map { $0.watch.exit == nil } == true } + [awaited]
  }

  /// The sooner of two `poll` timeouts in milliseconds, -1 meaning none.
  private static func sooner(_ one: Int32, _ other: Int32) -> Int32 {
    one < 0 ? other : other < 0 ? one : min(one, other)
  }
}
