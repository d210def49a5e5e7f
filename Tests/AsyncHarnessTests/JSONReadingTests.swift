@testable @_spi(ForToolsIntegrationOnly) import AsyncHarness
import Foundation
import XCTest

/// The one JSON reader (`JSONReader`), behind `Event(jsonLine:)`, a worker's requests and
/// marks, and Swift Testing's records: whole, as a tree (`JSONValue.parse`), or member by member.
final class JSONReadingTests: XCTestCase {
  func testReadsEveryKindOfValueAndKeepsNumbersExact() {
    let text = #" {"a": [true, false, null, -0.5e+3, 18446744073709551615], "b": {"c": "é\u00e9\ud83e\udd8a\n\/"}, "d": {}, "e": []} "#
    XCTAssertEqual(JSONValue.parse(Array(text.utf8)), .object([
      "a": .array([.bool(true), .bool(false), .null, .number("-0.5e+3"), .number("18446744073709551615")]),
      "b": .object(["c": .string("éé🦊\n/")]),
      "d": .object([:]),
      "e": .array([]),
    ]))
  }

  func testAKeyGivenTwiceKeepsItsLastValue() {
    XCTAssertEqual(JSONValue.parse(Array(#"{"a": 1, "b": {"c": 2, "c": 3}, "a": "last"}"#.utf8)),
                   .object(["a": .string("last"), "b": .object(["c": .number("3")])]))
  }

  func testRefusesWhatIsNotOneJSONText() {
    let refused = [
      "", "{", #"{"a":1,}"#, "[1 2]", #"{"a" 1}"#, #""unterminated"#, "\"raw\ncontrol\"", "01", "-", "1.", "1e",
      #""\x""#, #""\ud83e""#, #""\u12""#, "tru", "{} {}", "nul",
      String(repeating: "[", count: 600) + String(repeating: "]", count: 600),
    ]
    for text in refused {
      XCTAssertNil(JSONValue.parse(Array(text.utf8)), text)
    }
  }

  /// A mark read member by member and a tree refuse the same text: the one reader reads both.
  func testAMarkAndATreeRefuseTheSameText() {
    let mark = #""mark":"wait","protocol":7,"ref":1,"at":2,"awaited":"a","outcome":"b","durationNanoseconds":3"#
    let broken = ["[1 2]", "[1,]", "[,1]", #"{"a":1,}"#, #"{"a" 1}"#, #"{1:2}"#, "01", "-", "1.", "1e", "+1", "tru", "nul",
                  #""\x""#, #""\ud83e""#, #""\u12""#, "\"raw\ncontrol\"", #""unterminated"#, "{", "[", ""]
    for value in broken {
      let tree = "{" + #""future":"# + value + "}"
      XCTAssertNil(JSONValue.parse(Array(tree.utf8)), tree)
      let line = "{" + mark + #","future":"# + value + "}"
      XCTAssertThrowsError(try TimelineMark(line: Array(line.utf8)), line) { error in
        XCTAssertEqual(error as? EventDecodingError, JSONReader.malformed, line)
      }
    }
    for value in ["[1, 2]", #"{"a": {"b": [null, true, false, -0.5e+3]}}"#, #""\u00e9\ud83e\udd8a""#, "0", "-12.5E-3"] {
      let line = "{" + mark + #","future":"# + value + "}"
      XCTAssertNotNil(JSONValue.parse(Array(line.utf8)), line)
      XCTAssertNotNil(try TimelineMark(line: Array(line.utf8)), line)
    }
  }

  /// Nesting is refused past `JSONReader.maximumDepth` objects and arrays, whether the text is
  /// read as a tree or skipped inside a mark (whose own object is one of them).
  func testNestingDeeperThanTheMaximumIsRefused() {
    func nested(_ depth: Int) -> String { String(repeating: "[", count: depth) + String(repeating: "]", count: depth) }
    let maximum = JSONReader.maximumDepth
    XCTAssertNotNil(JSONValue.parse(Array(nested(maximum).utf8)))
    XCTAssertNil(JSONValue.parse(Array(nested(maximum + 1).utf8)))
    let mark = #"{"mark":"wait","protocol":7,"ref":1,"at":2,"awaited":"a","outcome":"b","durationNanoseconds":3,"future":"#
    XCTAssertNotNil(try TimelineMark(line: Array((mark + nested(maximum - 1) + "}").utf8)))
    XCTAssertThrowsError(try TimelineMark(line: Array((mark + nested(maximum) + "}").utf8))) { error in
      XCTAssertEqual(error as? EventDecodingError, JSONReader.malformed)
    }
  }

  /// A key written with escapes is the key it decodes to, as a tree's key and as a mark's.
  func testEscapedKeysAreTheKeysTheyDecodeTo() throws {
    XCTAssertEqual(JSONValue.parse(Array(#"{"a\"b": 1, "\u0063": 2, "c": 3, "\u00e9": 4}"#.utf8)),
                   .object(["a\"b": .number("1"), "c": .number("3"), "é": .number("4")]))
    let line = #"{"\u006dark":"wait","protocol":7,"ref":1,"r\u0065f":7,"at":2,"awaited":"a","outcome":"b","durationNanoseconds":3}"#
    XCTAssertEqual(try XCTUnwrap(TimelineMark(line: Array(line.utf8))).ref, 7, "a key given twice keeps its last value")
    XCTAssertNil(try TimelineMark(line: Array(#"{"\u006dar":"wait"}"#.utf8)), "a line whose first key is not mark is no mark")
  }

  func testEventErrorsNameTheField() {
    let stamp = #""timestamp":"2026-11-23T03:34:14Z","version":2"#
    let cases = [
      (#"{"kind":"testStarted","test":{"suite":"S","waiter":"w","repetition":1},\#(stamp)}"#, "missing field test.name"),
      (#"{"kind":"testStarted","test":{"suite":"S","name":"t","waiter":"w","repetition":"1"},\#(stamp)}"#,
       "field test.repetition has the wrong type"),
      (#"{"kind":"testEnded","duration":1,"result":{"issues":[],"verdict":"fine"},"test":{"suite":"S","name":"t","waiter":"w","repetition":1},\#(stamp)}"#,
       "field result.verdict is invalid"),
      (#"{"kind":"testEnded","duration":1,"result":{"issues":[{"kind":"warning"}],"verdict":"passed"},"test":{"suite":"S","name":"t","waiter":"w","repetition":1},\#(stamp)}"#,
       "missing field result.issues.0.message"),
      (#"{"kind":"testEnded","duration":1,"result":{"issues":[],"scheduleTrace":"41","verdict":"failed"},"test":{"suite":"S","name":"t","waiter":"w","repetition":1},\#(stamp)}"#,
       "field result.scheduleTrace has the wrong type"),
      ("[1]", "not a JSON object"),
    ]
    for (line, reason) in cases {
      XCTAssertThrowsError(try Event(jsonLine: line), line) { error in
        XCTAssertEqual(error as? EventDecodingError, EventDecodingError(reason: reason), line)
      }
    }
  }

  /// `JSONDecoder` reads events as `Event(jsonLine:)` does, 64-bit seeds included.
  func testJSONDecoderReadsEventsToo() throws {
    let event = Event(.runStarted(RunInfo(seed: UInt64.max, repetitions: 2, waiters: ["a"])),
                      timestamp: Date(timeIntervalSince1970: 1_800_000_000))
    XCTAssertEqual(try JSONDecoder().decode(Event.self, from: Data(event.jsonLine.utf8)), event)
  }

  /// A scheduled test's attempt carries its steps (`scheduleTrace`), read back by both readers.
  func testAScheduleTraceRoundTrips() throws {
    let id = TestID(suite: "S", name: "t", host: "scheduled", schedule: "7:pct3:335509")
    let result = TestResult(verdict: .failed, scheduleTrace: ScheduleTrace(steps: 41, fingerprint: 0x0be311))
    let event = Event(.testEnded(id, TestEnd(once: result, duration: 0.5)), timestamp: Date(timeIntervalSince1970: 1_800_000_000))
    XCTAssertTrue(event.jsonLine.contains(#""outcome":"failed","scheduleTrace":"41-0be311"}]"#), event.jsonLine)
    XCTAssertEqual(try Event(jsonLine: event.jsonLine), event)
    XCTAssertEqual(try JSONDecoder().decode(Event.self, from: Data(event.jsonLine.utf8)), event)
    XCTAssertEqual(result.replayToken(of: id), "7:pct3:335509:41-0be311")
  }

  func testWorkerRequestsReadBackWhatWasWritten() throws {
    var configuration = Configuration()
    configuration.timeLimit = .milliseconds(1500)
    configuration.defaultTimeout = .milliseconds(250)
    configuration.explorations = 2
    configuration.waiters = .named("scheduled")
    configuration.reportsWaits = true
    let suite = Suite("Quote \" and \\ suite") { Test("é 🦊 test\n") { _ in } }
    let plan = try Plan(suites: [suite], configuration: configuration, registry: .builtIn)
    let catalog = WorkerCatalog([suite], registry: .builtIn)
    let steps = plan.plannedTests(of: plan.entries[0], repetition: 2)
    XCTAssertEqual(steps.count, 2)
    for step in steps {
      let line = WorkerRequest.run(WorkerRunRequest(step, ref: 1)).line
      XCTAssertEqual(line.last, 0x0A)
      XCTAssertFalse(line.dropLast().contains(0x0A))
      let request = try WorkerRequest(line: line.dropLast())
      XCTAssertEqual(request, .run(WorkerRunRequest(step, ref: 1)))
      guard case .run(let received) = request else { return XCTFail("not a run request") }
      let found = try catalog.plannedTest(for: received).get()
      XCTAssertEqual(found.id, step.id)
      XCTAssertEqual(found.position, step.position)
      XCTAssertEqual(found.schedule, step.schedule)
      XCTAssertEqual(found.timeLimit, .milliseconds(1500))
      XCTAssertEqual(found.defaultTimeout, .milliseconds(250))
      XCTAssertTrue(found.reportsWaits)
    }
    // Without waits asked for, the step says nothing of them, and the worker reports none.
    let quiet = try Plan(suites: [suite], configuration: Configuration(), registry: .builtIn)
    let line = WorkerRequest.run(WorkerRunRequest(quiet.plannedTests(of: quiet.entries[0], repetition: 1)[0], ref: 1)).line
    XCTAssertFalse(String(decoding: line, as: UTF8.self).contains("reportsWaits"))
    guard case .run(let received) = try WorkerRequest(line: line.dropLast()) else { return XCTFail("not a run request") }
    XCTAssertFalse(try catalog.plannedTest(for: received).get().reportsWaits)
    for request in [WorkerRequest.resume, .stop] {
      XCTAssertEqual(try WorkerRequest(line: request.line), request)
    }
  }

  /// Tests are found by position: two with one name each run their own body.
  func testAWorkerFindsTestsByPositionWhateverTheirNames() throws {
    let suites = [Suite("Twice") { for number in 0..<3 { Test(number == 2 ? "other" : "same") { t in t.log("\(number)") } } }]
    let plan = try Plan(suites: suites, configuration: Configuration(), registry: .builtIn)
    let catalog = WorkerCatalog(suites, registry: .builtIn)
    let positions = try plan.plannedTests(of: plan.entries[0], repetition: 1).map { try catalog.plannedTest(for: WorkerRunRequest($0, ref: 1)).get().position }
    XCTAssertEqual(positions.map(\.test), [0, 1, 2])
  }

  func testAWorkerSaysWhyItCannotRunAStep() throws {
    let suite = Suite("Suite") { Test("test") { _ in } }
    let plan = try Plan(suites: [suite], configuration: Configuration(), registry: .builtIn)
    var request = WorkerRunRequest(plan.plannedTests(of: plan.entries[0], repetition: 1)[0], ref: 1)
    request.position.test = 4
    XCTAssertEqual("\(WorkerCatalog([suite], registry: .builtIn).plannedTest(for: request).map(\.id))",
                   "failure(the worker has no test 5 in suite 1 (Suite/test): its suites differ from its parent's)")
    request.position.test = 0
    request.id.name = "renamed"
    XCTAssertEqual("\(WorkerCatalog([suite], registry: .builtIn).plannedTest(for: request).map(\.id))",
                   "failure(the worker's suites differ from its parent's: test 1 of suite 1 is Suite/test in the worker, "
                     + "Suite/renamed in the parent; suites must be built the same way in every process)")
  }

  func testWorkerRepliesReadBackAndOtherVersionsAreRefused() throws {
    let id = TestID(suite: "S", name: "t", host: "semaphore", attempt: 2)
    let trace = ScheduleTrace(steps: 41, fingerprint: 0x0be311, firstOutsideStep: 12)
    for reply in [WorkerReply.returned(id, duration: 0.25, trace: nil, paused: true, retire: nil),
                  .returned(id, duration: 1, trace: trace, paused: false, retire: .exceededTimeLimit),
                  .cannotRun(id, reason: "why")] {
      guard case .reply(let read) = try WorkerMessage(line: reply.line) else { return XCTFail("not a reply") }
      XCTAssertEqual(read, reply)
      if case .returned(_, _, let readTrace?, _, _) = read {
        XCTAssertEqual(readTrace.description, "41-0be311")
        XCTAssertEqual(readTrace.firstOutsideStep, 12, "the step outside work first arrived before travels too")
      }
    }
    let event = Event(.outputCaptured(id, "text"))
    guard case .event(let read) = try WorkerMessage(line: event.jsonLineBytes) else { return XCTFail("not an event") }
    XCTAssertEqual(read.jsonLine, event.jsonLine)
    XCTAssertThrowsError(try WorkerRequest(line: Array(#"{"protocol":1,"request":"stop"}"#.utf8))) {
      XCTAssertEqual("\($0)", "not an AsyncHarness event: worker protocol version 1; this build speaks version 7")
    }
  }
}

private typealias Plan = Runner.Plan
