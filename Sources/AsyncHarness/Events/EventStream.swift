import Foundation

/// Reads a JSON Lines event stream line by line, of any schema version this build reads, as
/// events of the current schema (``Event/schemaVersion``).
///
/// A line of version 3 is one event. Versions 1 and 2 ended each attempt of a test with a
/// `testEnded` of its own (`willRetry` on those that ran again) and repeated in it the issues
/// the attempt's `issueRecorded` lines had said. Here such a stream reads as version 3 says it:
/// an attempt that ran again is held back, and the test's last attempt gives its one
/// `testEnded`, with every attempt, each counting its issues; an issue of a result that no
/// `issueRecorded` line had said comes as one, just before it.
///
/// ```swift
/// var stream = EventStream()
/// for line in text.split(separator: "\n") {
///   for event in try stream.read(line: line) { try reporter.handle(event) }
/// }
/// ```
public struct EventStream {
  /// The attempts that started and whose test has not ended: their lane and the issues their
  /// `issueRecorded` lines said, which their test's `testEnded` carries (``TestAttempt/issues``).
  private var running: [TestID: (lane: Int?, issues: [Issue])] = [:]
  /// Attempts of version 1 and 2 streams that ended and ran again, until their test's end.
  private var retried: [TestID: TestAttempt] = [:]

  /// Creates a reader at the start of a stream.
  public init() {}

  /// Reads the stream's next line.
  /// - Parameter line: the line, with or without its newline.
  /// - Returns: the events it stands for, in order: none for a version 1 or 2 attempt that
  ///   ran again, else one, after the issues its result held that no line had said. A
  ///   `testEnded` carries the issues of each attempt (``TestAttempt/issues``), which the
  ///   stream said in the attempt's `issueRecorded` lines.
  /// - Throws: ``EventDecodingError`` when the line is not an event this build reads.
  public mutating func read(line: some StringProtocol) throws -> [Event] {
    try read(bytes: String(line).utf8)
  }

  /// Reads the stream's next line of UTF-8 bytes.
  mutating func read(bytes: some Collection<UInt8>) throws -> [Event] {
    guard let value = JSONValue.parse(bytes) else { throw EventDecodingError(reason: "not JSON") }
    let json = try JSONFields(value)
    guard try Event.version(of: json) >= 3 || json.string("kind") != "testEnded" else {
      return try readEarlierEnd(EarlierTestEnded(json: json))
    }
    let event = try Event(json: value)
    switch event.kind {
    case .testStarted(let test):
      running[test] = (event.lane, [])
    case .issueRecorded(let test, let issue) where issue.kind != .lateSignal:
      running[test]?.issues.append(issue)
    case .testEnded(let test, var end):
      for index in end.attempts.indices {
        var id = test
        id.attempt = end.attempts[index].number
        guard let told = running.removeValue(forKey: id), end.attempts[index].issues.isEmpty else { continue }
        end.attempts[index].issues = told.issues
      }
      return [Event(.testEnded(test, end), timestamp: event.timestamp, lane: event.lane)]
    default:
      break
    }
    return [event]
  }

  /// Reads the `testEnded` of a version 1 or 2 attempt: held back when it ran again, else the
  /// test's one `testEnded`, after the issues its result held that no line had said.
  private mutating func readEarlierEnd(_ ended: EarlierTestEnded) -> [Event] {
    let told = running.removeValue(forKey: ended.test)
    let untold = ended.issues.dropFirst(told?.issues.count ?? 0)
    let attempt = ended.attempt(lane: told?.lane, issues: (told?.issues ?? []) + untold)
    let untoldEvents = untold.map { Event(.issueRecorded(ended.test, $0), timestamp: ended.timestamp) }
    guard !ended.willRetry else {
      retried[ended.test] = attempt
      return untoldEvents
    }
    let earlier = (1..<max(1, attempt.number)).compactMap { number -> TestAttempt? in
      var id = ended.test
      id.attempt = number
      return retried.removeValue(forKey: id)
    }
    return untoldEvents + [ended.event(attempts: earlier + [attempt])]
  }
}

/// The `testEnded` of a version 1 or 2 stream: the end of one attempt, with its issues.
struct EarlierTestEnded {
  let test: TestID
  let timestamp: Date
  let verdict: Verdict
  let reason: String?
  let issues: [Issue]
  let willRetry: Bool
  let duration: Double
  let scheduleTrace: ScheduleTrace?

  /// Reads the fields of the line.
  /// - Throws: ``EventDecodingError`` naming a missing or wrong field.
  init(json: JSONFields) throws {
    test = try TestID(json: json.object("test"))
    timestamp = try Event.timestamp(of: json)
    duration = try json.number("duration")
    let result = try json.object("result")
    guard result.optional("willRetry").map({ if case .bool = $0 { true } else { false } }) ?? true else {
      throw result.wrongType("willRetry")
    }
    willRetry = result.optional("willRetry") == .bool(true)
    verdict = try result.raw("verdict")
    reason = try result.optionalString("reason")
    issues = try result.array("issues") { try Issue(json: JSONFields($0, path: $1)) }
    scheduleTrace = try ScheduleTrace(json: result)
  }

  /// The attempt the line ended, with the issues it recorded.
  func attempt(lane: Int?, issues: [Issue]) -> TestAttempt {
    TestAttempt(number: test.attempt, outcome: verdict == .flaky ? .passed : verdict, duration: duration,
                issues: issues, lane: lane, scheduleTrace: scheduleTrace)
  }

  /// The test's one `testEnded`, with `attempts`.
  func event(attempts: [TestAttempt]) -> Event {
    Event(.testEnded(test, TestEnd(verdict: verdict, reason: reason, attempts: attempts)), timestamp: timestamp)
  }
}
