import AsyncHarness
import Foundation
import HarnessTestSupport
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
    let passed = TestID(suite: "MessageLoader", name: "greets with hello", host: "semaphore")
    let failed = TestID(suite: "MessageLoader", name: "loads two", host: "semaphore")
    let issue = Issue(kind: .waitFailed, message: "Exceeded timeout of 1 seconds, with unfulfilled expectations: \"loaded\" created at \(location.path):13", sourceLocation: location)
    var summary = Summary()
    summary.count(.passed)
    summary.count(.failed)
    let suite = SuiteRun(suite: "MessageLoader", host: "semaphore")
    return [
      Event(.runStarted(RunInfo(harnessVersion: "0.1.0", seed: 42, jitterSeed: 9, repetitions: 1, waiters: ["semaphore"])), timestamp: instant),
      Event(.suiteStarted(suite), timestamp: instant),
      Event(.testStarted(passed), timestamp: instant),
      Event(.testEnded(passed, TestEnd(once: TestResult(verdict: .passed), duration: 0.0000123)), timestamp: instant),
      Event(.testStarted(failed), timestamp: instant),
      Event(.issueRecorded(failed, issue), timestamp: instant),
      Event(.testEnded(failed, TestEnd(once: TestResult(verdict: .failed, issues: [issue]), duration: 1.0016)), timestamp: instant),
      Event(.suiteEnded(suite, summary, duration: 1.002), timestamp: instant),
      Event(.runEnded(summary, duration: 1.003), timestamp: instant),
    ]
  }

  func testConsoleGolden() throws {
    let text = WrittenText()
    let reporter = ConsoleReporter(style: .plain, write: text.write)
    for event in events(at: inPackage) { try reporter.handle(event) }
    XCTAssertEqual(text.text, """
      Shuffled with seed 42 (replay with --shuffle 42)
      Real queues jittered with seed 9 (0–2 ms before each item; rerun with --jitter 9)
      PASS  MessageLoader/greets with hello [semaphore] (0.000s)
      FAIL  MessageLoader/loads two [semaphore] (1.002s)
          Tests/LoaderTests/LoaderTests.swift:14: Exceeded timeout of 1 seconds, with unfulfilled expectations: "loaded" created at Tests/LoaderTests/LoaderTests.swift:13

      Suite          semaphore
      -------------  ---------
      MessageLoader  1/2 FAIL
      Result: 1 passed, 1 failed, 0 skipped in 1.003s

      """)
  }

  /// Issue 49: a failure outside every test is written as it is found, whole, with its place
  /// and suspects, listed again before the result line by its first line, and counted there.
  func testConsoleWritesAFailureOutsideTestsAndCountsIt() throws {
    let text = WrittenText()
    let reporter = ConsoleReporter(style: .plain, write: text.write)
    let failure = OutsideFailure(
      place: .classTearDown, suite: SuiteRun(suite: "M.Ledger", host: "xctest"),
      issue: Issue(kind: .crashed, message: "The test bundle ended with signal SIGILL (illegal instruction); its last output:\n"
        + "Fatal error: closed", sourceLocation: SourceLocation(fileID: "M/Ledger.swift", filePath: "/p/M/Ledger.swift", line: 12,
                                                                  column: 1)),
      suspects: ["M.Ledger/testA", "M.Ledger/testB"], afterTests: true)
    var summary = Summary()
    summary.passed = 2
    summary.outsideFailures = 1
    for kind: Event.Kind in [.outsideFailure(failure), .runEnded(summary, duration: 0.5)] { try reporter.handle(Event(kind)) }
    XCTAssertEqual(text.text, """
      ERROR M.Ledger [xctest] class func tearDown(): The test bundle ended with signal SIGILL (illegal instruction); its last output:
      Fatal error: closed
          at M/Ledger.swift:12
          The tests that ran last in that process before it: M.Ledger/testA, M.Ledger/testB
      (1 failure outside tests)
      Failed outside tests:
          M.Ledger [xctest] class func tearDown(): The test bundle ended with signal SIGILL (illegal instruction); its last output:
      Result: 2 passed, 0 failed, 0 skipped, 1 failed outside tests in 0.500s

      """)
    XCTAssertFalse(summary.succeeded, "a failure outside tests fails the run")
  }

  func testConsoleColorsOnlyWhenAsked() throws {
    let text = WrittenText()
    let reporter = ConsoleReporter(style: .init(colors: true, liveProgress: false), write: text.write)
    for event in events(at: inPackage) { try reporter.handle(event) }
    XCTAssertTrue(text.text.contains("\u{1B}[32mPASS \u{1B}[0m MessageLoader/greets with hello"))
    XCTAssertFalse(ConsoleReporter.Style.forStandardOutput(environment: ["NO_COLOR": "1"]).colors)
  }

  func testJSONLinesGoldenAndRoundTrip() throws {
    let written = WrittenText()
    let reporter = JSONLinesReporter(write: written.write)
    for event in events(at: elsewhere) { try reporter.handle(event) }
    let lines = written.lines
    XCTAssertEqual(lines.count, 9)
    XCTAssertTrue(lines.allSatisfy { $0.hasSuffix("\n") && $0.dropLast().contains("\n") == false })
    XCTAssertEqual(lines[0], #"{"kind":"runStarted","run":{"harnessVersion":"0.1.0","jitterSeed":9,"repetitions":1,"seed":42,"waiters":["semaphore"]},"timestamp":"2027-01-15T08:00:00.000Z","version":3}"# + "\n")
    XCTAssertEqual(lines[1], #"{"kind":"suiteStarted","suite":"MessageLoader","timestamp":"2027-01-15T08:00:00.000Z","version":3,"waiter":"semaphore"}"# + "\n")
    XCTAssertEqual(lines[5], #"{"issue":{"kind":"waitFailed","message":"Exceeded timeout of 1 seconds, with unfulfilled expectations: \"loaded\" created at LoaderTests/LoaderTests.swift:13","sourceLocation":{"column":5,"fileID":"LoaderTests/LoaderTests.swift","filePath":"/src/LoaderTests.swift","line":14}},"kind":"issueRecorded","test":{"attempt":1,"name":"loads two","repetition":1,"suite":"MessageLoader","waiter":"semaphore"},"timestamp":"2027-01-15T08:00:00.000Z","version":3}"# + "\n")
    XCTAssertEqual(lines[6], #"{"attempts":[{"attempt":1,"duration":1.0016,"issues":1,"outcome":"failed","recorded":[{"kind":"waitFailed","message":"Exceeded timeout of 1 seconds, with unfulfilled expectations: \"loaded\" created at LoaderTests/LoaderTests.swift:13","sourceLocation":{"column":5,"fileID":"LoaderTests/LoaderTests.swift","filePath":"/src/LoaderTests.swift","line":14}}]}],"kind":"testEnded","test":{"attempt":1,"name":"loads two","repetition":1,"suite":"MessageLoader","waiter":"semaphore"},"timestamp":"2027-01-15T08:00:00.000Z","verdict":"failed","version":3}"# + "\n")
    XCTAssertEqual(lines[8], #"{"duration":1.003,"kind":"runEnded","summary":{"errored":0,"failed":1,"flaky":0,"knownIssues":0,"passed":1,"skipped":0},"timestamp":"2027-01-15T08:00:00.000Z","version":3}"# + "\n")
    XCTAssertEqual(try lines.map { try Event(jsonLine: $0) }, events(at: elsewhere))
  }

  /// The hand-written encoder and the decoder agree on every kind of event, including text
  /// that JSON must escape, and its lines are what `JSONSerialization` reads as the same
  /// values.
  func testJSONLinesRoundTripOfHostileText() throws {
    let hostile = "quote \" backslash \\ newline \n tab \t nul \u{0} bell \u{7} del \u{7F} é 🦊 \u{2028} </x>"
    let test = TestID(suite: hostile, name: hostile, host: "semaphore", repetition: 3, attempt: 2)
    let issue = Issue(kind: .lateSignal, message: hostile, sourceLocation: SourceLocation(
      fileID: hostile, filePath: hostile, line: 7, column: 9))
    let kinds: [Event.Kind] = [
      .runStarted(RunInfo(seed: UInt64.max, jitterSeed: UInt64.max, repetitions: 2, waiters: [hostile])),
      .suiteStarted(SuiteRun(suite: hostile, host: hostile)),
      .testStarted(test),
      .issueRecorded(test, Issue(kind: .warning, message: hostile)),
      .outputCaptured(test, hostile),
      .testEnded(test, TestEnd(once: TestResult(verdict: .knownIssue, reason: hostile, issues: [issue]), duration: 1e-7)),
      .suiteEnded(SuiteRun(suite: hostile, host: "w"), Summary(), duration: 12345.678),
      .runEnded(Summary(), duration: 0),
    ]
    for kind in kinds {
      let event = Event(kind, timestamp: Date(timeIntervalSince1970: 1_800_000_000.25))
      let line = event.jsonLine
      XCTAssertEqual(try Event(jsonLine: line), event, line)
      XCTAssertNoThrow(try JSONSerialization.jsonObject(with: Data(line.utf8)), line)
    }
  }

  /// A version 1 line (as 0.1 wrote it: `suite` and `waiter` on test events, whole-second
  /// timestamps, no `attempt`) still reads.
  func testJSONLinesReadsVersionOne() throws {
    let line = #"{"kind":"testStarted","suite":"S","test":{"name":"t","repetition":2,"suite":"S","waiter":"semaphore"},"timestamp":"2026-11-23T03:34:14Z","version":1,"waiter":"semaphore"}"#
    let event = try Event(jsonLine: line)
    XCTAssertEqual(event.kind, .testStarted(TestID(suite: "S", name: "t", host: "semaphore", repetition: 2)))
    XCTAssertEqual(event.timestamp, Date(timeIntervalSince1970: 1_795_404_854))
  }

  func testJSONLinesRejectsWhatItCannotRead() {
    let cases = [
      ("not json", "not an AsyncHarness event: not JSON"),
      (#"{"kind":"testStarted","timestamp":"2026-11-23T03:34:14Z","version":4}"#,
       "not an AsyncHarness event: schema version 4; this build reads versions 1 to 3"),
      (#"{"kind":"testPaused","timestamp":"2026-11-23T03:34:14Z","version":2}"#,
       #"not an AsyncHarness event: unknown kind "testPaused""#),
      (#"{"kind":"testStarted","timestamp":"2026-11-23T03:34:14Z","version":2}"#,
       "not an AsyncHarness event: missing field test"),
      (#"{"kind":"testStarted","timestamp":"yesterday","version":2}"#,
       #"not an AsyncHarness event: timestamp "yesterday" is not ISO 8601"#),
    ]
    for (line, message) in cases {
      XCTAssertThrowsError(try Event(jsonLine: line), line) { error in
        XCTAssertEqual("\(error)", message)
      }
    }
  }

  func testJSONLinesFileInAMissingDirectoryFailsAtOnce() {
    XCTAssertThrowsError(try JSONLinesReporter(path: "/nonexistent-dir/events.jsonl")) { error in
      XCTAssertEqual("\(error)", "cannot write the JSON Lines stream to /nonexistent-dir/events.jsonl: the directory /nonexistent-dir does not exist")
    }
  }
}
