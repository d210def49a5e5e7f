import Foundation

extension Event {
  /// The event as one line of JSON (schema ``schemaVersion``), ending in a newline: keys
  /// sorted, timestamps in ISO 8601 with milliseconds, UTC. Written directly, without
  /// `JSONEncoder`, so a stream of events costs little more than the text itself.
  public var jsonLine: String {
    String(decoding: jsonLineBytes, as: UTF8.self)
  }

  /// ``jsonLine`` as UTF-8 bytes.
  var jsonLineBytes: [UInt8] {
    var json = JSONText()
    json.line(self)
    return json.array
  }

  /// Reads one line of a JSON Lines stream back into an event: a line of schema version 3,
  /// or of versions 1 and 2 (read a whole stream of those with ``EventStream``, which joins a
  /// test's attempts into its one `testEnded`).
  /// - Parameter line: the line, with or without its newline.
  /// - Throws: ``EventDecodingError`` when the line is not an event this build knows
  ///   (an unknown kind, a newer schema version, a missing field, not JSON), and for the
  ///   `testEnded` of a version 1 or 2 attempt that ran again, which is no test's end.
  public init(jsonLine line: some StringProtocol) throws {
    try self.init(jsonLineBytes: String(line).utf8)
  }

  /// Reads one line of UTF-8 bytes (a worker's events arrive so).
  init(jsonLineBytes bytes: some Collection<UInt8>) throws {
    guard let value = JSONValue.parse(bytes) else { throw EventDecodingError(reason: "not JSON") }
    try self.init(json: value)
  }

  /// Reads an event from its JSON object.
  init(json value: JSONValue) throws {
    let json = try JSONFields(value)
    let version = try Self.version(of: json)
    if version < 3, try json.string("kind") == "testEnded" {
      let ended = try EarlierTestEnded(json: json)
      guard !ended.willRetry else {
        throw EventDecodingError(reason: "the testEnded of an attempt that ran again (schema version \(version)); "
          + "read the stream with EventStream, which joins a test's attempts")
      }
      self = ended.event(attempts: [ended.attempt(lane: nil, issues: ended.issues)])
      return
    }
    try self.init(currentSchema: json)
  }

  /// The version of the event `json` is, which this build must read.
  /// - Throws: ``EventDecodingError`` for a missing or newer version.
  static func version(of json: JSONFields) throws -> Int {
    let version: Int = try json.number("version")
    guard (1...Self.schemaVersion).contains(version) else {
      throw EventDecodingError(reason: "schema version \(version); this build reads versions 1 to \(Self.schemaVersion)")
    }
    return version
  }

  /// The timestamp of the event `json` is, or the time in its `field`.
  /// - Throws: ``EventDecodingError`` when it is missing or not ISO 8601.
  static func timestamp(of json: JSONFields, field: String = "timestamp") throws -> Date {
    let stamp = try json.string(field)
    guard let timestamp = ISO8601Timestamp.date(from: stamp) else {
      throw EventDecodingError(reason: "\(field) \"\(stamp)\" is not ISO 8601")
    }
    return timestamp
  }

  /// Reads an event of the current schema from its fields (a `testEnded` of version 1 or 2
  /// is read by ``EarlierTestEnded``).
  private init(currentSchema json: JSONFields) throws {
    let timestamp = try Self.timestamp(of: json)
    func suiteRun() throws -> SuiteRun { SuiteRun(suite: try json.string("suite"), host: try json.string("waiter")) }
    func test() throws -> TestID { try TestID(json: json.object("test")) }
    func duration() throws -> Double { try json.number("duration") }
    func summary() throws -> Summary { try Summary(json: json.object("summary")) }
    let kind: Kind
    switch try json.string("kind") {
    case "runStarted": kind = .runStarted(try RunInfo(json: json.object("run")))
    case "suiteStarted": kind = .suiteStarted(try suiteRun())
    case "testStarted": kind = .testStarted(try test())
    case "issueRecorded": kind = .issueRecorded(try test(), try Issue(json: json.object("issue")))
    case "outputCaptured": kind = .outputCaptured(try test(), try json.string("output"))
    case "testSlow": kind = .testSlow(try test(), elapsed: try json.number("elapsed"))
    case "waitEnded":
      kind = .waitEnded(try test(), awaited: try json.string("awaited"), outcome: try json.string("outcome"), duration: try duration())
    case "scheduleStep":
      kind = .scheduleStep(try test(), step: try json.number("step"), ran: try json.string("ran"), virtualTime: try json.number("virtualTime"))
    case "testEnded": kind = .testEnded(try test(), try TestEnd(json: json))
    case "suiteEnded": kind = .suiteEnded(try suiteRun(), try summary(), duration: try duration())
    case "runEnded": kind = .runEnded(try summary(), duration: try duration())
    case "workerReplaced": kind = .workerReplaced(try test(), reason: try json.string("reason"))
    case "outsideFailure": kind = .outsideFailure(try OutsideFailure(json: json, suite: try suiteRun()))
    case let other: throw EventDecodingError(reason: "unknown kind \"\(other)\"")
    }
    var lane: Int?
    switch kind {
    case .testStarted, .workerReplaced: lane = try json.optionalNumber("lane")
    default: break
    }
    self.init(kind, timestamp: timestamp, lane: lane)
  }
}

extension Event: Codable {
  /// Reads an event from any decoder (`JSONDecoder`), as ``init(jsonLine:)`` reads a line.
  /// - Throws: ``EventDecodingError`` as ``init(jsonLine:)`` does.
  public init(from decoder: any Decoder) throws { try self.init(mappedFrom: decoder) }

  /// Writes the event to any encoder (`JSONEncoder`) with the fields and values of its
  /// ``jsonLine``.
  public func encode(to encoder: any Encoder) throws { try encodeMapped(to: encoder) }
}

extension JSONValue: Decodable {
  init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if container.decodeNil() {
      self = .null
    } else if let bool = try? container.decode(Bool.self) {
      self = .bool(bool)
    } else if let text = try? container.decode(String.self) {
      self = .string(text)
    } else if let number = try? container.decode(UInt64.self) {
      self = .number(String(number))
    } else if let number = try? container.decode(Int64.self) {
      self = .number(String(number))
    } else if let number = try? container.decode(Double.self) {
      self = .number("\(number)")
    } else if let fields = try? container.decode([String: JSONValue].self) {
      self = .object(JSONObject(fields))
    } else {
      self = .array(try container.decode([JSONValue].self))
    }
  }
}

// MARK: The payloads, read from their JSON objects.

extension TestID {
  /// Reads an identifier; `attempt` is 1 when absent (schema version 1). Its ``TestID/host``
  /// is the field `waiter`.
  init(json: JSONFields) throws {
    self.init(suite: try json.string("suite"), name: try json.string("name"), host: try json.string("waiter"),
              repetition: try json.number("repetition"), attempt: try json.optionalNumber("attempt") ?? 1,
              schedule: try json.optionalString("schedule"))
  }
}

extension Issue {
  init(json: JSONFields) throws {
    let location = try json.optional("sourceLocation").map { _ in try json.object("sourceLocation") }
    self.init(kind: try json.raw("kind"), message: try json.string("message"), sourceLocation: try location.map { location in
      SourceLocation(fileID: try location.string("fileID"), filePath: try location.string("filePath"),
                     line: try location.number("line"), column: try location.number("column"))
    })
  }
}

extension RunInfo {
  init(json: JSONFields) throws {
    let shard = try json.optional("shard").map { _ in try json.object("shard") }
    self.init(harnessVersion: try json.string("harnessVersion"), seed: try json.optionalNumber("seed"),
              jitterSeed: try json.optionalNumber("jitterSeed"),
              repetitions: try json.number("repetitions"), waiters: try json.array("waiters") { value, path in
                guard case .string(let name) = value else { throw EventDecodingError.wrongType(path) }
                return name
              },
              shard: try shard.map { Shard(index: try $0.number("index"), count: try $0.number("count")) })
  }
}

extension Summary {
  init(json: JSONFields) throws {
    self.init()
    passed = try json.number("passed")
    failed = try json.number("failed")
    errored = try json.number("errored")
    skipped = try json.number("skipped")
    knownIssues = try json.number("knownIssues")
    flaky = try json.optionalNumber("flaky") ?? 0
    outsideFailures = try json.optionalNumber("outsideFailures") ?? 0
  }
}

extension OutsideFailure {
  /// Reads a failure outside every test from the fields of its event, reported under `suite`.
  init(json: JSONFields, suite: SuiteRun) throws {
    self.init(place: try json.raw("place"), suite: suite, issue: try Issue(json: json.object("issue")),
              suspects: try json.optional("suspects").map { _ in
                try json.array("suspects") { value, path in
                  guard case .string(let name) = value else { throw EventDecodingError.wrongType(path) }
                  return name
                }
              } ?? [],
              afterTests: try json.bool("afterTests"))
  }
}

/// A line that is not an event this build can read.
public struct EventDecodingError: Error, Equatable, CustomStringConvertible {
  /// What is wrong with it.
  public var reason: String

  /// Creates the error.
  package init(reason: String) { self.reason = reason }

  /// The message a user reads.
  public var description: String { "not an AsyncHarness event: \(reason)" }
}

// MARK: The events and payloads, written with their keys sorted (JSONMapped.swift: Codable uses the same).

extension JSONText {
  /// Appends `event` as one line of JSON, ending in a newline (see ``Event/jsonLine``), after
  /// the lines already written.
  mutating func line(_ event: Event) {
    object { json in
      switch event.kind {
      case .runStarted(let run):
        json.field("kind", event.kind.name)
        json.field("run", run)
      case .suiteStarted(let suite):
        json.field("kind", event.kind.name)
        json.field("suite", suite.suite)
      case .testStarted(let test):
        json.field("kind", event.kind.name)
        if let lane = event.lane { json.field("lane", lane) }
        json.field("test", test)
      case .issueRecorded(let test, let issue):
        json.field("issue", issue)
        json.field("kind", event.kind.name)
        json.field("test", test)
      case .outputCaptured(let test, let output):
        json.field("kind", event.kind.name)
        json.field("output", output)
        json.field("test", test)
      case .outputShared(let test, let output):
        json.field("kind", event.kind.name)
        json.field("output", output.text)
        json.field("test", test)
      case .testSlow(let test, let elapsed):
        json.field("elapsed", elapsed)
        json.field("kind", event.kind.name)
        json.field("test", test)
      case .waitEnded(let test, let awaited, let outcome, let duration):
        json.field("awaited", awaited)
        json.field("duration", duration)
        json.field("kind", event.kind.name)
        json.field("outcome", outcome)
        json.field("test", test)
      case .scheduleStep(let test, let step, let ran, let virtualTime):
        json.field("kind", event.kind.name)
        json.field("ran", ran)
        json.field("step", step)
        json.field("test", test)
        json.field("virtualTime", virtualTime)
      case .testEnded(let test, let end):
        json.field("attempts") { json in json.array(end.attempts) { $1.write(to: &$0) } }
        json.field("kind", event.kind.name)
        if let reason = end.reason { json.field("reason", reason) }
        json.field("test", test)
      case .suiteEnded(let suite, let summary, let duration):
        json.field("duration", duration)
        json.field("kind", event.kind.name)
        json.field("suite", suite.suite)
        json.field("summary", summary)
      case .runEnded(let summary, let duration):
        json.field("duration", duration)
        json.field("kind", event.kind.name)
        json.field("summary", summary)
      case .workerReplaced(let test, let reason):
        json.field("kind", event.kind.name)
        if let lane = event.lane { json.field("lane", lane) }
        json.field("reason", reason)
        json.field("test", test)
      case .outsideFailure(let failure):
        json.field("afterTests", failure.afterTests)
        json.field("issue", failure.issue)
        json.field("kind", event.kind.name)
        json.field("place", failure.place.rawValue)
        json.field("suite", failure.suite.suite)
        if !failure.suspects.isEmpty { json.field("suspects") { json in json.array(failure.suspects) { $0.string($1) } } }
      }
      json.field("timestamp") { $0.timestamp(event.timestamp) }
      if case .testEnded(_, let end) = event.kind { json.field("verdict", end.verdict.rawValue) }
      json.field("version", Event.schemaVersion)
      if case .suiteStarted(let suite) = event.kind { json.field("waiter", suite.host) }
      if case .suiteEnded(let suite, _, _) = event.kind { json.field("waiter", suite.host) }
      if case .outsideFailure(let failure) = event.kind { json.field("waiter", failure.suite.host) }
    }
    newline()
  }

  /// Writes `value`'s object as the field `key`.
  mutating func field(_ key: StaticString, _ value: some JSONMapped) { field(key) { value.write(to: &$0) } }
}

extension TestID: JSONMapped {
  func write(to json: inout JSONText) {
    json.object { json in
      json.field("attempt", self.attempt)
      json.field("name", self.name)
      json.field("repetition", self.repetition)
      if let schedule = self.schedule { json.field("schedule", schedule) }
      json.field("suite", self.suite)
      // The schema's name for the host, kept for compatibility.
      json.field("waiter", self.host)
    }
  }
}

extension Issue: JSONMapped {
  func write(to json: inout JSONText) {
    json.object { json in
      json.field("kind", self.kind.rawValue)
      json.field("message", json.messageLimit.map { CappedText.capped(self.message, limit: $0) } ?? self.message)
      if let location = self.sourceLocation {
        json.field("sourceLocation") { json in
          json.object { json in
            json.field("column", location.column)
            json.field("fileID", location.fileID)
            json.field("filePath", location.filePath)
            json.field("line", location.line)
          }
        }
      }
    }
  }
}

extension RunInfo: JSONMapped {
  func write(to json: inout JSONText) {
    json.object { json in
      json.field("harnessVersion", self.harnessVersion)
      if let jitterSeed = self.jitterSeed { json.field("jitterSeed", jitterSeed) }
      json.field("repetitions", self.repetitions)
      if let seed = self.seed { json.field("seed", seed) }
      if let shard = self.shard {
        json.field("shard") { json in json.object { $0.field("count", shard.count); $0.field("index", shard.index) } }
      }
      json.field("waiters") { json in json.array(self.waiters) { $0.string($1) } }
    }
  }
}

extension Summary: JSONMapped {
  func write(to json: inout JSONText) {
    json.object { json in
      json.field("errored", self.errored)
      json.field("failed", self.failed)
      json.field("flaky", self.flaky)
      json.field("knownIssues", self.knownIssues)
      if self.outsideFailures > 0 { json.field("outsideFailures", self.outsideFailures) }
      json.field("passed", self.passed)
      json.field("skipped", self.skipped)
    }
  }
}
