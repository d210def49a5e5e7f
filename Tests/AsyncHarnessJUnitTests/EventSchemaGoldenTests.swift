import AsyncHarness
import Foundation
import HarnessTestSupport
import XCTest

@testable import AsyncHarnessJUnit

/// Issue 43, event schema 3, against files: a run of the `harness-fixture` executable with a
/// retry after a failure, a retry after a crash, a test failing every attempt, a crash, a
/// time limit, a skip and a known issue (`Tests/Fixtures/Golden/`).
///
/// - `schema3-run.jsonl` is that run's stream as this build writes it, its times, lanes,
///   output and checkout path taken out (`ASYNC_HARNESS_UPDATE_GOLDEN=1` rewrites it).
/// - `schema2-run.jsonl` and `schema2-run.xml` are the stream and the JUnit report the same
///   run wrote before schema 3 (its source paths put under `/build/asyncharness`): the
///   stream, converted (`harness-junit from-events`), must give that report byte for byte,
///   and today's report of the run must be it but for times and output.
///
/// Runs and conversions happen in the test's own directory, outside the checkout, so that
/// issues are placed by their file IDs, as in the golden report.
final class EventSchemaGoldenTests: ReportTestCase {
  private static let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures/Golden")
  /// The checkout the fixture was built in, as its absolute source paths start.
  private static let checkout = golden.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

  /// The golden run: one waiter, one lane, every test once, a retry each. Only `hangs outside
  /// a wait` needs the time limit; it is long enough that every other test ends well within it
  /// on a loaded machine (at 0.5 s, `records, then crashes` was once stopped there at load 10,
  /// before its crash).
  private static let selection = [
    "--waiter", "expectation", "--time-limit", "3", "--retries", "1",
    "--only", "Fixture/passes", "--only", "Flaky/passes on attempt 2", "--only", "Flaky/crashes, then passes",
    "--only", "Flaky/always fails", "--only", "Crashes/records, then crashes", "--only", "Crashes/hangs outside a wait",
    "--only", "Parallel/skipped", "--only", "SideBySide/records a known issue",
  ]

  /// The JUnit report `harness-junit from-events` converts `stream` into, in the test's
  /// directory.
  private func converted(_ stream: String, to file: String) throws -> String {
    let run = try runToEnd(try harnessJUnit(), ["from-events", stream, "-o", path(file)], in: directory)
    XCTAssertEqual(run.status, 0, run.errors)
    return try String(contentsOfFile: path(file), encoding: .utf8)
  }

  /// Every event of a stream of any schema, read as `EventStream` reads it.
  private func read(_ text: String) throws -> [Event] {
    var stream = EventStream()
    return try text.split(separator: "\n").flatMap { try stream.read(line: $0) }
  }

  /// A stream as the golden file keeps it: each event's line with its times and lanes zeroed,
  /// without the output (crash reports print addresses) and with the checkout's path as `ROOT`.
  private func comparable(_ events: [Event]) -> [String] {
    events.filter { $0.kind.name != "outputCaptured" }.map {
      $0.withoutTimes.jsonLine.replacingOccurrences(of: Self.checkout, with: "ROOT")
    }
  }

  /// A JUnit report without what differs between two runs of the same tests: times,
  /// timestamps, the time limit (schema 2's run had 0.5 s) and the output of crashed attempts.
  private func comparable(junit text: String) -> String {
    text.replacingOccurrences(of: #" time="[0-9.]+""#, with: #" time="T""#, options: .regularExpression)
      .replacingOccurrences(of: #"time limit of [0-9.]+ seconds"#, with: "time limit of L seconds", options: .regularExpression)
      .replacingOccurrences(of: #" timestamp="[^"]+""#, with: #" timestamp="T""#, options: .regularExpression)
      .replacingOccurrences(of: #"(?s)<system-out>.*?</system-out>"#, with: "<system-out/>", options: .regularExpression)
  }

  func testAStreamOfSchemaTwoGivesTheJUnitReportItsRunWrote() throws {
    let file = Self.golden.appendingPathComponent("schema2-run.jsonl").path
    let report = try String(contentsOf: Self.golden.appendingPathComponent("schema2-run.xml"), encoding: .utf8)
    let events = try read(String(contentsOfFile: file, encoding: .utf8))
    XCTAssertEqual(try converted(file, to: "from-schema2.xml"), report)
    // Each test ends once, with its attempts; no attempt ends alone.
    let ends = events.compactMap { event -> String? in
      guard case .testEnded(let test, let end) = event.kind else { return nil }
      return "\(test.name): \(end.verdict) " + end.attempts.map { "\($0.number) \($0.outcome) \($0.issueCount)" }.joined(separator: ", ")
    }
    XCTAssertEqual(ends, [
      "passes: passed 1 passed 0",
      "records, then crashes: errored 1 errored 2, 2 errored 2",
      "hangs outside a wait: errored 1 errored 1, 2 errored 1",
      "passes on attempt 2: flaky 1 failed 1, 2 passed 0",
      "crashes, then passes: flaky 1 errored 1, 2 passed 0",
      "always fails: failed 1 failed 1, 2 failed 1",
      "skipped: skipped 1 skipped 0",
      "records a known issue: knownIssue 1 knownIssue 1",
    ])
  }

  /// A stream that cannot be converted is refused whole, naming the file and the line (its
  /// line in the file, blank lines counted), and no report is written.
  func testAStreamThatIsNoRunIsRefusedNamingItsLine() throws {
    XCTAssertThrowsError(try convertHarnessEvents(path("none.jsonl"), toJUnit: path("none.xml"))) { error in
      XCTAssertEqual("\(error)", "cannot read the AsyncHarness event stream \(path("none.jsonl")): No such file or directory")
    }
    let started = Event(.runStarted(RunInfo()), timestamp: Date(timeIntervalSince1970: 0)).jsonLine
    try (started + "\n" + #"{"kind":"testStarted","timestamp":"2026-11-23T08:00:00.000Z","version":4}"# + "\n")
      .write(toFile: path("newer.jsonl"), atomically: true, encoding: .utf8)
    XCTAssertThrowsError(try convertHarnessEvents(path("newer.jsonl"), toJUnit: path("newer.xml"))) { error in
      XCTAssertEqual("\(error)", "cannot read the AsyncHarness event stream \(path("newer.jsonl")): line 3: not an AsyncHarness "
        + "event: schema version 4; this build reads versions 1 to 3")
    }
    XCTAssertFalse(FileManager.default.fileExists(atPath: path("newer.xml")))
  }

  func testARunWritesTheGoldenStreamAndReadsBackAsItsOwnJUnitAndTodaysReport() throws {
    let run = try runToEnd(try harnessFixture(), Self.selection + ["--json", path("run.jsonl"), "--junit", path("run.xml")],
                           in: directory)
    XCTAssertEqual(run.status, 1, run.output + run.errors)
    let stream = try String(contentsOfFile: path("run.jsonl"), encoding: .utf8)
    XCTAssertTrue(stream.split(separator: "\n").allSatisfy { $0.hasSuffix(#""version":3}"#) || $0.contains(#""version":3,"#) })
    let events = try read(stream)
    XCTAssertEqual(events, try stream.split(separator: "\n").map { try Event(jsonLine: $0) }, "a schema 3 line is one event")

    let goldenFile = Self.golden.appendingPathComponent("schema3-run.jsonl")
    let lines = comparable(events)
    if ProcessInfo.processInfo.environment["ASYNC_HARNESS_UPDATE_GOLDEN"] == "1" {
      try lines.joined().write(to: goldenFile, atomically: true, encoding: .utf8)
    }
    let golden = try String(contentsOf: goldenFile, encoding: .utf8).split(separator: "\n").map { String($0) + "\n" }
    XCTAssertEqual(lines.count, golden.count)
    for (line, expected) in zip(lines, golden) { XCTAssertEqual(line, expected) }

    let report = try String(contentsOfFile: path("run.xml"), encoding: .utf8)
    XCTAssertEqual(try converted(path("run.jsonl"), to: "read-back.xml"), report, "the stream read back gives the run's own report")
    let before = try String(contentsOf: Self.golden.appendingPathComponent("schema2-run.xml"), encoding: .utf8)
    XCTAssertEqual(comparable(junit: report), comparable(junit: before), "the report of schema 2's run, but for times and output")
  }
}
