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

  /// Reads one line of a JSON Lines stream (schema version 1 or 2) back into an event.
  /// - Throws: ``EventDecodingError`` when the line is not an event this build knows
  ///   (an unknown kind, a newer schema version, a missing field, not JSON).
  public init(jsonLine line: some StringProtocol) throws {
    let decoder = JSONDecoder()
    do {
      self = try decoder.decode(Event.self, from: Data(line.utf8))
    } catch let error as EventDecodingError {
      throw error
    } catch {
      throw EventDecodingError(reason: Self.describe(error))
    }
  }

  private static func describe(_ error: any Error) -> String {
    switch error as? DecodingError {
    case .keyNotFound(let key, let context)?:
      "missing field \((context.codingPath + [key]).map(\.stringValue).joined(separator: "."))"
    case .typeMismatch(_, let context)?, .valueNotFound(_, let context)?:
      "field \(context.codingPath.map(\.stringValue).joined(separator: ".")) has the wrong type"
    case .dataCorrupted(let context)?:
      context.codingPath.isEmpty ? "not JSON" : "field \(context.codingPath.map(\.stringValue).joined(separator: ".")) is invalid"
    default:
      "\(error)"
    }
  }
}

/// A line that is not an event this build can read.
public struct EventDecodingError: Error, Equatable, CustomStringConvertible {
  /// What is wrong with it.
  public var reason: String

  /// Creates the error.
  public init(reason: String) { self.reason = reason }

  public var description: String { "not an AsyncHarness event: \(reason)" }
}

extension Event: Decodable {
  private enum Field: String, CodingKey {
    case version, kind, timestamp, run, suite, waiter, test, issue, output, result, summary, duration
  }

  public init(from decoder: any Decoder) throws {
    let json = try decoder.container(keyedBy: Field.self)
    let version = try json.decode(Int.self, forKey: .version)
    guard (1...Self.schemaVersion).contains(version) else {
      throw EventDecodingError(reason: "schema version \(version); this build reads versions 1 to \(Self.schemaVersion)")
    }
    let stamp = try json.decode(String.self, forKey: .timestamp)
    guard let timestamp = ISO8601Timestamp.date(from: stamp) else {
      throw EventDecodingError(reason: "timestamp \"\(stamp)\" is not ISO 8601")
    }
    func suiteRun() throws -> SuiteRun {
      SuiteRun(suite: try json.decode(String.self, forKey: .suite), waiter: try json.decode(String.self, forKey: .waiter))
    }
    func test() throws -> TestID { try json.decode(TestID.self, forKey: .test) }
    func duration() throws -> Double { try json.decode(Double.self, forKey: .duration) }
    let kind: Kind
    switch try json.decode(String.self, forKey: .kind) {
    case "runStarted": kind = .runStarted(try json.decode(RunInfo.self, forKey: .run))
    case "suiteStarted": kind = .suiteStarted(try suiteRun())
    case "testStarted": kind = .testStarted(try test())
    case "issueRecorded": kind = .issueRecorded(try test(), try json.decode(Issue.self, forKey: .issue))
    case "outputCaptured": kind = .outputCaptured(try test(), try json.decode(String.self, forKey: .output))
    case "testEnded":
      kind = .testEnded(try test(), try json.decode(TestResult.self, forKey: .result), duration: try duration())
    case "suiteEnded":
      kind = .suiteEnded(try suiteRun(), try json.decode(Summary.self, forKey: .summary), duration: try duration())
    case "runEnded": kind = .runEnded(try json.decode(Summary.self, forKey: .summary), duration: try duration())
    case let other: throw EventDecodingError(reason: "unknown kind \"\(other)\"")
    }
    self.init(kind, timestamp: timestamp)
  }
}

// MARK: The payloads, written in the field order of their Codable form, keys sorted.

extension JSONText {
  /// Writes `event` as one line of JSON, ending in a newline (see ``Event/jsonLine``).
  mutating func line(_ event: Event) {
    object { json in
      switch event.kind {
      case .runStarted(let run):
        json.field("kind", event.kind.name)
        json.field("run") { $0.runInfo(run) }
      case .suiteStarted(let suite):
        json.field("kind", event.kind.name)
        json.field("suite", suite.suite)
      case .testStarted(let test):
        json.field("kind", event.kind.name)
        json.field("test") { $0.testID(test) }
      case .issueRecorded(let test, let issue):
        json.field("issue") { $0.issue(issue) }
        json.field("kind", event.kind.name)
        json.field("test") { $0.testID(test) }
      case .outputCaptured(let test, let output):
        json.field("kind", event.kind.name)
        json.field("output", output)
        json.field("test") { $0.testID(test) }
      case .testEnded(let test, let result, let duration):
        json.field("duration", duration)
        json.field("kind", event.kind.name)
        json.field("result") { $0.testResult(result) }
        json.field("test") { $0.testID(test) }
      case .suiteEnded(let suite, let summary, let duration):
        json.field("duration", duration)
        json.field("kind", event.kind.name)
        json.field("suite", suite.suite)
        json.field("summary") { $0.summary(summary) }
      case .runEnded(let summary, let duration):
        json.field("duration", duration)
        json.field("kind", event.kind.name)
        json.field("summary") { $0.summary(summary) }
      }
      json.field("timestamp") { $0.timestamp(event.timestamp) }
      json.field("version", Event.schemaVersion)
      if case .suiteStarted(let suite) = event.kind { json.field("waiter", suite.waiter) }
      if case .suiteEnded(let suite, _, _) = event.kind { json.field("waiter", suite.waiter) }
    }
    newline()
  }

  fileprivate mutating func testID(_ test: TestID) {
    object { json in
      json.field("attempt", test.attempt)
      json.field("name", test.name)
      json.field("repetition", test.repetition)
      if let schedule = test.schedule { json.field("schedule", schedule) }
      json.field("suite", test.suite)
      json.field("waiter", test.waiter)
    }
  }

  fileprivate mutating func issue(_ issue: Issue) {
    object { json in
      json.field("kind", issue.kind.rawValue)
      json.field("message", issue.message)
      if let location = issue.sourceLocation {
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

  fileprivate mutating func testResult(_ result: TestResult) {
    object { json in
      json.field("issues") { json in json.array(result.issues) { $0.issue($1) } }
      if let reason = result.reason { json.field("reason", reason) }
      json.field("verdict", result.verdict.rawValue)
    }
  }

  fileprivate mutating func runInfo(_ run: RunInfo) {
    object { json in
      json.field("harnessVersion", run.harnessVersion)
      json.field("repetitions", run.repetitions)
      if let seed = run.seed { json.field("seed", seed) }
      json.field("waiters") { json in json.array(run.waiters) { $0.string($1) } }
    }
  }

  fileprivate mutating func summary(_ summary: Summary) {
    object { json in
      json.field("errored", summary.errored)
      json.field("failed", summary.failed)
      json.field("knownIssues", summary.knownIssues)
      json.field("passed", summary.passed)
      json.field("skipped", summary.skipped)
    }
  }
}
