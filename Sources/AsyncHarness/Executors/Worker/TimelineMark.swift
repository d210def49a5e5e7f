import Foundation

/// A wait of a step's test that ended, or a step its schedule took, as its worker sends it:
/// the two events a step that reports waits (``WorkerRunRequest/reportsWaits``) makes by the
/// thousand, each in a short line naming the step by its `ref` and stamped to the microsecond
/// (`at`, microseconds since 1970), where an event line would repeat the whole ``TestID`` and
/// stamp it to the millisecond. The parent turns each back into the `waitEnded` or `scheduleStep`
/// event of the step's test (``event(of:)``).
struct TimelineMark: Sendable, Equatable {
  enum Kind: Sendable, Equatable {
    /// A wait ended: what it awaited, how it ended, how long it took.
    case wait(awaited: String, outcome: String, nanoseconds: Int64)
    /// The schedule took its step `number`, running `ran`, at virtual time `virtualNanoseconds`.
    case step(number: Int, ran: String, virtualNanoseconds: Int64)

    /// The kind's name, a mark's `mark`: `wait`, `step`.
    var name: StaticString {
      switch self {
      case .wait: "wait"
      case .step: "step"
      }
    }
  }

  /// The step's reference (``WorkerRunRequest/ref``).
  var ref: Int
  var kind: Kind
  /// When, in microseconds since 1970.
  var at: Int64

  /// The mark of `event` for the step `ref`; `nil` for an event of another kind.
  init?(_ event: Event, ref: Int) {
    switch event.kind {
    case .waitEnded(_, let awaited, let outcome, let duration):
      kind = .wait(awaited: awaited, outcome: outcome, nanoseconds: Self.nanoseconds(duration))
    case .scheduleStep(_, let number, let ran, let virtualTime):
      kind = .step(number: number, ran: ran, virtualNanoseconds: Self.nanoseconds(virtualTime))
    default:
      return nil
    }
    self.ref = ref
    at = Int64((event.timestamp.timeIntervalSince1970 * 1_000_000).rounded())
  }

  /// The event the mark stands for, of the step's test `test`.
  func event(of test: TestID) -> Event {
    let timestamp = Date(timeIntervalSince1970: Double(at) / 1_000_000)
    return switch kind {
    case .wait(let awaited, let outcome, let nanoseconds):
      Event(.waitEnded(test, awaited: awaited, outcome: outcome, duration: Self.seconds(nanoseconds)), timestamp: timestamp)
    case .step(let number, let ran, let virtualNanoseconds):
      Event(.scheduleStep(test, step: number, ran: ran, virtualTime: Self.seconds(virtualNanoseconds)), timestamp: timestamp)
    }
  }

  /// Writes the mark as one line, newline included, after what `json` holds: `mark` first
  /// (``init(line:)``), times as integers.
  func write(to json: inout JSONText) {
    json.object { json in
      json.field("mark") { $0.string(kind.name) }
      json.field("protocol", WorkerProtocol.version)
      json.field("ref", ref)
      json.field("at", Int(at))
      switch kind {
      case .wait(let awaited, let outcome, let nanoseconds):
        json.field("awaited", awaited)
        json.field("outcome", outcome)
        json.field("durationNanoseconds", Int(nanoseconds))
      case .step(let number, let ran, let virtualNanoseconds):
        json.field("step", number)
        json.field("ran", ran)
        json.field("virtualTimeNanoseconds", Int(virtualNanoseconds))
      }
    }
    json.newline()
  }

  /// Reads a line whose first member is `mark`, its other members in any order, member by
  /// member straight from its bytes (``JSONReader``), without a JSON value tree: a traced run
  /// reads marks by the thousand.
  /// - Returns: nil when the line's first member is not `mark` (it is no mark).
  /// - Throws: ``EventDecodingError`` for a mark that is not whole, of another protocol
  ///   version, or of an unknown kind.
  init?(line: some Collection<UInt8>) throws {
    guard let mark = try JSONReader.read(line, { reader -> TimelineMark? in
      guard (try? reader.openObject()) != nil, let first = try? reader.nextKey(), case "mark" = first else { return nil }
      let mark = try TimelineMark(markMembers: &reader)
      try reader.end()
      return mark
    }) else { return nil }
    self = mark
  }

  /// The members of a mark after its `mark`, to the object's end.
  private init(markMembers reader: inout JSONReader) throws {
    let name = try reader.string("mark")
    var version: Int64?, ref: Int64?, at: Int64?, number: Int64?, nanoseconds: Int64?
    var awaited: String?, outcome: String?, ran: String?
    while let key = try reader.nextKey() {
      switch key {
      case "protocol": version = try reader.integer("protocol")
      case "ref": ref = try reader.integer("ref")
      case "at": at = try reader.integer("at")
      case "awaited": awaited = try reader.string("awaited")
      case "outcome": outcome = try reader.string("outcome")
      case "durationNanoseconds": nanoseconds = try reader.integer("durationNanoseconds")
      case "step": number = try reader.integer("step")
      case "ran": ran = try reader.string("ran")
      case "virtualTimeNanoseconds": nanoseconds = try reader.integer("virtualTimeNanoseconds")
      default: try reader.skipValue()
      }
    }
    func required<T>(_ value: T?, _ key: StaticString) throws -> T {
      guard let value else { throw EventDecodingError.missingField("\(key)") }
      return value
    }
    try WorkerProtocol.check(Int(try required(version, "protocol")))
    self.ref = Int(try required(ref, "ref"))
    self.at = try required(at, "at")
    switch name {
    case "wait":
      kind = .wait(awaited: try required(awaited, "awaited"), outcome: try required(outcome, "outcome"),
                   nanoseconds: try required(nanoseconds, "durationNanoseconds"))
    case "step":
      kind = .step(number: Int(try required(number, "step")), ran: try required(ran, "ran"),
                   virtualNanoseconds: try required(nanoseconds, "virtualTimeNanoseconds"))
    case let other:
      throw EventDecodingError(reason: "unknown mark \"\(other)\"")
    }
  }

  /// `seconds` in whole nanoseconds; beyond ±292 years, the farthest 64 bits hold.
  private static func nanoseconds(_ seconds: Double) -> Int64 {
    let nanoseconds = (seconds * 1_000_000_000).rounded()
    if nanoseconds.isNaN { return 0 }
    return nanoseconds >= 0x1p63 ? .max : nanoseconds <= -0x1p63 ? .min : Int64(nanoseconds)
  }
  private static func seconds(_ nanoseconds: Int64) -> Double { Double(nanoseconds) / 1_000_000_000 }
}
