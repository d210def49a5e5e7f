@testable import AsyncHarness
import Foundation
import HarnessTestSupport
import XCTest

/// Issue 33, `--report-html`: how the page escapes text from tests, and its bounds (each text,
/// the failures that keep their output, the bars of the timeline), fed events directly; and a
/// run that did not end. (HTMLReportTests, beside the JUnit tests, parses whole pages back.)
final class HTMLReporterTests: TemporaryDirectoryTestCase {
  func testEveryTextIsEscapedAndEveryForbiddenCharacterShownVisibly() {
    XCTAssertEqual(HTMLWriter.escaped("<script>alert('x') & \"y\"</script>"),
                   "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;")
    XCTAssertEqual(HTMLWriter.escaped("tab\tnewline\nreturn\r"), "tab\tnewline\nreturn\r")
    XCTAssertEqual(HTMLWriter.escaped("\u{00}\u{07}\u{1B}[31m\u{1F}\u{7F}"), "␀␇␛[31m␟␡")
    let noncharacters = String(String.UnicodeScalarView([0xFDD0, 0xFDEF, 0xFFFE, 0xFFFF, 0x1FFFE].compactMap(Unicode.Scalar.init)))
    XCTAssertEqual(HTMLWriter.escaped("c1 \u{80}\u{85}\u{9F} nonchar \(noncharacters)"),
                   "c1 \u{FFFD}\u{FFFD}\u{FFFD} nonchar \u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}")
    XCTAssertEqual(HTMLWriter.escaped("plain é 日本 🙂 \u{A0}\u{FFFD}"), "plain é 日本 🙂 \u{A0}\u{FFFD}")
    var writer = HTMLWriter()
    writer.element("td", ["title": "a\"b<c>"], text: "<b>")
    XCTAssertEqual(writer.html, "<td title=\"a&quot;b&lt;c&gt;\">&lt;b&gt;</td>\n")
  }

  /// Each text keeps at most the output limit; only the first 100 failures keep their output;
  /// the timeline draws the 2,000 longest attempts and says how many it left out.
  func testThePageIsBounded() throws {
    let path = directory.appendingPathComponent("report.html").path
    let reporter = try HTMLReporter(path: path, title: "Bounded", outputLimit: 64)
    let start = Date(timeIntervalSince1970: 1_000_000)
    reporter.handle(Event(.runStarted(RunInfo(waiters: ["semaphore"])), timestamp: start))
    var time = start
    for index in 0..<2005 {
      let test = TestID(suite: "S", name: "t\(index)", host: "semaphore")
      reporter.handle(Event(.testStarted(test), timestamp: time, lane: 1))
      let failing = index < 101
      if failing { reporter.handle(Event(.outputCaptured(test, String(repeating: "o", count: 200)), timestamp: time)) }
      time += 0.001 * Double(index + 1)  // each attempt longer than the one before
      let result = failing ? TestResult(verdict: .failed, issues: [Issue(kind: .expectationFailed, message: String(repeating: "m", count: 100))])
        : TestResult(verdict: .passed)
      for kind in ended(test, result, duration: 0.001 * Double(index + 1)) { reporter.handle(Event(kind, timestamp: time)) }
    }
    reporter.handle(Event(.runEnded(Summary(), duration: time.timeIntervalSince(start)), timestamp: time))
    try reporter.finish()
    let page = try String(contentsOfFile: path, encoding: .utf8)
    XCTAssertEqual(page.components(separatedBy: "<span class=\"bar ").count - 1, 2000)
    XCTAssertTrue(page.contains("<p>2005 attempts in 1 lane over 2011.015s. The 5 shortest are not drawn: the page draws the 2000 longest.</p>"))
    XCTAssertFalse(page.contains("title=\"S/t4 [semaphore]"), "the shortest are left out")
    XCTAssertTrue(page.contains("title=\"S/t5 [semaphore]: failed, 0.006s\""))
    let output = "<pre class=\"output\">" + String(repeating: "o", count: 64) + CappedText.cutNote(bytes: 136, limit: 64) + "</pre>"
    XCTAssertEqual(page.components(separatedBy: output).count - 1, 100, "the first 100 failures keep their output")
    XCTAssertEqual(page.components(separatedBy: "<p class=\"none\">Output not kept: the page keeps the output of the first 100 failures.</p>")
      .count - 1, 1)
    let message = "<pre class=\"message\">" + String(repeating: "m", count: 64) + CappedText.cutNote(bytes: 36, limit: 64) + "</pre>"
    XCTAssertEqual(page.components(separatedBy: message).count - 1, 101)
    XCTAssertTrue(page.contains("<h2>Failures (101)</h2>"))
  }

  /// The bars drawn are the longest attempts; among attempts as long as the shortest one drawn,
  /// the first ones.
  func testTheLongestAttemptsAreDrawnTiesByTheirOrder() {
    let attempts = [5, 3, 1, 3, 3].map {
      RunTimeline.Attempt(test: TestID(suite: "S", name: "t\($0)", host: "semaphore"), track: .init(lane: 1), start: 0, duration: $0)
    }
    XCTAssertEqual(HTMLReport.longest(attempts, limit: 3), [true, true, false, true, false])
    XCTAssertEqual(HTMLReport.longest(attempts, limit: 1), [true, false, false, false, false])
    XCTAssertEqual(HTMLReport.longest(attempts, limit: 0), [false, false, false, false, false])
    XCTAssertEqual(HTMLReport.longest(attempts, limit: 5), [true, true, true, true, true])
  }

  /// A run that did not end (interrupted) still writes its page: it says so, and the attempt
  /// still running is drawn as unfinished up to the last event.
  func testARunThatDidNotEndSaysSo() throws {
    let path = directory.appendingPathComponent("report.html").path
    let reporter = try HTMLReporter(path: path, title: "Stopped")
    let start = Date(timeIntervalSince1970: 1_000_000)
    let test = TestID(suite: "S", name: "blocks", host: "semaphore")
    reporter.handle(Event(.runStarted(RunInfo(waiters: ["semaphore"])), timestamp: start))
    reporter.handle(Event(.suiteStarted(test.suiteRun), timestamp: start))
    reporter.handle(Event(.testStarted(test), timestamp: start + 0.5, lane: 1))
    reporter.handle(Event(.outputCaptured(test, "blocking\n"), timestamp: start + 2))
    try reporter.finish()
    reporter.handle(Event(.runEnded(Summary(), duration: 9), timestamp: start + 9))
    try reporter.finish()
    let page = try String(contentsOfFile: path, encoding: .utf8)
    XCTAssertTrue(page.contains("<p class=\"result failed\">0 passed, 0 failed, 0 skipped in 2.000s</p>\n"
      + "<p class=\"warning\">The run did not end (it was interrupted): this page shows what happened until then.</p>"))
    XCTAssertTrue(page.contains("<tr><th>S</th>\n<td>-</td>\n</tr>"), "a suite that did not end has no counts")
    XCTAssertTrue(page.contains("<span class=\"bar unfinished\" style=\"left:25.000%;width:75.000%\" "
      + "title=\"S/blocks [semaphore]: unfinished, 1.500s\"></span>"))
  }

  /// Issue 49: the page says the run failed, counts the failure outside tests and shows it.
  func testAFailureOutsideTestsFailsThePageAndIsShown() throws {
    let path = directory.appendingPathComponent("report.html").path
    let reporter = try HTMLReporter(path: path, title: "Outside")
    let failure = OutsideFailure(place: .suite, suite: SuiteRun(suite: "M.Broken", host: "swift-testing"),
                                 issue: Issue(kind: .errorThrown, message: "Caught error: not prepared"), afterTests: false)
    var summary = Summary()
    summary.outsideFailures = 1
    reporter.handle(Event(.runStarted(RunInfo(waiters: ["swift-testing"]))))
    reporter.handle(Event(.outsideFailure(failure)))
    reporter.handle(Event(.runEnded(summary, duration: 1)))
    try reporter.finish()
    let page = try String(contentsOfFile: path, encoding: .utf8)
    XCTAssertTrue(page.contains("<p class=\"result failed\">0 passed, 0 failed, 0 skipped, 1 failed outside tests in 1.000s</p>"),
                  page)
    XCTAssertTrue(page.contains("<h2>Failed outside tests (1)</h2>"), page)
    XCTAssertTrue(page.contains("<h3>M.Broken: the suite</h3>"), page)
    XCTAssertTrue(page.contains("<pre class=\"message\">Caught error: not prepared</pre>"), page)
  }

  /// Attempts side by side in a lane: one that starts while others run goes on the lane's first
  /// free sub-track, a row of its own named after the lane, so no row's bars overlap.
  func testAttemptsSideBySideInALaneGetRowsOfTheirOwn() throws {
    let path = directory.appendingPathComponent("report.html").path
    let reporter = try HTMLReporter(path: path, title: "Side by side")
    let start = Date(timeIntervalSince1970: 1_000_000)
    let test = { (name: String) in TestID(suite: "S", name: name, host: "expectation") }
    reporter.handle(Event(.runStarted(RunInfo(waiters: ["expectation"])), timestamp: start))
    // a, b and c start side by side in lane 1; d starts when b has ended, in b's row; e runs alone in lane 2.
    let started = { (name: String, at: TimeInterval, lane: Int) in Event(.testStarted(test(name)), timestamp: start + at, lane: lane) }
    let ended = { (name: String, from: TimeInterval, to: TimeInterval) in
      Event(.testEnded(test(name), TestEnd(once: TestResult(verdict: .passed), duration: to - from)), timestamp: start + to)
    }
    for event in [started("a", 0, 1), started("e", 0, 2), started("b", 1, 1), ended("e", 0, 1), started("c", 2, 1),
                  ended("b", 1, 3), started("d", 3, 1), ended("a", 0, 4), ended("c", 2, 5), ended("d", 3, 6)] {
      reporter.handle(event)
    }
    try reporter.finish()
    let page = try String(contentsOfFile: path, encoding: .utf8)
    let rows = page.components(separatedBy: "<div class=\"lane-name\">").dropFirst().map { $0.prefix { $0 != "<" } }
    XCTAssertEqual(rows, ["lane 1: 1 attempt, busy 4.000s", "lane 1 · 2: 2 attempts, busy 5.000s", "lane 1 · 3: 1 attempt, busy 3.000s",
                          "lane 2: 1 attempt, busy 1.000s"])
    let bars = page.components(separatedBy: "<div class=\"lane-name\">").dropFirst().map { row in
      row.components(separatedBy: "title=\"S/").dropFirst().map { $0.prefix { $0 != " " } }.joined(separator: " ")
    }
    XCTAssertEqual(bars, ["a", "b d", "c", "e"])
    XCTAssertTrue(page.contains("<p>5 attempts in 2 lanes over 6.000s.</p>"))
  }

  /// Each attempt is drawn when it ran, as its test's end says (``TestAttempt/started``,
  /// its duration), not when the runner heard of it: a test a bundle ran beside the one before
  /// it, announced only after that one ended, goes on a row of its own from its real start;
  /// a retried attempt ends where its own duration says, not where the next one starts.
  func testAttemptsAreDrawnWhenTheyRanNotWhenTheyWereAnnounced() throws {
    let path = directory.appendingPathComponent("report.html").path
    let reporter = try HTMLReporter(path: path, title: "Real times")
    let start = Date(timeIntervalSince1970: 1_000_000)
    let test = { (name: String, attempt: Int) in TestID(suite: "S", name: name, host: "xctest", attempt: attempt) }
    let attempt = { (number: Int, outcome: Verdict, from: TimeInterval, to: TimeInterval) in
      TestAttempt(number: number, outcome: outcome, duration: to - from, issues: [], lane: 1, started: start + from)
    }
    reporter.handle(Event(.runStarted(RunInfo(waiters: ["xctest"])), timestamp: start))
    // b ran from 1 to 3, beside a, but was announced at 4, once a ended; c failed from 5 to 5.5
    // and passed from 6 to 7.
    for event in [
      Event(.testStarted(test("a", 1)), timestamp: start, lane: 1),
      Event(.testEnded(test("a", 1), TestEnd(verdict: .passed, attempts: [attempt(1, .passed, 0, 4)])), timestamp: start + 4),
      Event(.testStarted(test("b", 1)), timestamp: start + 4, lane: 1),
      Event(.testEnded(test("b", 1), TestEnd(verdict: .passed, attempts: [attempt(1, .passed, 1, 3)])), timestamp: start + 4),
      Event(.testStarted(test("c", 1)), timestamp: start + 5, lane: 1),
      Event(.testStarted(test("c", 2)), timestamp: start + 6, lane: 1),
      Event(.testEnded(test("c", 2), TestEnd(verdict: .flaky, attempts: [attempt(1, .failed, 5, 5.5), attempt(2, .passed, 6, 7)])),
            timestamp: start + 7),
    ] {
      reporter.handle(event)
    }
    try reporter.finish()
    let page = try String(contentsOfFile: path, encoding: .utf8)
    let rows = page.components(separatedBy: "<div class=\"lane-name\">").dropFirst().map { $0.prefix { $0 != "<" } }
    XCTAssertEqual(rows, ["lane 1: 3 attempts, busy 5.500s", "lane 1 · 2: 1 attempt, busy 2.000s"])
    let bars = page.components(separatedBy: "<div class=\"lane-name\">").dropFirst().map { row in
      row.components(separatedBy: "title=\"S/").dropFirst().map { $0.prefix { $0 != " " } }.joined(separator: " ")
    }
    XCTAssertEqual(bars, ["a c c", "b"])
  }

  /// With `--trace` and `--report-html`, the run has one timeline: the trace places each
  /// event on it once, the page draws the same attempts from it (also those the trace took
  /// away as it wrote them), and both files show them.
  func testTheTraceAndThePageDrawOneTimeline() throws {
    let timeline = SharedTimeline(keepingAttempts: true)
    let tracePath = directory.appendingPathComponent("trace.json").path
    let pagePath = directory.appendingPathComponent("report.html").path
    let reporters: [any Reporter] = [try TraceReporter(path: tracePath, processName: "shared", timeline: timeline),
                                     try HTMLReporter(path: pagePath, title: "Shared", sharing: timeline)]
    let start = Date(timeIntervalSince1970: 1_000_000)
    var events = [Event(.runStarted(RunInfo(waiters: ["semaphore"])), timestamp: start),
                  Event(.suiteStarted(SuiteRun(suite: "S", host: "semaphore")), timestamp: start)]
    for index in 0..<3 {
      let test = TestID(suite: "S", name: "t\(index)", host: "semaphore")
      events.append(Event(.testStarted(test), timestamp: start + Double(index), lane: 1))
      events.append(Event(.waitEnded(test, awaited: "the wait for \"x\"", outcome: "completed", duration: 0.5),
                          timestamp: start + Double(index) + 0.6))
      events.append(Event(.testEnded(test, TestEnd(once: TestResult(verdict: .passed), duration: 1)), timestamp: start + Double(index) + 1))
    }
    events.append(Event(.suiteEnded(SuiteRun(suite: "S", host: "semaphore"), Summary(), duration: 3), timestamp: start + 3))
    events.append(Event(.runEnded(Summary(), duration: 3), timestamp: start + 3))
    for event in events {
      for reporter in reporters { try reporter.handle(event) }
    }
    XCTAssertEqual(timeline.recorded, events.count, "each event placed once, by the trace")
    for reporter in reporters { try reporter.finish() }
    let trace = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: tracePath))) as? [String: Any]
    let slices = (trace?["traceEvents"] as? [[String: Any]] ?? []).filter { $0["cat"] as? String == "test" }
    XCTAssertEqual(slices.compactMap { $0["name"] as? String }, ["S/t0", "S/t1", "S/t2"])
    let page = try String(contentsOfFile: pagePath, encoding: .utf8)
    for name in ["t0", "t1", "t2"] { XCTAssertTrue(page.contains("S/\(name)"), "the page's timeline lacks \(name)") }
    XCTAssertEqual(timeline.attemptsAndLatest.attempts.map(\.test.name), ["t0", "t1", "t2"])
  }
}
