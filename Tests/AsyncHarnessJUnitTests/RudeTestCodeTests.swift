import AsyncHarness
import Foundation
import HarnessTestSupport
import XCTest

/// Issue 20: ordinary but rude test code (the `harness-rude-fixture` executable) under worker
/// isolation behaves as under `swift test`: tests that read standard input, start processes,
/// close descriptors, change directory, print binary or 20 MB beside a 2 MB name, repeat
/// names, or abandon an `async` body at their time limit; every run ends within seconds,
/// every neighbour passes, verdicts are exact and the JUnit report passes the checker.
final class RudeTestCodeTests: ReportTestCase {
  /// The fixture's source, for the locations its failures print.
  private let fixtureSource = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures/harness-rude-fixture/main.swift")

  private func fixture() throws -> URL { try builtExecutable("harness-rude-fixture") }

  /// Runs the fixture with standard input `/dev/null`, as CI does, bounded to 60 seconds.
  private func run(_ arguments: [String], in directory: URL? = nil) throws -> (status: Int32, output: String, errors: String) {
    try runToEnd(try fixture(), arguments, in: directory, input: FileHandle(forReadingAtPath: "/dev/null"), limit: 60)
  }

  /// Every `testEnded` of a JSON Lines file, by `Suite/test` path.
  private func results(_ file: String) throws -> [String: TestResult] {
    var results: [String: TestResult] = [:]
    for (test, result, _) in try EventRecorder(jsonLines: String(contentsOfFile: file, encoding: .utf8)).results {
      results[test.path] = result
    }
    return results
  }

  /// The line of the fixture that contains `text`, counted from 1.
  private func fixtureLine(containing text: String) throws -> Int {
    let lines = try String(contentsOf: fixtureSource, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
    return try XCTUnwrap(lines.firstIndex { $0.contains(text) }) + 1
  }

  func testTheDefaultIsolationKeepsRudeTestsInvisible() throws {
    try assertRudeTestsAreInvisible([])
  }

  func testTwoWorkersKeepRudeTestsInvisible() throws {
    try assertRudeTestsAreInvisible(["--workers", "2"])
  }

  func testAProcessPerTestKeepsRudeTestsInvisible() throws {
    try assertRudeTestsAreInvisible(["--isolation", "test"])
  }

  private func assertRudeTestsAreInvisible(_ isolation: [String]) throws {
    let start = ContinuousClock().now
    let run = try run(isolation + ["--time-limit", "1", "--junit", path("report.xml"), "--json", path("events.jsonl")])
    XCTAssertLessThan(start.duration(to: .now), .seconds(60), "the run was killed: it hung")
    XCTAssertEqual(run.status, 1, run.output + run.errors)
    XCTAssertTrue(run.output.contains("Result: 27 passed, 5 failed, 0 skipped in "), run.output)
    XCTAssertEqual(run.errors, """
      warning: the run has 2 suites named "Twin"; they are reported as "Twin", "Twin#01"
      warning: suite "Duplicates" has 3 tests named "adds same"; they are reported as "adds same", "adds same#01", "adds same#02"

      """)
    let results = try results(path("events.jsonl"))
    XCTAssertEqual(results.count, 32, results.keys.sorted().joined(separator: "\n"))
    let failing: [String: Verdict] = [
      "Directory/fails after": .failed, "Duplicates/adds same#01": .failed, "Twin#01/only": .failed,
      "Abandoned/spins": .errored, "Abandoned/blocks its thread": .errored,
    ]
    for (path, result) in results {
      XCTAssertEqual(result.verdict, failing[path] ?? .passed, "\(path): \(result.issues.map(\.message))")
    }
    for abandoned in ["Abandoned/spins", "Abandoned/blocks its thread"] {
      XCTAssertEqual(results[abandoned]?.issues.map(\.message), [
        "Test exceeded its time limit of 1 seconds in its async body, which was cancelled and left running, so its "
          + "worker process is retired: the next test runs in a fresh one",
      ])
    }
    XCTAssertEqual(results["Duplicates/adds same#01"]?.issues.map(\.message), ["Expectation failed: the second \"same\" fails"])
    // Locations stay relative to the directory the run started in.
    let line = try fixtureLine(containing: "fails after the directory changed")
    XCTAssertTrue(run.output.contains("    Tests/Fixtures/harness-rude-fixture/main.swift:\(line): fails after the directory changed\n"),
                  run.output)
    try assertCheckerPasses(path("report.xml"), ["--expect-tests", "32", "--expect-failures", "3", "--expect-errors", "2",
                                                 "--expect-skipped", "0"])
  }

  /// In-process, a test that changes the working directory no longer moves the reports: they
  /// land where the relative paths pointed when the run started.
  func testInProcessReportsWithRelativePathsSurviveAChangeOfDirectory() throws {
    let run = try run(["--isolation", "none", "--filter", "Directory/", "--filter", "Duplicates/",
                       "--junit", "report.xml", "--json", "events.jsonl"], in: directory)
    XCTAssertEqual(run.status, 1, run.output + run.errors)
    let results = try results(path("events.jsonl"))
    XCTAssertEqual(results.mapValues(\.verdict), [
      "Directory/changes directory": .passed, "Directory/fails after": .failed, "Duplicates/adds same": .passed,
      "Duplicates/adds same#01": .failed, "Duplicates/adds other": .passed, "Duplicates/adds same#02": .passed,
    ])
    let line = try fixtureLine(containing: "fails after the directory changed")
    XCTAssertTrue(run.output.contains("    harness_rude_fixture/main.swift:\(line): fails after the directory changed\n"), run.output)
    try assertCheckerPasses(path("report.xml"), ["--expect-tests", "6", "--expect-failures", "2", "--expect-errors", "0",
                                                 "--expect-skipped", "0"])
  }

  /// A suites executable started with standard input closed runs as one given /dev/null.
  func testAClosedStandardInputIsNullInTheWorker() throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", "exec \"$0\" --filter Stdin/ --json \"$1\" <&-", try fixture().path, path("events.jsonl")]
    process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
    try process.run()
    process.waitUntilExit()
    XCTAssertEqual(process.terminationStatus, 0)
    XCTAssertEqual(try results(path("events.jsonl")).values.map(\.verdict), Array(repeating: .passed, count: 6))
  }
}
