import AsyncHarness
import Foundation
import XCTest

/// Console and JSON Lines output, pinned as golden text from hand-made events.
final class ReporterTests: XCTestCase {
  /// A file outside the working directory: reports name it by its file ID.
  private let elsewhere = SourceLocation(fileID: "LoaderTests/LoaderTests.swift", filePath: "/src/LoaderTests.swift", line: 14, column: 5)
  /// A file inside the working directory: reports name it by its path from there.
  private let inPackage = SourceLocation(
    fileID: "LoaderTests/LoaderTests.swift",
    filePath: FileManager.default.currentDirectoryPath + "/Tests/LoaderTests/LoaderTests.swift", line: 14, column: 5)
  private let instant = Date(timeIntervalSince1970: 1_800_000_000)

  private func events(at location: SourceLocation) -> [Event] {
    let passed = TestID(suite: "MessageLoader", name: "greets with hello", waiter: "semaphore")
    let failed = TestID(suite: "MessageLoader", name: "loads two", waiter: "semaphore")
    let issue = Issue(kind: .waitFailed, message: "Exceeded timeout of 1 seconds, with unfulfilled expectations: \"loaded\" created at \(location.path):13", sourceLocation: location)
    var summary = Summary()
    summary.count(.passed)
    summary.count(.failed)
    return [
      Event(kind: .runStarted, timestamp: instant, run: RunInfo(harnessVersion: "0.1.0", seed: 42, repetitions: 1, waiters: ["semaphore"])),
      Event(kind: .suiteStarted, timestamp: instant, suite: "MessageLoader", waiter: "semaphore"),
      Event(kind: .testStarted, timestamp: instant, suite: "MessageLoader", waiter: "semaphore", test: passed),
      Event(kind: .testEnded, timestamp: instant, suite: "MessageLoader", waiter: "semaphore", test: passed,
            result: TestResult(verdict: .passed), duration: 0.0000123),
      Event(kind: .testStarted, timestamp: instant, suite: "MessageLoader", waiter: "semaphore", test: failed),
      Event(kind: .issueRecorded, timestamp: instant, suite: "MessageLoader", waiter: "semaphore", test: failed, issue: issue),
      Event(kind: .testEnded, timestamp: instant, suite: "MessageLoader", waiter: "semaphore", test: failed,
            result: TestResult(verdict: .failed, issues: [issue]), duration: 1.0016),
      Event(kind: .suiteEnded, timestamp: instant, suite: "MessageLoader", waiter: "semaphore", summary: summary, duration: 1.002),
      Event(kind: .runEnded, timestamp: instant, summary: summary, duration: 1.003),
    ]
  }

  func testConsoleGolden() throws {
    var text = ""
    let reporter = ConsoleReporter(style: .plain) { text += $0 }
    for event in events(at: inPackage) { try reporter.handle(event) }
    XCTAssertEqual(text, """
      Shuffled with seed 42 (replay with --shuffle 42)
      PASS  MessageLoader/greets with hello [semaphore] (0.000s)
      FAIL  MessageLoader/loads two [semaphore] (1.002s)
          Tests/LoaderTests/LoaderTests.swift:14: Exceeded timeout of 1 seconds, with unfulfilled expectations: "loaded" created at Tests/LoaderTests/LoaderTests.swift:13

      Suite          semaphore
      -------------  ---------
      MessageLoader  1/2 FAIL
      Result: 1 passed, 1 failed, 0 skipped in 1.003s

      """)
  }

  func testConsoleColorsOnlyWhenAsked() throws {
    var text = ""
    let reporter = ConsoleReporter(style: .init(colors: true, liveProgress: false)) { text += $0 }
    for event in events(at: inPackage) { try reporter.handle(event) }
    XCTAssertTrue(text.contains("\u{1B}[32mPASS \u{1B}[0m MessageLoader/greets with hello"))
    XCTAssertFalse(ConsoleReporter.Style.forStandardOutput(environment: ["NO_COLOR": "1"]).colors)
  }

  func testJSONLinesGoldenAndRoundTrip() throws {
    var lines: [String] = []
    let reporter = JSONLinesReporter { lines.append($0) }
    for event in events(at: elsewhere) { try reporter.handle(event) }
    XCTAssertEqual(lines.count, 9)
    XCTAssertTrue(lines.allSatisfy { $0.hasSuffix("\n") && $0.dropLast().contains("\n") == false })
    XCTAssertEqual(lines[0], #"{"kind":"runStarted","run":{"harnessVersion":"0.1.0","repetitions":1,"seed":42,"waiters":["semaphore"]},"timestamp":"2027-01-15T08:00:00Z","version":1}"# + "\n")
    XCTAssertEqual(lines[5], #"{"issue":{"kind":"waitFailed","message":"Exceeded timeout of 1 seconds, with unfulfilled expectations: \"loaded\" created at LoaderTests/LoaderTests.swift:13","sourceLocation":{"column":5,"fileID":"LoaderTests/LoaderTests.swift","filePath":"/src/LoaderTests.swift","line":14}},"kind":"issueRecorded","suite":"MessageLoader","test":{"name":"loads two","repetition":1,"suite":"MessageLoader","waiter":"semaphore"},"timestamp":"2027-01-15T08:00:00Z","version":1,"waiter":"semaphore"}"# + "\n")
    XCTAssertEqual(try lines.map { try JSONLinesReporter.decode(line: $0) }, events(at: elsewhere))
  }

  func testJSONLinesFileInAMissingDirectoryFailsAtOnce() {
    XCTAssertThrowsError(try JSONLinesReporter(path: "/nonexistent-dir/events.jsonl")) { error in
      XCTAssertEqual("\(error)", "cannot write the JSON Lines stream to /nonexistent-dir/events.jsonl: the directory /nonexistent-dir does not exist")
    }
  }
}
