@testable import AsyncHarness
import Foundation
import XCTest

/// The hand-written JSON reader behind `Event(jsonLine:)` and a worker's requests.
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

  func testWorkerRequestsReadBackWhatWasWritten() throws {
    var configuration = Configuration()
    configuration.timeLimit = .milliseconds(1500)
    configuration.defaultTimeout = .milliseconds(250)
    configuration.explorations = 2
    configuration.waiters = .named("scheduled")
    let suite = Suite("Quote \" and \\ suite") { Test("é 🦊 test\n") { _ in } }
    let plan = try Plan(suites: [suite], configuration: configuration, registry: .builtIn)
    let catalog = WorkerCatalog([suite], registry: .builtIn)
    let steps = plan.steps(of: plan.entries[0], repetition: 2)
    XCTAssertEqual(steps.count, 2)
    for step in steps {
      let line = WorkerRequest(step).line
      XCTAssertEqual(line.last, 0x0A)
      XCTAssertFalse(line.dropLast().contains(0x0A))
      let request = try WorkerRequest(line: line.dropLast())
      XCTAssertEqual(request, WorkerRequest(step))
      let found = try catalog.step(for: request).get()
      XCTAssertEqual(found.id, step.id)
      XCTAssertEqual(found.schedule, step.schedule)
      XCTAssertEqual(found.timeLimit, .milliseconds(1500))
      XCTAssertEqual(found.defaultTimeout, .milliseconds(250))
    }
    var unknown = WorkerRequest(steps[0])
    unknown.test = "gone"
    XCTAssertEqual("\(catalog.step(for: unknown).map(\.id))", #"failure(the worker has no test Quote " and \ suite/gone)"#)
  }
}

private typealias Plan = Runner.Plan
