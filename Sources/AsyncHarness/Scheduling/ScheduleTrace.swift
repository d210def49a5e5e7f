/// The steps one run of a test took under its schedule: how many, and a fingerprint of which
/// queue (or Swift concurrency task) each step ran. A replay token carries it
/// (`SEED:POLICY:TEST:STEPS-FINGERPRINT`, e.g. `7:pct3:9f2c1a:41-0be311`), so a replay that
/// takes other steps says so.
public struct ScheduleTrace: Sendable, Hashable, Codable, CustomStringConvertible, LosslessStringConvertible {
  /// How many steps the schedule took.
  public var steps: Int
  /// A 24-bit fingerprint of the queues the steps picked, in order.
  public var fingerprint: UInt32
  /// Before which step (counted from 1) work from outside the schedule first arrived, if it
  /// did: a replay follows the run exactly only up to there. Not part of the trace's text
  /// or equality.
  public var firstOutsideStep: Int?

  /// Creates a trace.
  package init(steps: Int, fingerprint: UInt32, firstOutsideStep: Int? = nil) {
    self.steps = steps
    self.fingerprint = fingerprint & 0xFF_FFFF
    self.firstOutsideStep = firstOutsideStep
  }

  /// Reads `STEPS-FINGERPRINT`: a decimal count and six hexadecimal digits.
  public init?(_ description: String) {
    let parts = description.split(separator: "-", omittingEmptySubsequences: false)
    guard parts.count == 2, parts[0].allSatisfy(\.isASCII), let steps = Int(parts[0]), steps >= 0,
          parts[1].count == 6, parts[1].allSatisfy(\.isHexDigit), let fingerprint = UInt32(parts[1], radix: 16) else {
      return nil
    }
    self.init(steps: steps, fingerprint: fingerprint)
  }

  /// `STEPS-FINGERPRINT`, e.g. `41-0be311`.
  public var description: String {
    let hex = String(fingerprint, radix: 16)
    return "\(steps)-\(String(repeating: "0", count: max(0, 6 - hex.count)))\(hex)"
  }

  /// Reads the trace from its text, `STEPS-FINGERPRINT`.
  public init(from decoder: any Decoder) throws {
    let text = try decoder.singleValueContainer().decode(String.self)
    guard let trace = ScheduleTrace(text) else {
      throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not STEPS-FINGERPRINT: \(text)"))
    }
    self = trace
  }

  /// Writes the trace as its text, `STEPS-FINGERPRINT`.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(description)
  }

  public static func == (lhs: ScheduleTrace, rhs: ScheduleTrace) -> Bool {
    lhs.steps == rhs.steps && lhs.fingerprint == rhs.fingerprint
  }

  public func hash(into hasher: inout Hasher) {
    hasher.combine(steps)
    hasher.combine(fingerprint)
  }

  /// The trace of `steps` steps whose queues' indices hashed (FNV-1a 64, `StableHash`) to
  /// `hash`, folded to 24 bits.
  init(steps: Int, hash: UInt64, firstOutsideStep: Int?) {
    let folded = UInt32(truncatingIfNeeded: hash >> 40) ^ UInt32(truncatingIfNeeded: hash >> 16) ^ UInt32(truncatingIfNeeded: hash)
    self.init(steps: steps, fingerprint: folded, firstOutsideStep: firstOutsideStep)
  }

  /// Why a replay whose trace is `self` is not the run its token recorded (`recorded`), or
  /// `nil` when it took the same steps.
  func divergence(from recorded: ScheduleTrace) -> String? {
    guard self != recorded else { return nil }
    let cause = firstOutsideStep.map {
      "work from outside the schedule (a real queue, a thread) first arrived before step \($0), and the schedule cannot replay what it does not order"
    } ?? "no work came from outside the schedule, so the test's own code took another path (it reads the real clock, random numbers, the environment, or state an earlier test left)"
    return "This replay diverged from the run its token was printed for: that run took \(recorded.steps) steps (\(recorded)), this one \(steps) (\(self)); \(cause)"
  }
}
