import AsyncHarness
import Foundation
import HarnessTestSupport
import XCTest

/// Issue 8, item 7: the JSON Lines stream is bounded like the JUnit report, written a whole
/// line at a time, and ends with `runEnded` only when the run ended.
final class JSONLinesLimitsTests: XCTestCase {
  private let test = TestID(suite: "S", name: "chatty", host: "w")

  func testEachTestKeepsAtMostTheLimitOfOutputThenOneNote() throws {
    let written = WrittenText()
    let reporter = JSONLinesReporter(outputLimit: 10, write: written.write)
    let issue = Issue(kind: .expectationFailed, message: "0123456789abc")
    for event in [
      Event(.testStarted(test)),
      Event(.outputCaptured(test, "0123456")),
      Event(.outputCaptured(test, "789abcdef")),
      Event(.outputCaptured(test, "ghi")),
      Event(.issueRecorded(test, issue)),
      Event(.testEnded(test, TestEnd(once: TestResult(verdict: .failed, issues: [issue]), duration: 0))),
    ] { try reporter.handle(event) }
    let events = try written.lines.map { try Event(jsonLine: $0) }
    let note = "\n[AsyncHarness: 9 more bytes cut here; the report keeps at most 10 bytes per text]"
    let cutMessage = "0123456789\n[AsyncHarness: 3 more bytes cut here; the report keeps at most 10 bytes per text]"
    let cutIssue = Issue(kind: .expectationFailed, message: cutMessage)
    XCTAssertEqual(events.map(\.kind), [
      .testStarted(test), .outputCaptured(test, "0123456"), .outputCaptured(test, "789"), .issueRecorded(test, cutIssue),
      .outputCaptured(test, note), .testEnded(test, TestEnd(once: TestResult(verdict: .failed, issues: [cutIssue]), duration: 0)),
    ])
  }

  func testFiftyMegabytesOfOutputMakeAboutOneMegabyteOfStream() throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("harness-\(UUID()).jsonl").path
    defer { try? FileManager.default.removeItem(atPath: path) }
    let reporter = try JSONLinesReporter(path: path)
    let megabyte = String(repeating: "log line\n", count: 111_112)  // 1,000,008 bytes
    try reporter.handle(Event(.testStarted(test)))
    for _ in 0..<50 { try reporter.handle(Event(.outputCaptured(test, megabyte))) }
    try reporter.handle(Event(.testEnded(test, TestEnd(once: TestResult(verdict: .passed), duration: 0))))
    try reporter.finish()
    let text = try String(contentsOfFile: path, encoding: .utf8)
    let outputs = try text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
      .compactMap { line -> String? in
        guard case .outputCaptured(_, let output) = try Event(jsonLine: line).kind else { return nil }
        return output
      }
    XCTAssertEqual(outputs.dropLast().map(\.utf8.count).reduce(0, +), 1_048_576)
    XCTAssertEqual(outputs.last, "\n[AsyncHarness: 48951824 more bytes cut here; the report keeps at most 1048576 bytes per text]")
    XCTAssertLessThan(text.utf8.count, 1_300_000)
  }

  func testARunStoppedByAReporterErrorHasNoRunEnded() throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("harness-\(UUID()).jsonl").path
    defer { try? FileManager.default.removeItem(atPath: path) }
    final class FailsAtSuiteEnd: Reporter {
      struct Failure: Error {}
      func handle(_ event: Event) throws { if event.kind.name == "suiteEnded" { throw Failure() } }
    }
    let suites = [Suite("S") { Test("passes") { t in t.expect(true) } }]
    let runner = Runner(suites: suites, reporters: [try JSONLinesReporter(path: path), FailsAtSuiteEnd()])
    XCTAssertThrowsError(try runner.run())
    let text = try String(contentsOfFile: path, encoding: .utf8)
    XCTAssertTrue(text.hasSuffix("\n"))
    let kinds = try text.split(separator: "\n").map { try Event(jsonLine: $0).kind.name }
    XCTAssertEqual(kinds, ["runStarted", "suiteStarted", "testStarted", "testEnded", "suiteEnded"])
  }
}
