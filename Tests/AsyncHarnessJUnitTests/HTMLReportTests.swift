import AsyncHarness
import Foundation
import HarnessTestSupport
import Synchronization
import XCTest

@testable import AsyncHarnessJUnit

/// Issue 33, `--report-html PATH`: the page of runs in this process and in worker processes,
/// read back with libxml2's XML parser (the page is well-formed XML as well as HTML, so any
/// stray markup breaks the parse): its sections in order, each failure's message, location and
/// output, flaky and slowest tests, a timeline that matches the trace, every hostile text
/// shown as text, the bounds, and bad paths refused before any test runs.
final class HTMLReportTests: ReportTestCase {
  /// Every element and attribute the page may hold: anything else came from a test's text.
  private static let elements: Set = ["html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "h3", "h4", "p",
                                      "section", "article", "table", "thead", "tbody", "tr", "th", "td", "ul", "li", "pre", "div", "span"]
  private static let attributes: Set = ["lang", "charset", "name", "content", "class", "id", "style", "title"]

  /// The hostile run's page, in this process, with `--retries 1`: two failures (one printing
  /// markup, escapes and invalid UTF-8), a pass, a flaky test.
  func testThePageShowsTheRunInOrderWithEveryHostileTextAsText() throws {
    let (status, line) = hostileRun(to: path("report.html"), extra: ["--trace", path("trace.json")])
    XCTAssertEqual(status, 1)
    let page = try XMLReader.readDocument(path("report.html"))
    let all = page.descendants
    XCTAssertEqual(Set(all.map(\.name)).subtracting(Self.elements), [], "elements no page of the harness writes")
    XCTAssertEqual(Set(all.flatMap(\.attributes).map(\.name)).subtracting(Self.attributes), [])
    let body = try XCTUnwrap(page.elements(named: "body").first)
    XCTAssertEqual(body.elements(named: "section").compactMap { $0.attribute("id") }, ["summary", "failures", "flaky", "slowest", "timeline"])
    XCTAssertEqual(page.elements(named: "head").first?.elements(named: "title").first?.text,
                   "\(URL(fileURLWithPath: CommandLine.arguments[0]).lastPathComponent): AsyncHarness run")
    let result = try XCTUnwrap(all.first { $0.attribute("class") == "result failed" }?.text)
    XCTAssertTrue(result.hasPrefix("1 passed, 1 flaky, 2 failed, 0 skipped in "), result)

    let failures = section("failures", of: body).elements(named: "article")
    XCTAssertEqual(failures.map { $0.elements(named: "h3").first?.text }, [
      "Hostile/<script>document.title=\"pwned\"</script>", "Hostile/<img src=x onerror=\"document.title='pwned'\">",
    ])
    let issue = try XCTUnwrap(failures.first?.descendants.first { $0.name == "li" })
    XCTAssertEqual(issue.elements.map { "\($0.name) \($0.attribute("class") ?? "") \($0.text)" }, [
      "span location \(location(line: line))", "span kind expectationFailed",
      "pre message </pre><script>document.title='pwned'</script> & \"quoted\"",
    ])
    XCTAssertEqual(failures.first?.descendants.first { $0.attribute("class") == "none" }?.text, "No output.")
    XCTAssertEqual(failures.last?.descendants.first { $0.attribute("class") == "output" }?.text,
                   "<b>output</b> ␛[31mred␛[0m bell ␇ nul ␀ del ␡ c1 \u{FFFD} nonchar \u{FFFD}\ni\u{FFFD}\u{FFFD}\n")
    XCTAssertEqual(section("flaky", of: body).descendants.filter { $0.name == "li" }.map(\.text),
                   ["Hostile/flaky & <u>u</u> [expectation]: failed, then passed on attempt 2"])
    XCTAssertEqual(section("slowest", of: body).descendants.filter { $0.name == "tr" }.count, 1 + 7, "a header and every attempt")

    // The timeline: a bar for every slice of the trace, with its name, in the one lane.
    let bars = section("timeline", of: body).descendants.filter { $0.attribute("class")?.hasPrefix("bar ") == true }
    let slices = try traceSlices(path("trace.json"))
    XCTAssertEqual(bars.count, 7)
    XCTAssertEqual(bars.compactMap { $0.attribute("title")?.components(separatedBy: " [expectation]").first },
                   slices.map(\.name))
    XCTAssertEqual(bars.map { $0.attribute("class") }, ["bar retried", "bar failed", "bar retried", "bar failed", "bar passed",
                                                        "bar retried", "bar flaky"])
    let text = try String(contentsOfFile: path("report.html"), encoding: .utf8)
    XCTAssertFalse(text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" && $0 != "\t" }, "no control character is written")
  }

  /// Worker processes in two lanes: each lane's bars are the trace's slices on that lane's track.
  func testAWorkerRunsTimelineHasTheTracesSlicesPerLane() throws {
    let run = try runToEnd(try harnessFixture(), [
      "--filter", "Flaky/", "--filter", "Hostile/", "--retries", "1", "--workers", "2", "--parallel",
      "--trace", path("trace.json"), "--report-html", path("report.html"),
    ], in: directory)
    XCTAssertEqual(run.status, 1, run.output + run.errors)
    let page = try XMLReader.readDocument(path("report.html"))
    let lanes = page.descendants.filter { $0.attribute("class") == "lane" }
    var drawn: [Int: [String]] = [:]
    for (index, lane) in lanes.enumerated() {
      drawn[index + 1] = lane.descendants.compactMap { $0.attribute("title")?.components(separatedBy: " [expectation]").first }.sorted()
    }
    var traced: [Int: [String]] = [:]
    for slice in try traceSlices(path("trace.json")) { traced[slice.lane, default: []].append(visible(slice.name)) }
    XCTAssertEqual(drawn, traced.mapValues { $0.sorted() })
    XCTAssertEqual(drawn.keys.sorted(), [1, 2])
    // Failures are listed as they end, in whichever order the two lanes end them.
    XCTAssertEqual(page.descendants.filter { $0.name == "h3" }.map(\.text).sorted(),
                   ["Flaky/always fails", "Hostile/bell ␇ escape ␛[31m nul ␀ end"])
  }

  /// `--report-html` is checked before any test runs, like the other reports, with the message
  /// the user reads and exit status 2.
  func testABadPathIsAUsageErrorBeforeAnyTestRuns() throws {
    let ran = Atomic(false)
    let suites = [Suite("S") { Test("t") { _ in ran.store(true, ordering: .relaxed) } }]
    try Data().write(to: directory.appendingPathComponent("file"))
    let cases = [
      (["--report-html", path("missing/report.html")],
       "error: cannot write the HTML report to \(path("missing/report.html")): the directory \(path("missing")) does not exist\n"),
      (["--report-html", path("")], "error: cannot write the HTML report to \(path("")): it is a directory\n"),
      (["--report-html", path("file/report.html")],
       "error: cannot write the HTML report to \(path("file/report.html")): \(path("file")) is not a directory\n"),
      (["--trace", path("r"), "--report-html", path("r")], "error: --trace and --report-html name the same file \(path("r"))\n"),
    ]
    for (arguments, message) in cases {
      let errors = WrittenText()
      let status = HarnessMain.status(arguments: arguments, suites: suites, output: { _ in }, errors: errors.write)
      XCTAssertEqual(status, 2, "\(arguments)")
      XCTAssertEqual(errors.text, message)
    }
    XCTAssertFalse(ran.load(ordering: .relaxed), "no test ran")
    // A suites executable exits with that status, having run nothing.
    let run = try runToEnd(try harnessFixture(), ["--report-html", path("missing/report.html"), "--json", path("events.jsonl")],
                           in: directory)
    XCTAssertEqual(run.status, 2)
    XCTAssertEqual(run.errors,
                   "error: cannot write the HTML report to \(path("missing/report.html")): the directory \(path("missing")) does not exist\n")
    XCTAssertEqual(run.output, "")
    XCTAssertFalse(FileManager.default.fileExists(atPath: path("events.jsonl")), "no report was started")
  }

  /// The trace's attempts' slices, in order: `Suite/test` and lane.
  private func traceSlices(_ path: String) throws -> [(name: String, lane: Int)] {
    let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any]
    let events = try XCTUnwrap(object?["traceEvents"] as? [[String: Any]])
    return events.filter { $0["ph"] as? String == "X" && $0["cat"] as? String == "test" }.map { ($0["name"] as? String ?? "?", $0["tid"] as? Int ?? 0) }
  }

  private func section(_ id: String, of body: ParsedElement) -> ParsedElement {
    body.elements(named: "section").first { $0.attribute("id") == id } ?? ParsedElement(name: "missing", attributes: [], children: [])
  }

  /// `text` with its C0 controls as control pictures, as the page shows them.
  private func visible(_ text: String) -> String {
    String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 ? Unicode.Scalar(0x2400 + $0.value)! : $0 }))
  }

  private func location(line: Int) -> String {
    SourceLocation(fileID: #fileID, filePath: #filePath, line: line, column: 1).path + ":\(line)"
  }
}

extension ReportTestCase {
  /// Runs the hostile suites in this process with `--retries 1` and `--report-html page` (and
  /// `extra` flags): tests named with markup that would change the page's title if it ran,
  /// a failing message holding markup, output holding markup, escapes, control characters and
  /// invalid UTF-8, a pass and a flaky test. Returns the status and the line of the first failure.
  func hostileRun(to page: String, extra: [String] = []) -> (status: Int32, line: Int) {
    let line = #line + 3
    let suites = [Suite("Hostile") {
      Test("<script>document.title=\"pwned\"</script>") { t in
        t.fail("</pre><script>document.title='pwned'</script> & \"quoted\"")
      }
      Test("<img src=x onerror=\"document.title='pwned'\">") { t in
        let text = "<b>output</b> \u{1B}[31mred\u{1B}[0m bell \u{07} nul \u{00} del \u{7F} c1 \u{85} nonchar \u{FFFE}\n"
        FileHandle.standardOutput.write(Data(text.utf8) + [0x69, 0xFF, 0xFE, 0x0A])
        t.fail("fails")
      }
      Test("passes") { t in t.expect(true) }
      Test("flaky & <u>u</u>") { t in t.expect(t.id.attempt >= 2, "the first attempt fails") }
    }]
    let status = HarnessMain.status(arguments: ["--retries", "1", "--report-html", page] + extra, suites: suites,
                                    output: { _ in }, errors: { _ in })
    return (status, line)
  }
}

extension ParsedElement {
  /// This element and every element below it, in document order.
  var descendants: [ParsedElement] { [self] + elements.flatMap(\.descendants) }
}
