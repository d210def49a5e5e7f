import AsyncHarnessShared

/// The choices of one run of a schedule: which runnable queue goes next, as its policy makes
/// them (``SchedulePicking``, the one source both the scheduled strategy and the library
/// `harness test --explore` preloads are compiled from).
struct SchedulePicker: Sendable {
  private var choices: SchedulePicking

  init(_ schedule: Schedule) {
    let depth: Int? = if case .pct(let depth) = schedule.policy { depth } else { nil }
    choices = SchedulePicking(seed: schedule.seed, pctDepth: depth)
  }

  /// Registers a new queue (its index is the number of queues registered before it).
  mutating func queueAdded() { choices.queueAdded() }

  /// Picks one of `candidates` (queue indices, in the order the queues were made) to run at
  /// `step` (counted from 1).
  mutating func choose(among candidates: [Int], step: Int) -> Int {
    precondition(!candidates.isEmpty)
    return choices.choose(among: candidates, step: step)
  }
}
