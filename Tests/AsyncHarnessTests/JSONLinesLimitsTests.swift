import AsyncHarness
import Foundation
import XCTest

/// Issue 8, item 7: the JSON Lines stream is bounded like the JUnit report, written a whole
/// line at a time, and ends with `runEnded` only when the run ended.
final class JSONLinesLimitsTests: XCTestCase {
  private let test = TestID(suite: "S", name: "chatty", waiter: "w")

  func testEachTestKeepsAtMostTheLimitOfOutputThenOneNote() throws {
    var lines: [String] = []
    let reporter = JSONLinesReporter(outputLimit: 10) { lines.append($0) }
    let issue = Issue(kind: .expectationFailed, message: "0123456789abc")
    for event in [
      Event(kind: .testStarted, test: test),
      Event(kind: .outputCaptured, test: test, output: "0123456"),
      Event(kind: .outputCaptured, test: test, output: "789abcdef"),
      Event(kind: .outputCaptured, test: test, output: "ghi"),
      Event(kind: .issueRecorded, test: test, issue: issue),
      Event(kind: .testEnded, test: test, result: TestResult(verdict: .failed, issues: [issue])),
    ] { try reporter.handle(event) }
    let events = try lines.map { try JSONLinesReporter.decode(line: $0) }
    let note = "\n[AsyncHarness: 9 more bytes cut here; the report keeps at most 10 bytes per text]"
    XCTAssertEqual(events.map(\.kind), [.testStarted, .outputCaptured, .outputCaptured, .issueRecorded, .outputCaptured, .testEnded])
    XCTAssertEqual(events.compactMap(\.output), ["0123456", "789", note])
    let cutMessage = "0123456789\n[AsyncHarness: 3 more bytes cut here; the report keeps at most 10 bytes per text]"
    XCTAssertEqual(events[3].issue?.message, cutMessage)
    XCTAssertEqual(events[5].result?.issues.map(\.message), [cutMessage])
  }

  func testFiftyMegabytesOfOutputMakeAboutOneMegabyteOfStream() throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("harness-\(UUID()).jsonl").path
    defer { try? FileManager.default.removeItem(atPath: path) }
    let reporter = try JSONLinesReporter(path: path)
    let megabyte = String(repeating: "log line\n", count: 111_112)  // 1,000,008 bytes
    try reporter.handle(Event(kind: .testStarted, test: test))
    for _ in 0..<50 { try reporter.handle(Event(kind: .outputCaptured, test: test, output: megabyte)) }
    try reporter.handle(Event(kind: .testEnded, test: test, result: TestResult(verdict: .passed)))
    try reporter.finish()
    let text = try String(contentsOfFile: path, encoding: .utf8)
    let outputs = try text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
      .compactMap { try JSONLinesReporter.decode(line: String($0)).output }
    XCTAssertEqual(outputs.dropLast().map(\.utf8.count).reduce(0, +), 1_048_576)
    XCTAssertEqual(outputs.last, "\n[AsyncHarness: 48951824 more bytes cut here; the report keeps at most 1048576 bytes per text]")
    XCTAssertLessThan(text.utf8.count, 1_300_000)
  }

  func testARunStoppedByAReporterErrorHasNoRunEnded() throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("harness-\(UUID()).jsonl").path
    defer { try? FileManager.default.removeItem(atPath: path) }
    final class FailsAtSuiteEnd: Reporter {
      struct Failure: Error {}
      func handle(_ event: Event) throws { if event.kind == .suiteEnded { throw Failure() } }
    }
    let suites = [Suite("S") { Test("passes") { t in t.expect(true) } }]
    let runner = Runner(suites: suites, reporters: [try JSONLinesReporter(path: path), FailsAtSuiteEnd()])
    XCTAssertThrowsError(try runner.run())
    let text = try String(contentsOfFile: path, encoding: .utf8)
    XCTAssertTrue(text.hasSuffix("\n"))
    let kinds = try text.split(separator: "\n").map { try JSONLinesReporter.decode(line: String($0)).kind }
    XCTAssertEqual(kinds, [.runStarted, .suiteStarted, .testStarted, .testEnded, .suiteEnded])
  }
}
