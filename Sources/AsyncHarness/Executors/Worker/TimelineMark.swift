import Foundation

/// A wait of a step's test that ended, or a step its schedule took, as its worker sends it:
/// the two events a step that reports waits (``WorkerRunRequest/reportsWaits``) makes by the
/// thousand, each in a short line naming the step by its `ref` and stamped to the microsecond
/// (`at`, microseconds since 1970), where an event line would repeat the whole ``TestID`` and
/// stamp it to the millisecond. The parent turns each back into the `waitEnded` or `scheduleStep`
/// event of the step's test (``event(of:)``).
struct TimelineMark: Sendable, Equatable {
  enum Kind: Sendable, Equatable {
    /// A wait ended: what it awaited, how it ended, how long it took (seconds).
    case wait(awaited: String, outcome: String, duration: Double)
    /// The schedule took its step `number`, running `ran`, at `virtualTime` (seconds).
    case step(number: Int, ran: String, virtualTime: Double)
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
      kind = .wait(awaited: awaited, outcome: outcome, duration: duration)
    case .scheduleStep(_, let number, let ran, let virtualTime):
      kind = .step(number: number, ran: ran, virtualTime: virtualTime)
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
    case .wait(let awaited, let outcome, let duration):
      Event(.waitEnded(test, awaited: awaited, outcome: outcome, duration: duration), timestamp: timestamp)
    case .step(let number, let ran, let virtualTime):
      Event(.scheduleStep(test, step: number, ran: ran, virtualTime: virtualTime), timestamp: timestamp)
    }
  }

  /// The mark as one line, newline included.
  var line: [UInt8] {
    var json = JSONText()
    json.object { json in
      json.field("at", Int(at))
      switch kind {
      case .wait(let awaited, let outcome, let duration):
        json.field("awaited", awaited)
        json.field("duration", duration)
        json.field("mark", "wait")
        json.field("outcome", outcome)
        json.field("protocol", WorkerProtocol.version)
        json.field("ref", ref)
      case .step(let number, let ran, let virtualTime):
        json.field("mark", "step")
        json.field("protocol", WorkerProtocol.version)
        json.field("ran", ran)
        json.field("ref", ref)
        json.field("step", number)
        json.field("virtualTime", virtualTime)
      }
    }
    json.newline()
    return json.array
  }

  init(json: JSONFields) throws {
    ref = try json.number("ref")
    at = try json.number("at")
    switch try json.string("mark") {
    case "wait":
      kind = .wait(awaited: try json.string("awaited"), outcome: try json.string("outcome"), duration: try json.number("duration"))
    case "step":
      kind = .step(number: try json.number("step"), ran: try json.string("ran"), virtualTime: try json.number("virtualTime"))
    case let other:
      throw EventDecodingError(reason: "unknown mark \"\(other)\"")
    }
  }
}
