import AsyncHarnessShared
import Dispatch
import Synchronization

/// Small random delays before the work items of real queues (`--jitter SEED`): a way to
/// shake out ordering bugs in code that runs on real time, with `--repeat N`.
///
/// Under a strategy whose tests get real queues (``RealQueues``: every built-in strategy
/// but `synchronous` and `scheduled`, which order work themselves), each item sent with
/// ``Dispatching/async(_:)`` or ``Dispatching/asyncAfter(_:_:)`` to `t.main`,
/// `t.background` or a `t.queue(_:)` waits a delay drawn uniformly from 0 to
/// ``maximumDelay`` (in whole microseconds) before its queue gets it. A queue keeps its
/// order: an item never overtakes one sent before it to the same queue, and a `sync` call
/// first hands the queue every item still delayed, so it runs after them as it would
/// without jitter. Items of different queues, and the test's own thread, drift apart.
///
/// The delays come from the seed, the test's `Suite/test` path, its repetition and
/// attempt, and the queue's place among the test's queues (the main queue first, then in
/// the order they were made): the same seed gives every queue of a test the same delays
/// again, while each repetition of `--repeat N` draws new ones. The operating system's
/// timing still varies, so a seed reruns the same delays, not always the same failure.
public struct Jitter: Sendable, Hashable, Codable {
  /// The seed every delay is drawn from.
  public var seed: UInt64

  /// The longest delay an item waits: 2 ms, longer than the microseconds a hop between
  /// queues takes, short enough that a suite with jitter runs at nearly its usual speed.
  public static let maximumDelay: Duration = .milliseconds(2)

  /// Creates a jitter drawing its delays from `seed`.
  public init(seed: UInt64) { self.seed = seed }

  /// The delays of the queues of one run of a test.
  func delays(for test: TestID) -> JitterSource {
    let parts = [UInt64(ScheduleToken.fingerprint(ofTestAt: test.path)), UInt64(test.repetition), UInt64(test.attempt)]
    return JitterSource(seed: parts.reduce(seed, Self.mix))
  }

  /// A seed made of `seed` and `part`: a step of the seed's generator, so neighbouring
  /// parts (repetitions 1 and 2) give unrelated seeds.
  static func mix(_ seed: UInt64, _ part: UInt64) -> UInt64 {
    var generator = SeededRandomGenerator(seed: seed ^ (part &* 0x9E37_79B9_7F4A_7C15))
    return generator.next()
  }
}

/// Hands out the delays of one test run's queues, one sequence a queue, in the order the
/// queues are made.
final class JitterSource: Sendable {
  private let seed: UInt64
  private let queuesMade = Atomic<UInt64>(0)

  init(seed: UInt64) { self.seed = seed }

  /// The delays of the next queue the test makes.
  func nextQueue() -> JitterDelays {
    let ordinal = queuesMade.wrappingAdd(1, ordering: .relaxed).oldValue
    return JitterDelays(seed: Jitter.mix(seed, ordinal))
  }
}

/// The delays of one queue's items, in order: uniform from 0 to ``Jitter/maximumDelay``,
/// in whole microseconds.
struct JitterDelays: Sendable {
  private var random: SeededRandomGenerator

  init(seed: UInt64) { random = SeededRandomGenerator(seed: seed) }

  /// The next item's delay.
  mutating func next() -> Duration {
    .microseconds(Int64.random(in: 0...Int64(Jitter.maximumDelay.nanoseconds / 1000), using: &random))
  }
}

/// Delays the items of one queue, keeping their order: each item is handed to the queue
/// (by the `send` it came with) once its delay has passed and every item before it has
/// been handed over.
final class JitteredDelivery: Sendable {
  private struct Delayed {
    var number: UInt64
    var send: @Sendable () -> Void
  }

  private struct State {
    var delays: JitterDelays
    var numbered: UInt64 = 0
    var lastDue = DispatchTime.now()
    var delayed: [Delayed] = []
  }

  private let state: Mutex<State>

  /// Delays items by `delays`, one after the other.
  init(_ delays: JitterDelays) { state = Mutex(State(delays: delays)) }

  /// Calls `send` after this queue's next delay, and after every item sent before it.
  func delay(_ send: @escaping @Sendable () -> Void) {
    let (number, due) = state.withLock { state in
      let due = max(state.lastDue, DispatchTime.now() + state.delays.next().dispatchInterval)
      state.lastDue = due
      state.numbered += 1
      state.delayed.append(Delayed(number: state.numbered, send: send))
      return (state.numbered, due)
    }
    DispatchQueue.global().asyncAfter(deadline: due) { self.hand(through: number) }
  }

  /// Hands the queue every item still delayed (before a `sync` call, which must run after
  /// them).
  func handAll() {
    hand(through: .max)
  }

  /// Hands the queue the delayed items up to number `last`, in order. The lock is held
  /// while they are handed over, so two timers firing together cannot swap items.
  private func hand(through last: UInt64) {
    state.withLock { state in
      let due = state.delayed.prefix { $0.number <= last }
      for item in due { item.send() }
      state.delayed.removeFirst(due.count)
    }
  }
}
