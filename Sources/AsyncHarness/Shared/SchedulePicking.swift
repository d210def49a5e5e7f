// The one source of a schedule's choices, compiled twice: into the module
// AsyncHarnessShared, which AsyncHarness's scheduled strategy uses
// (Scheduling/SchedulePicker.swift), and, as text embedded in AsyncHarness, into the library
// `harness test --explore` preloads into a package's test bundle
// (ExistingTests/BundleChannel/AsyncHarnessBundleExplorer.swift). So a seed makes the same
// choices in both, by construction. It imports nothing and uses only integer arithmetic, so a
// seed gives the same choices on every platform and Swift version.

/// A small seeded random number generator (SplitMix64): the one `--shuffle SEED` uses, so an
/// order can be replayed from its printed seed on every platform. Tests can use it for
/// reproducible generated inputs.
package struct SeededRandomGenerator: RandomNumberGenerator, Sendable {
  private var state: UInt64

  /// Creates a generator whose sequence is fixed by `seed`.
  package init(seed: UInt64) { state = seed }

  /// The next number of the sequence.
  package mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

/// The choices of one run of a schedule: which runnable queue goes next, by a uniform random
/// walk, or by PCT of depth `pctDepth` (Burckhardt et al., 2010: each queue gets a random
/// priority when it is made, the runnable queue with the highest runs, and at `depth - 1`
/// steps drawn log-uniformly from the first 1,024 the queue that just ran drops below every
/// other). Every choice comes from one ``SeededRandomGenerator`` in a fixed order.
package struct SchedulePicking: Sendable {
  private var generator: SeededRandomGenerator
  /// PCT's depth; `nil` for a random walk.
  private let pctDepth: Int?
  /// PCT: each queue's priority, by queue index; the highest runs.
  private var priorities: [UInt64] = []
  /// PCT: the steps (counted from 1) after which the queue that ran drops below all others,
  /// with the priority it drops to.
  private var changePoints: [(step: Int, priority: UInt64)] = []

  /// The choices of the schedule of `seed`: PCT of depth `pctDepth`, else a random walk.
  package init(seed: UInt64, pctDepth: Int?) {
    generator = SeededRandomGenerator(seed: seed)
    self.pctDepth = pctDepth
    if let depth = pctDepth {
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
  package mutating func queueAdded() {
    if let depth = pctDepth { priorities.append(UInt64(depth) + 1 + draw(below: 1 << 62)) }
  }

  /// Picks one of `candidates` (queue indices, in the order the queues were made; never
  /// empty) to run at `step` (counted from 1). A random walk reads only the one it picks (the
  /// preloaded library passes its ``ReadyOrder``, whose every element costs O(log n) to read).
  package mutating func choose<Candidates: RandomAccessCollection<Int>>(among candidates: Candidates, step: Int) -> Int
  where Candidates.Index == Int {
    guard pctDepth != nil else {
      return candidates[candidates.startIndex + Int(draw(below: UInt64(candidates.count)))]
    }
    let chosen = candidates.max { priorities[$0] < priorities[$1] }!
    for change in changePoints where change.step == step {
      priorities[chosen] = change.priority
    }
    return chosen
  }
}
