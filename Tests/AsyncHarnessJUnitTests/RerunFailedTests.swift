import AsyncHarness
import Foundation
import Synchronization
import XCTest

/// Issue 33, `--rerun-failed`: the `harness-fixture` executable as a child process whose
/// working directory is a temporary directory, so the record of its last run
/// (`.build/harness/harness-fixture/last-run.json`) lands there.
final class RerunFailedTests: ReportTestCase {
  private var record: String { path(".build/harness/harness-fixture/last-run.json") }

  private func run(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
    try runToEnd(try harnessFixture(), arguments, in: directory)
  }

  /// The tests a run's JSON Lines file says ended, with their last attempt's verdict.
  private func verdicts(_ events: String) throws -> [String: Verdict] {
    var verdicts: [String: Verdict] = [:]
    for line in try String(contentsOfFile: path(events), encoding: .utf8).split(separator: "\n") {
      if case .testEnded(let test, let result) = try Event(jsonLine: line).kind {
        verdicts["\(test.suite)/\(test.name)"] = result.verdict
      }
    }
    return verdicts
  }

  /// After a failing run, only the tests that failed or errored run again, under the last
  /// run's flags (the waiter, the retries), with a new flag winning over the recorded one.
  func testAfterAFailingRunOnlyTheFailedAndErroredTestsRunAgain() throws {
    let first = try run(["--filter", "Flaky/", "--filter", "Crashes/passes first", "--filter", "Crashes/exit 3",
                         "--waiter", "semaphore", "--retries", "1", "--json", path("first.jsonl")])
    XCTAssertEqual(first.status, 1, first.output + first.errors)
    XCTAssertTrue(FileManager.default.fileExists(atPath: record), "the run was recorded")
    XCTAssertEqual(try verdicts("first.jsonl").filter { [.failed, .errored].contains($0.value) }.keys.sorted(),
                   ["Crashes/exit 3", "Flaky/always fails"])

    let rerun = try run(["--rerun-failed", "--json", path("rerun.jsonl")])
    XCTAssertEqual(rerun.status, 1, rerun.output + rerun.errors)
    XCTAssertTrue(rerun.output.hasPrefix(
      "Rerunning 2 tests that failed or errored in the last run (.build/harness/harness-fixture/last-run.json)\n"),
                  rerun.output)
    XCTAssertEqual(try verdicts("rerun.jsonl"), ["Crashes/exit 3": .errored, "Flaky/always fails": .failed])
    let lines = try String(contentsOfFile: path("rerun.jsonl"), encoding: .utf8).split(separator: "\n")
    let attempts = try lines.compactMap { line -> TestID? in
      if case .testStarted(let test) = try Event(jsonLine: line).kind { test } else { nil }
    }
    XCTAssertEqual(Set(attempts.map(\.host)), ["semaphore"], "the last run's waiter")
    XCTAssertEqual(attempts.count, 4, "the last run's --retries 1: two attempts each")

    // The rerun was recorded too: rerunning again with --retries 0 runs the same two, once each.
    let again = try run(["--rerun-failed", "--retries", "0", "--json", path("again.jsonl")])
    XCTAssertEqual(again.status, 1, again.output + again.errors)
    XCTAssertEqual(try verdicts("again.jsonl").count, 2)
    XCTAssertEqual(try String(contentsOfFile: path("again.jsonl"), encoding: .utf8).components(separatedBy: "testStarted").count - 1, 2)
  }

  /// After a green run there is nothing to rerun: it says so and exits with status 0.
  func testAfterAGreenRunThereIsNothingToRerun() throws {
    let green = try run(["--filter", "Fixture/passes"])
    XCTAssertEqual(green.status, 0, green.output + green.errors)
    let rerun = try run(["--rerun-failed"])
    XCTAssertEqual(rerun.status, 0, rerun.errors)
    XCTAssertEqual(rerun.output,
                   "Nothing to rerun: no test failed or errored in the last run (.build/harness/harness-fixture/last-run.json)\n")
  }

  /// With no record, a clear message on standard error and exit status 2.
  func testWithNoRecordItIsAnError() throws {
    let rerun = try run(["--rerun-failed"])
    XCTAssertEqual(rerun.status, 2)
    XCTAssertEqual(rerun.output, "")
    XCTAssertEqual(rerun.errors, "error: --rerun-failed: no run of harness-fixture is recorded "
      + "(.build/harness/harness-fixture/last-run.json does not exist); run the tests once first\n")
  }

  /// In a process that keeps no record (`HarnessMain.status`), `--rerun-failed` says so.
  func testACommandThatKeepsNoRecordSaysSo() {
    let errors = Mutex("")
    let status = HarnessMain.status(arguments: ["--rerun-failed"], suites: [Suite("S") { Test("t") { _ in } }],
                                    output: { _ in }, errors: { text in errors.withLock { $0 += text } })
    XCTAssertEqual(status, 2)
    XCTAssertTrue(errors.withLock { $0 }.contains("this command keeps none"))
  }
}
