import AsyncHarness
import Foundation
import XCTest

/// Issue 43: streams of schema 1 and 2 read as schema 3 says a run (`EventStream`), and the
/// one-line reader's answer to a line that is no test's end.
final class EventStreamTests: XCTestCase {
  private static let test = #"{"attempt":ATTEMPT,"name":"loads","repetition":1,"suite":"Loader","waiter":"semaphore"}"#

  private func line(_ kind: String, attempt: Int = 1, _ fields: String, version: Int = 2) -> String {
    #"{"kind":"\#(kind)",\#(fields)"test":\#(Self.test.replacingOccurrences(of: "ATTEMPT", with: "\(attempt)")),"#
      + #""timestamp":"2026-11-23T08:00:0\#(attempt).000Z","version":\#(version)}"#
  }

  private func issue(_ message: String) -> String {
    #""issue":{"kind":"expectationFailed","message":"\#(message)"},"#
  }

  private func ended(attempt: Int, verdict: String, issues: [String], willRetry: Bool) -> String {
    let list = issues.map { #"{"kind":"expectationFailed","message":"\#($0)"}"# }.joined(separator: ",")
    return line("testEnded", attempt: attempt,
                #""duration":0.25,"result":{"issues":[\#(list)],"verdict":"\#(verdict)"\#(willRetry ? #","willRetry":true"# : "")},"#)
  }

  /// A schema 2 test that failed, then passed on its retry: the first attempt's end is held
  /// back, and the test ends once, with both attempts, each carrying its issues.
  func testARetriedTestOfSchemaTwoEndsOnceWithEveryAttempt() throws {
    var stream = EventStream()
    let lines = [
      line("testStarted", #""lane":2,"#),
      line("issueRecorded", issue("first")),
      ended(attempt: 1, verdict: "failed", issues: ["first"], willRetry: true),
      line("testStarted", attempt: 2, #""lane":1,"#),
      ended(attempt: 2, verdict: "flaky", issues: [], willRetry: false),
    ]
    let events = try lines.map { try stream.read(line: $0) }
    XCTAssertEqual(events.map(\.count), [1, 1, 0, 1, 1], "the retried attempt's end is no event")
    guard case .testEnded(let test, let end)? = events.last?.first?.kind else { return XCTFail("\(events)") }
    XCTAssertEqual(test.attempt, 2)
    XCTAssertEqual(end, TestEnd(verdict: .flaky, attempts: [
      TestAttempt(number: 1, outcome: .failed, duration: 0.25, issues: [Issue(kind: .expectationFailed, message: "first")],
                  lane: 2),
      TestAttempt(number: 2, outcome: .passed, duration: 0.25, issues: [], lane: 1),
    ]))
  }

  /// An issue that only a result held (no `issueRecorded` said it) comes as one, once, just
  /// before the test's end; one that a line said is not repeated.
  func testAnIssueOnlyAResultHeldIsSaidOnceBeforeTheEnd() throws {
    var stream = EventStream()
    _ = try stream.read(line: line("testStarted", ""))
    _ = try stream.read(line: line("issueRecorded", issue("said")))
    let events = try stream.read(line: ended(attempt: 1, verdict: "failed", issues: ["said", "only in the result"], willRetry: false))
    XCTAssertEqual(events.map(\.kind.name), ["issueRecorded", "testEnded"])
    guard case .issueRecorded(_, let issue) = events[0].kind, case .testEnded(_, let end) = events[1].kind else {
      return XCTFail("\(events)")
    }
    XCTAssertEqual(issue.message, "only in the result")
    XCTAssertEqual(end.lastAttempt.issueCount, 2)
    XCTAssertEqual(end.lastAttempt.issues.map(\.message), ["said", "only in the result"])
  }

  /// Issue 52: a test's end carries each attempt's issues. A schema 3 stream written before
  /// it did (its `testEnded` counting them only) reads back so too: the issues its
  /// `issueRecorded` lines said go to their attempts, a late signal to none; an end that
  /// carries them is read as it is.
  func testASchemaThreeEndThatOnlyCountsItsIssuesGetsThemFromItsLines() throws {
    let timestamp = Date(timeIntervalSince1970: 0)
    var first = TestID(suite: "S", name: "t", host: "w")
    first.attempt = 1
    var second = first
    second.attempt = 2
    let broke = Issue(kind: .expectationFailed, message: "broke")
    let late = Issue(kind: .lateSignal, message: "late")
    let counted = TestEnd(verdict: .flaky, attempts: [
      TestAttempt(number: 1, outcome: .failed, duration: 0.25, issueCount: 1),
      TestAttempt(number: 2, outcome: .passed, duration: 0.25, issueCount: 0),
    ])
    var stream = EventStream()
    let lines: [Event.Kind] = [.testStarted(first), .issueRecorded(first, broke), .issueRecorded(first, late),
                               .testStarted(second), .testEnded(second, counted)]
    let events = try lines.flatMap { try stream.read(line: Event($0, timestamp: timestamp).jsonLine) }
    guard case .testEnded(_, let end)? = events.last?.kind else { return XCTFail("\(events)") }
    XCTAssertEqual(end.attempts.map(\.issues), [[broke], []])
    XCTAssertEqual(end.attempts.map(\.issueCount), [1, 0])
    // An end that carries its issues is the event as written.
    var complete = counted
    complete.attempts[0].issues = [broke]
    let whole = Event(.testEnded(second, complete), timestamp: timestamp)
    XCTAssertTrue(whole.jsonLine.contains(#""recorded":[{"kind":"expectationFailed","message":"broke"}]"#), whole.jsonLine)
    var fresh = EventStream()
    XCTAssertEqual(try fresh.read(line: whole.jsonLine), [whole])
  }

  /// A schema 3 line is the event itself; every other line of an older stream too.
  func testLinesOfSchemaThreeAndOtherKindsAreReadAsTheyAre() throws {
    var stream = EventStream()
    let started = Event(.testStarted(TestID(suite: "S", name: "t", host: "w")), timestamp: Date(timeIntervalSince1970: 0), lane: 1)
    XCTAssertEqual(try stream.read(line: started.jsonLine), [started])
    XCTAssertEqual(try stream.read(line: line("outputCaptured", #""output":"hi","#)).map(\.kind.name), ["outputCaptured"])
    XCTAssertThrowsError(try stream.read(line: "not json")) { error in
      XCTAssertEqual("\(error)", "not an AsyncHarness event: not JSON")
    }
  }

  /// `Event(jsonLine:)` reads a schema 2 test's last end as a test that ran once, and refuses
  /// a retried attempt's end, which is no test's end, naming the reader that joins them.
  func testTheOneLineReaderReadsALastEndAndRefusesARetriedOne() throws {
    guard case .testEnded(_, let end) = try Event(jsonLine: ended(attempt: 1, verdict: "failed", issues: ["x"], willRetry: false)).kind
    else { return XCTFail("not testEnded") }
    XCTAssertEqual(end, TestEnd(verdict: .failed, attempts: [
      TestAttempt(number: 1, outcome: .failed, duration: 0.25, issues: [Issue(kind: .expectationFailed, message: "x")]),
    ]))
    XCTAssertThrowsError(try Event(jsonLine: ended(attempt: 1, verdict: "failed", issues: [], willRetry: true))) { error in
      XCTAssertEqual("\(error)", "not an AsyncHarness event: the testEnded of an attempt that ran again (schema version 2); "
        + "read the stream with EventStream, which joins a test's attempts")
    }
    let wrong = ended(attempt: 1, verdict: "failed", issues: [], willRetry: false).replacingOccurrences(of: #""verdict""#, with: #""willRetry":1,"verdict""#)
    XCTAssertThrowsError(try Event(jsonLine: wrong)) { error in
      XCTAssertEqual("\(error)", "not an AsyncHarness event: field result.willRetry has the wrong type")
    }
  }
}
