@testable import AsyncHarness
import Foundation
import XCTest

/// A worker's marks (``TimelineMark``): written with `mark` first and integer times, told from
/// other lines by that first key, and read member by member (``JSONReader``).
final class TimelineMarkTests: XCTestCase {
  private let test = TestID(suite: "S", name: "t", host: "semaphore")
  private let at = Date(timeIntervalSince1970: 1_795_680_000.125431)

  private func read(_ text: String) throws -> WorkerMessage { try WorkerMessage(line: Array(text.utf8)) }

  private func mark(_ text: String) throws -> TimelineMark {
    guard case .mark(let mark) = try read(text) else { throw EventDecodingError(reason: "not a mark: \(text)") }
    return mark
  }

  private func error(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> String {
    do {
      _ = try read(text)
      XCTFail("read \(text)", file: file, line: line)
      return ""
    } catch {
      return "\(error)"
    }
  }

  func testAWaitAndAStepTravelAsMarksAndComeBackAsTheirEvents() throws {
    let events = [
      Event(.waitEnded(test, awaited: #"the wait for "loaded" ⏳"#, outcome: "timedOut", duration: 0.002_5), timestamp: at),
      Event(.scheduleStep(test, step: 3, ran: "task #2", virtualTime: 0.5), timestamp: at),
    ]
    for event in events {
      let sent = try XCTUnwrap(TimelineMark(event, ref: 17))
      var text = JSONText()
      sent.write(to: &text)
      let line = text.array
      XCTAssertTrue(line.starts(with: Array(#"{"mark":""#.utf8)), "a mark's first member is mark")
      XCTAssertEqual(line.last, 0x0A, "a line ends with its newline")
      guard case .mark(let received) = try WorkerMessage(line: line.dropLast()) else { return XCTFail("not a mark") }
      XCTAssertEqual(received, sent)
      XCTAssertEqual(received.event(of: test).jsonLine, event.jsonLine)
    }
    XCTAssertNil(TimelineMark(Event(.outputCaptured(test, "text")), ref: 1), "only waits and steps are marks")
  }

  func testTimesTravelInWholeNanosecondsAndClampBeyondWhatSixtyFourBitsHold() throws {
    let wait = try XCTUnwrap(TimelineMark(Event(.waitEnded(test, awaited: "a", outcome: "completed", duration: 1.234_567_890_4), timestamp: at), ref: 1))
    XCTAssertEqual(wait.kind, .wait(awaited: "a", outcome: "completed", nanoseconds: 1_234_567_890))
    XCTAssertEqual(wait.at, 1_795_680_000_125_431)
    let far = try XCTUnwrap(TimelineMark(Event(.scheduleStep(test, step: 1, ran: "main", virtualTime: 1e12), timestamp: at), ref: 1))
    XCTAssertEqual(far.kind, .step(number: 1, ran: "main", virtualNanoseconds: .max))
  }

  func testMembersAfterMarkMayComeInAnyOrderWithSpacesEscapesAndUnknownOnes() throws {
    let mark = try mark(#" { "mark" : "step", "virtualTimeNanoseconds": 500000000, "future": {"x": [1, "}"]}, "ran": "t\u0061sk", "\u0073tep": 3, "ref": -2, "at": 0, "protocol": 7 } "#)
    XCTAssertEqual(mark.ref, -2)
    XCTAssertEqual(mark.at, 0)
    XCTAssertEqual(mark.kind, .step(number: 3, ran: "task", virtualNanoseconds: 500_000_000))
  }

  func testOtherLinesAreStillReadWhole() throws {
    let event = Event(.outputCaptured(test, "text"))
    guard case .event(let read) = try read(event.jsonLine) else { return XCTFail("not an event") }
    XCTAssertEqual(read.jsonLine, event.jsonLine)
  }

  func testABrokenMarkSaysWhatIsWrong() {
    let wait = #""ref":1,"at":2,"awaited":"a","outcome":"completed","durationNanoseconds":3"#
    let cases = [
      (#"{"mark":"wait","protocol":7,"ref":1,"at":2,"awaited":"a","outcome":"completed"}"#, "missing field durationNanoseconds"),
      (#"{"mark":"wait","ref":1,"at":2,"awaited":"a","outcome":"completed","durationNanoseconds":3}"#, "missing field protocol"),
      (#"{"mark":"wait","protocol":5,"# + wait + "}", "worker protocol version 5; this build speaks version 7"),
      (#"{"mark":"nap","protocol":7,"# + wait + "}", #"unknown mark "nap""#),
      (#"{"mark":3,"protocol":7,"# + wait + "}", "field mark has the wrong type"),
      (#"{"mark":"wait","protocol":7,"ref":"1","at":2,"awaited":"a","outcome":"completed","durationNanoseconds":3}"#,
       "field ref has the wrong type"),
      (#"{"mark":"wait","protocol":7,"ref":1,"at":2.5,"awaited":"a","outcome":"completed","durationNanoseconds":3}"#,
       "field at has the wrong type"),
      (#"{"mark":"wait","protocol":7,"ref":1,"at":1e3,"awaited":"a","outcome":"completed","durationNanoseconds":3}"#,
       "field at has the wrong type"),
      (#"{"mark":"wait","protocol":7,"ref":1,"at":9223372036854775808,"awaited":"a","outcome":"completed","durationNanoseconds":3}"#,
       "field at has the wrong type"),
      (#"{"mark":"wait","protocol":7,"ref":1,"at":012,"awaited":"a","outcome":"completed","durationNanoseconds":3}"#,
       "field at has the wrong type"),
      (#"{"mark":"wait","protocol":7,"ref":1,"at":2,"awaited":null,"outcome":"completed","durationNanoseconds":3}"#,
       "field awaited has the wrong type"),
      (#"{"mark":"wait","protocol":7,"# + wait + "} x", "not a JSON object"),
      (#"{"mark":"wait","protocol":7,"# + wait, "not a JSON object"),
      (#"{"mark":"wait","protocol":7,"# + wait + ",}", "not a JSON object"),
      (#"{"protocol":7,"mark":"wait","# + wait + "}", "a mark's first member is not mark"),
      (#"{"protocol":4,"mark":"wait","ref":1,"at":2,"awaited":"a","outcome":"completed","duration":0.5}"#,
       "worker protocol version 4; this build speaks version 7"),
    ]
    for (text, reason) in cases {
      XCTAssertEqual(error(text), "not an AsyncHarness event: \(reason)", text)
    }
  }

  func testTheSmallestAndLargestIntegersRead() throws {
    for (text, value) in [("-9223372036854775808", Int64.min), ("9223372036854775807", Int64.max), ("0", 0), ("-0", 0)] {
      let mark = try mark(#"{"mark":"wait","protocol":7,"ref":1,"at":"# + text + #","awaited":"a","outcome":"b","durationNanoseconds":0}"#)
      XCTAssertEqual(mark.at, value, text)
    }
  }
}
