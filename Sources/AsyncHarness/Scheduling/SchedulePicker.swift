/// The choices of one run of a schedule: which runnable queue goes next. Every choice comes
/// from one ``SeededRandomGenerator`` in a fixed order, and only integer arithmetic is
/// used, so a seed gives the same choices on every platform and Swift version.
struct SchedulePicker: Sendable {
  private var generator: SeededRandomGenerator
  private let policy: SchedulePolicy
  /// PCT: each queue's priority, by queue index; the highest runs.
  private var priorities: [UInt64] = []
  /// PCT: the steps (counted from 1) after which the queue that ran drops below all others,
  /// with the priority it drops to.
  private var changePoints: [(step: Int, priority: UInt64)] = []

  init(_ schedule: Schedule) {
    generator = SeededRandomGenerator(seed: schedule.seed)
    policy = schedule.policy
    if case .pct(let depth) = policy {
      // Change point i (from 1) lowers to depth - i: below every initial priority (≥ depth).
      changePoints = (1..<max(1, depth)).map { index in
        let exponent = draw(below: 10)                  // 2^0 … 2^9
        let step = (1 << exponent) + draw(below: 1 << exponent)  // in [2^e, 2^(e+1))
        return (Int(step), UInt64(depth - index))
      }
    }
  }

  /// A number in `0..<bound`, from the generator (modulo: the bias is below 2^-50).
  private mutating func draw(below bound: UInt64) -> UInt64 {
    generator.next() % bound
  }

  /// Registers a new queue (its index is the number of queues registered before it).
  mutating func queueAdded() {
    if case .pct(let depth) = policy {
      priorities.append(UInt64(depth) + 1 + draw(below: 1 << 62))
    }
  }

  /// Picks one of `candidates` (queue indices, in the order the queues were made) to run at
  /// `step` (counted from 1).
  mutating func choose(among candidates: [Int], step: Int) -> Int {
    precondition(!candidates.isEmpty)
    switch policy {
    case .randomWalk:
      return candidates[Int(draw(below: UInt64(candidates.count)))]
    case .pct:
      let chosen = candidates.max { priorities[$0] < priorities[$1] }!
      for change in changePoints where change.step == step {
        priorities[chosen] = change.priority
      }
      return chosen
    }
  }
}
