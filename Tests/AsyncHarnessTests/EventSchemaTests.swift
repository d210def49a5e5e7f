@testable import AsyncHarness
import Foundation
import XCTest

/// Issue 22, the event schema written once: `Codable` on events and payloads goes through the
/// JSON Lines writer and reader, so `JSONEncoder`/`JSONDecoder` and the stream agree field for
/// field, and `docs/EVENTS.md` names every kind and field the writer writes.
final class EventSchemaTests: XCTestCase {
  private static let test = TestID(suite: "Race", name: "no race", host: "scheduled", repetition: 2, attempt: 3,
                                   schedule: "7:pct3:9f2c1a")
  private static let location = SourceLocation(fileID: "M/Race.swift", filePath: "/src/Race.swift", line: 12, column: 5)
  private static let issue = Issue(kind: .expectationFailed, message: "lost \"update\"\n", sourceLocation: location)
  /// A test's end after three attempts, each field of each set somewhere.
  private static let end = TestEnd(verdict: .failed, reason: "known", attempts: [
    TestAttempt(number: 1, outcome: .errored, duration: 0.125, issueCount: 2, lane: 1),
    TestAttempt(number: 2, outcome: .failed, duration: 0.5, issueCount: 0),
    TestAttempt(number: 3, outcome: .failed, duration: 0.25, issueCount: 1, lane: 2,
                scheduleTrace: ScheduleTrace(steps: 41, fingerprint: 0x0BE311)),
  ])
  private static var summary: Summary {
    var summary = Summary()
    summary.passed = 3
    summary.failed = 1
    summary.errored = 2
    summary.skipped = 4
    summary.knownIssues = 5
    summary.flaky = 6
    summary.outsideFailures = 7
    return summary
  }
  private static let run = RunInfo(seed: UInt64.max, jitterSeed: 7, repetitions: 3, waiters: ["semaphore", "scheduled"],
                                   shard: Shard(index: 2, count: 3))

  /// One event of every kind, each with every optional field set. The switch has no
  /// `default`: a kind added to `Event.Kind` does not compile here until it has a sample.
  private static var everyKind: [Event] {
    let timestamp = Date(timeIntervalSince1970: 1_795_000_000.125)
    let kinds: [Event.Kind] = [
      .runStarted(run), .suiteStarted(SuiteRun(suite: "Race", host: "scheduled")), .testStarted(test),
      .issueRecorded(test, issue), .outputCaptured(test, "out\u{1}put ✓"), .testSlow(test, elapsed: 2.5),
      .testEnded(test, end), .suiteEnded(SuiteRun(suite: "Race", host: "scheduled"), summary, duration: 1.5),
      .runEnded(summary, duration: 3.75), .workerReplaced(test, reason: "crashed"),
      .waitEnded(test, awaited: "the wait for \"loaded\"", outcome: "timedOut", duration: 0.5),
      .scheduleStep(test, step: 3, ran: "task #2", virtualTime: 1.5),
      .outsideFailure(OutsideFailure(place: .classTearDown, suite: SuiteRun(suite: "M.Class", host: "xctest"), issue: issue,
                                     suspects: ["M.Class/testA", "M.Class/testB"], afterTests: true)),
    ]
    for kind in kinds {
      switch kind {
      case .runStarted, .suiteStarted, .testStarted, .issueRecorded, .outputCaptured, .testSlow, .testEnded, .suiteEnded,
           .runEnded, .workerReplaced, .waitEnded, .scheduleStep, .outsideFailure: break
      // Written as `outputCaptured` (testSharedOutputIsWrittenAsTheOutputCapturedOfItsText).
      case .outputShared: break
      }
    }
    return kinds.map { kind in
      switch kind {
      case .testStarted, .workerReplaced: Event(kind, timestamp: timestamp, lane: 2)
      default: Event(kind, timestamp: timestamp)
      }
    }
  }

  private func json(_ data: some Collection<UInt8>) throws -> JSONValue {
    try XCTUnwrap(JSONValue.parse(data))
  }

  func testEveryKindReadsBackTheSameThroughCodableAndTheJSONLinesWriter() throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    for event in Self.everyKind {
      let encoded = try encoder.encode(event)
      XCTAssertEqual(try json(encoded), try json(Array(event.jsonLine.utf8)), "\(event.kind.name)")
      XCTAssertEqual(try JSONDecoder().decode(Event.self, from: encoded), event)
      XCTAssertEqual(try Event(jsonLine: event.jsonLine), event)
      XCTAssertEqual(try Event(jsonLine: String(decoding: encoded, as: UTF8.self)), event)
    }
  }

  /// Issue 52: output stored once for tests side by side is, on the stream, the
  /// `outputCaptured` event of its whole text, and reads back as that.
  func testSharedOutputIsWrittenAsTheOutputCapturedOfItsText() throws {
    let timestamp = Date(timeIntervalSince1970: 1_795_000_000.125)
    let shared = Event(.outputShared(Self.test, SharedOutput(pieces: ["[shared] one\n", "two ✓\n", "three"])), timestamp: timestamp)
    let captured = Event(.outputCaptured(Self.test, "[shared] one\ntwo ✓\nthree"), timestamp: timestamp)
    XCTAssertEqual(shared.jsonLine, captured.jsonLine)
    XCTAssertEqual(try Event(jsonLine: shared.jsonLine), captured)
    XCTAssertEqual(shared.kind.printedOutput?.pieces, ["[shared] one\n", "two ✓\n", "three"])
    XCTAssertEqual(captured.kind.printedOutput?.pieces, ["[shared] one\ntwo ✓\nthree"])
    XCTAssertEqual(shared.test, Self.test)
  }

  /// Each payload encoded alone is the object its event's line holds, and reads back equal.
  /// Issue 33: `lane` is an optional field of `testStarted` (and of `workerReplaced`) only:
  /// written when known, read back, absent from lines written before it existed (read as
  /// `nil`), and never read on another kind.
  func testTheLaneOfATestStartedIsOptional() throws {
    let timestamp = Date(timeIntervalSince1970: 1_795_000_000.125)
    let started = Event(.testStarted(Self.test), timestamp: timestamp, lane: 3)
    XCTAssertTrue(started.jsonLine.contains("\"lane\":3,"), started.jsonLine)
    XCTAssertEqual(try Event(jsonLine: started.jsonLine).lane, 3)
    let without = Event(.testStarted(Self.test), timestamp: timestamp)
    XCTAssertFalse(without.jsonLine.contains("lane"))
    XCTAssertNil(try Event(jsonLine: without.jsonLine).lane)
    let replaced = Event(.workerReplaced(Self.test, reason: "leakedWork"), timestamp: timestamp, lane: 5)
    XCTAssertTrue(replaced.jsonLine.hasPrefix("{\"kind\":\"workerReplaced\",\"lane\":5,\"reason\":\"leakedWork\",\"test\":"),
                  replaced.jsonLine)
    XCTAssertEqual(try Event(jsonLine: replaced.jsonLine), replaced)
    let slow = Event(.testSlow(Self.test, elapsed: 1), timestamp: timestamp).jsonLine
    let withLane = slow.replacingOccurrences(of: "\"kind\"", with: "\"lane\":4,\"kind\"")
    XCTAssertNil(try Event(jsonLine: withLane).lane)
  }

  func testEveryPayloadEncodesAsItsFieldInTheLine() throws {
    func check<T: Codable & Equatable>(_ value: T, in event: Event, field: String, line: UInt = #line) throws {
      let encoded = try JSONEncoder().encode(value)
      guard case .object(let fields) = try json(Array(event.jsonLine.utf8)) else { return XCTFail("not an object", line: line) }
      XCTAssertEqual(try json(encoded), fields[field], line: line)
      XCTAssertEqual(try JSONDecoder().decode(T.self, from: encoded), value, line: line)
    }
    let events = Self.everyKind
    try check(Self.run, in: events[0], field: "run")
    try check(Self.test, in: events[2], field: "test")
    try check(Self.issue, in: events[3], field: "issue")
    try check(Self.summary, in: events[8], field: "summary")
  }

  /// `TestID.host` and `SuiteRun.host` keep the schema's field name, `waiter`, in the line
  /// and through `Codable`.
  func testTheHostIsTheFieldWaiter() throws {
    let test = TestID(suite: "M.Ledger", name: "testBalances", host: "xctest")
    let suite = SuiteRun(suite: "M.Ledger", host: "xctest")
    for encoded in [try JSONEncoder().encode(test), try JSONEncoder().encode(suite)] {
      guard case .object(let fields) = try json(encoded) else { return XCTFail("not an object") }
      XCTAssertEqual(fields["waiter"], .string("xctest"))
      XCTAssertNil(fields["host"])
    }
    XCTAssertEqual(try JSONDecoder().decode(SuiteRun.self, from: JSONEncoder().encode(suite)), suite)
    let line = Event(.suiteStarted(suite), timestamp: Date(timeIntervalSince1970: 0)).jsonLine
    XCTAssertTrue(line.contains("\"waiter\":\"xctest\""), line)
    XCTAssertEqual(try Event(jsonLine: line).kind, .suiteStarted(suite))
  }

  /// Schema 3's `testEnded`: the verdict and every attempt, each counting its issues; no
  /// issue again, no absent optional.
  func testATestsEndSaysEachAttemptOnce() {
    XCTAssertEqual(Self.everyKind[6].jsonLine, #"{"attempts":[{"attempt":1,"duration":0.125,"issues":2,"lane":1,"outcome":"errored"},"#
      + #"{"attempt":2,"duration":0.5,"issues":0,"outcome":"failed"},{"attempt":3,"duration":0.25,"issues":1,"lane":2,"#
      + #""outcome":"failed","scheduleTrace":"41-0be311"}],"kind":"testEnded","reason":"known","test":{"attempt":3,"#
      + #""name":"no race","repetition":2,"schedule":"7:pct3:9f2c1a","suite":"Race","waiter":"scheduled"},"#
      + #""timestamp":"2026-11-18T11:06:40.125Z","verdict":"failed","version":3}"# + "\n")
    let passed = Event(.testEnded(Self.test, TestEnd(once: TestResult(verdict: .passed), duration: 0)),
                       timestamp: Date(timeIntervalSince1970: 0))
    XCTAssertTrue(passed.jsonLine.hasPrefix(#"{"attempts":[{"attempt":1,"duration":0.0,"issues":0,"outcome":"passed"}],"kind""#),
                  passed.jsonLine)
    let empty = passed.jsonLine.replacingOccurrences(of: #"{"attempt":1,"duration":0.0,"issues":0,"outcome":"passed"}"#, with: "")
    XCTAssertThrowsError(try Event(jsonLine: empty)) { error in
      XCTAssertEqual("\(error)", "not an AsyncHarness event: field attempts is empty")
    }
  }

  /// `JSONDecoder` rejects what the stream's reader rejects, with its message.
  func testDecodingFailsAsTheStreamReaderDoes() {
    let line = #"{"kind":"testStarted","test":{"name":"a","repetition":1,"suite":"S","waiter":"w"},"timestamp":"2026-11-23T08:00:00.125Z","version":4}"#
    XCTAssertThrowsError(try JSONDecoder().decode(Event.self, from: Data(line.utf8))) { error in
      XCTAssertEqual("\(error)", "not an AsyncHarness event: schema version 4; this build reads versions 1 to 3")
    }
    XCTAssertThrowsError(try JSONDecoder().decode(TestID.self, from: Data(#"{"name":"a"}"#.utf8))) { error in
      XCTAssertEqual("\(error)", "not an AsyncHarness event: missing field suite")
    }
  }

  /// `docs/EVENTS.md` lists every kind with exactly the fields the writer gives it, and every
  /// field of every payload: a kind or field added without its line there fails here.
  func testEventsMDDocumentsEveryKindAndField() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let text = try String(contentsOf: root.appendingPathComponent("docs/EVENTS.md"), encoding: .utf8)
    func quoted(_ text: Substring) -> Set<String> {
      Set(text.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) })
    }
    var documentedKinds: [String: Set<String>] = [:]
    for row in text.split(separator: "\n") where row.hasPrefix("| `") {
      let cells = row.split(separator: "|", omittingEmptySubsequences: false)
      guard cells.count > 3, let kind = quoted(cells[1]).first else { continue }
      documentedKinds[kind] = quoted(cells[2])
    }
    var payloads: [String: Set<String>] = [:]
    for bullet in text.components(separatedBy: "\n- **").dropFirst() {
      guard let end = bullet.range(of: "**") else { continue }
      let paragraph = bullet[end.upperBound...].components(separatedBy: "\n\n")[0]
      payloads[String(bullet[..<end.lowerBound])] = quoted(paragraph[...])
    }
    var writtenKinds: [String: Set<String>] = [:]
    for event in Self.everyKind {
      guard case .object(let fields) = try json(Array(event.jsonLine.utf8)) else { return XCTFail("not an object") }
      writtenKinds[event.kind.name] = Set(fields.keys).subtracting(["kind", "timestamp", "version"])
      for (name, value) in fields {
        // An array of payloads (a test's attempts) is checked object by object.
        let objects: [JSONObject] = switch value {
        case .object(let payload): [payload]
        case .array(let elements): elements.compactMap { if case .object(let payload) = $0 { payload } else { nil } }
        default: []
        }
        for payload in objects {
          let type = ["run": "RunInfo", "test": "TestID", "issue": "Issue", "attempts": "TestAttempt", "summary": "Summary"][name]
          let documented = payloads[type ?? name] ?? []
          // Objects inside a payload (a source location, a shard) are documented with it;
          // arrays hold other payloads (a result's issues), checked on their own.
          let nested = payload.values.flatMap { value -> [String] in
            if case .object(let inner) = value { Array(inner.keys) } else { [] }
          }
          XCTAssertEqual(Set(payload.keys).union(nested).subtracting(documented), [], "\(type ?? name) in EVENTS.md")
        }
      }
    }
    XCTAssertEqual(documentedKinds, writtenKinds)
  }
}
