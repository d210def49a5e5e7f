/// Which order the scheduled strategy runs a test's pending work in: a seed and a policy.
/// The same schedule gives the same order, and the same events, on every machine.
public struct Schedule: Sendable, Hashable, Codable, CustomStringConvertible {
  /// The seed of the policy's choices.
  public var seed: UInt64
  /// How runnable work is chosen.
  public var policy: SchedulePolicy

  /// Creates a schedule.
  public init(seed: UInt64, policy: SchedulePolicy) {
    self.seed = seed
    self.policy = policy
  }

  /// `SEED:POLICY`, e.g. `7:pct3`.
  public var description: String { "\(seed):\(policy)" }

  /// The replay token of this schedule for the test at `path` (`Suite/test`).
  package func token(forTestAt path: String) -> ScheduleToken {
    ScheduleToken(schedule: self, test: ScheduleToken.fingerprint(ofTestAt: path))
  }
}

/// How the scheduled strategy picks the next work item among the runnable ones. Every
/// choice comes from a SplitMix64 generator seeded with the schedule's seed.
public enum SchedulePolicy: Sendable, Hashable, Codable, CustomStringConvertible {
  /// A uniform random walk: each step runs the first item of a queue chosen uniformly
  /// among the queues that have a runnable item.
  case randomWalk
  /// Probabilistic concurrency testing (Burckhardt et al., 2010) for bugs of depth `depth`:
  /// each queue gets a random priority when it is made, each step runs the first item of
  /// the runnable queue with the highest priority, and at `depth - 1` steps chosen by the
  /// seed the queue that just ran drops below every other. The change points are drawn
  /// log-uniformly from the first 1,024 steps (a power-of-two range, then a step in it),
  /// so short tests and long ones both get them.
  case pct(depth: Int)

  /// `random`, or `pct` and the depth, as tokens spell it.
  public var description: String {
    switch self {
    case .randomWalk: "random"
    case .pct(let depth): "pct\(depth)"
    }
  }

  /// Reads `random` or `pctD` (D from 1 to 9).
  public init?(_ text: String) {
    if text == "random" {
      self = .randomWalk
    } else if text.hasPrefix("pct"), let depth = Int(text.dropFirst(3)), (1...9).contains(depth),
              text.dropFirst(3).allSatisfy(\.isASCII) {
      self = .pct(depth: depth)
    } else {
      return nil
    }
  }
}

/// A replay token: the schedule a failing test ran under and a fingerprint of the test, as
/// `SEED:POLICY:TEST`, e.g. `7:pct3:9f2c1a`, and, printed after a run, the steps that run
/// took (``ScheduleTrace``): `7:pct3:9f2c1a:41-0be311`. `--schedule TOKEN` reruns that test
/// (and any other whose path has the same fingerprint) under exactly that schedule; with
/// the steps, a replay that takes others says where and why.
public struct ScheduleToken: Sendable, Hashable, Codable, CustomStringConvertible, LosslessStringConvertible {
  /// The schedule.
  public var schedule: Schedule
  /// The fingerprint of the test's `Suite/test` path (24 bits of FNV-1a, the same on every machine).
  public var test: UInt32
  /// The steps the run the token was printed for took, if known.
  public var trace: ScheduleTrace?

  /// Creates a token.
  package init(schedule: Schedule, test: UInt32, trace: ScheduleTrace? = nil) {
    self.schedule = schedule
    self.test = test & 0xFF_FFFF
    self.trace = trace
  }

  /// Reads `SEED:POLICY:TEST` or `SEED:POLICY:TEST:STEPS-FINGERPRINT`: a decimal seed,
  /// `random` or `pctD`, six hexadecimal digits, then optionally a ``ScheduleTrace``.
  public init?(_ description: String) {
    let parts = description.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
    guard parts.count == 3 || parts.count == 4, let seed = UInt64(parts[0]), parts[0].allSatisfy(\.isASCII),
          let policy = SchedulePolicy(parts[1]),
          parts[2].count == 6, parts[2].allSatisfy(\.isHexDigit), let test = UInt32(parts[2], radix: 16) else {
      return nil
    }
    let trace = parts.count == 4 ? ScheduleTrace(parts[3]) : nil
    guard parts.count == 3 || trace != nil else { return nil }
    self.init(schedule: Schedule(seed: seed, policy: policy), test: test, trace: trace)
  }

  /// The token as `--schedule` takes it: `SEED:POLICY:TEST`, then `:STEPS-FINGERPRINT` when
  /// the trace is known.
  public var description: String {
    let hex = String(test, radix: 16)
    let token = "\(schedule):\(String(repeating: "0", count: max(0, 6 - hex.count)))\(hex)"
    return trace.map { "\(token):\($0)" } ?? token
  }

  /// Whether this token was made for the test at `path` (`Suite/test`).
  package func matches(testAt path: String) -> Bool {
    test == Self.fingerprint(ofTestAt: path)
  }

  /// The 24-bit fingerprint of a test's `Suite/test` path (FNV-1a of its UTF-8 bytes,
  /// folded): the same on every machine and in every run.
  package static func fingerprint(ofTestAt path: String) -> UInt32 {
    var hash: UInt32 = 0x811C_9DC5
    for byte in path.utf8 {
      hash ^= UInt32(byte)
      hash &*= 0x0100_0193
    }
    return (hash >> 24) ^ (hash & 0xFF_FFFF)
  }
}
