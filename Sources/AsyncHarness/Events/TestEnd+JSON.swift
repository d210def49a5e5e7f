// How a test's end and its attempts read from and write to a `testEnded` line.

extension TestEnd {
  /// Reads the end of a test from the fields of its `testEnded` event.
  init(json: JSONFields) throws {
    let attempts = try json.array("attempts") { try TestAttempt(json: JSONFields($0, path: $1)) }
    guard !attempts.isEmpty else { throw EventDecodingError(reason: "field attempts is empty") }
    self.init(verdict: try json.raw("verdict"), reason: try json.optionalString("reason"), attempts: attempts)
  }
}

extension TestAttempt {
  init(json: JSONFields) throws {
    self.init(number: try json.number("attempt"), outcome: try json.raw("outcome"), duration: try json.number("duration"),
              issueCount: try json.number("issues"), lane: try json.optionalNumber("lane"),
              scheduleTrace: try ScheduleTrace(json: json))
    if json.optional("started") != nil { started = try Event.timestamp(of: json, field: "started") }
    if json.optional("recorded") != nil {
      issues = try json.array("recorded") { try Issue(json: JSONFields($0, path: $1)) }
    }
  }
}

extension ScheduleTrace {
  /// The `scheduleTrace` of an attempt's fields, when it has one.
  init?(json: JSONFields) throws {
    guard let text = try json.optionalString("scheduleTrace") else { return nil }
    guard let trace = ScheduleTrace(text) else { throw json.wrongType("scheduleTrace") }
    self = trace
  }
}

extension TestAttempt {
  func write(to json: inout JSONText) {
    json.object { json in
      json.field("attempt", self.number)
      json.field("duration", self.duration)
      json.field("issues", self.issueCount)
      if let lane = self.lane { json.field("lane", lane) }
      json.field("outcome", self.outcome.rawValue)
      if !self.issues.isEmpty { json.field("recorded") { json in json.array(self.issues) { $1.write(to: &$0) } } }
      if let trace = self.scheduleTrace { json.field("scheduleTrace", trace.description) }
      if let started = self.started { json.field("started") { $0.timestamp(started) } }
    }
  }
}
