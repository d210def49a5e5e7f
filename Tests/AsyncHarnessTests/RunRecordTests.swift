@testable import AsyncHarness
import Foundation
import XCTest

/// Issue 33, the record `--rerun-failed` reads: written and read back whatever the test names
/// hold, the failed tests each once, and a rerun's flags.
final class RunRecordTests: XCTestCase {
  private let hostile = TestPath(suite: "S/1", name: "<script>alert(1)</script>\u{07}\n")

  func testARecordReadsBackAndNamesEachFailedTestOnce() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("run-record-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("h/last-run.json").path
    let plain = TestPath(suite: "S", name: "t")
    let record = RunRecord(arguments: ["--waiter", "all", "--shuffle", "7"], tests: [
      .init(id: hostile, waiter: "semaphore", repetition: 1, verdict: .failed),
      .init(id: plain, waiter: "semaphore", repetition: 1, verdict: .flaky),
      .init(id: hostile, waiter: "expectation", repetition: 1, verdict: .errored),
      .init(id: plain, waiter: "expectation", repetition: 1, verdict: .passed),
    ])
    try record.write(to: path, executable: "Suites")
    XCTAssertEqual(try RunRecord.read(from: path), record)
    XCTAssertEqual(record.failed, [hostile])
    XCTAssertNil(try RunRecord.read(from: directory.appendingPathComponent("none.json").path))
    XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("h").path),
                   ["last-run.json"], "no temporary file is left")
  }

  /// The last run's selection is dropped (in both spellings), the flags given now come after
  /// the recorded ones (so they win), then an `--only` for each failed test.
  func testARerunKeepsTheLastFlagsButItsSelection() {
    let record = RunRecord(arguments: ["--waiter", "semaphore", "--only", "A/a", "--filter=x", "--only-from", "ids.txt",
                                       "--retries", "2"],
                           tests: [.init(id: hostile, waiter: "semaphore", repetition: 1, verdict: .failed)])
    XCTAssertEqual(record.rerunArguments(given: ["--rerun-failed", "--retries", "0"]),
                   ["--waiter", "semaphore", "--retries", "2", "--retries", "0", "--only", hostile.description])
  }

  /// Issue 49: a run red only because of failures outside every test still has tests to
  /// rerun: those of the suite where each happened, and its suspects, after the failed ones.
  func testTheTestsAFailureOutsideEveryTestNamesAreRerun() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("run-record-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("last-run.json").path
    let recorder = RunRecorder(path: path, executable: "harness test", arguments: [], warn: { _ in })
    let ledger = SuiteRun(suite: "M.Ledger", host: "xctest")
    for (suite, name, verdict) in [("M.Ledger", "testA", Verdict.passed), ("M.Ledger", "testB", .passed),
                                   ("M.Other", "testC", .failed), ("M.Quiet", "testD", .passed)] {
      let test = TestID(suite: suite, name: name, host: "xctest")
      recorder.handle(Event(.testEnded(test, TestEnd(once: TestResult(verdict: verdict), duration: 0))))
    }
    recorder.handle(Event(.outsideFailure(OutsideFailure(place: .classTearDown, suite: ledger, issue: Issue(kind: .crashed,
      message: "crashed"), suspects: ["M.Quiet/testD"], afterTests: true))))
    recorder.finish()
    let record = try XCTUnwrap(try RunRecord.read(from: path))
    XCTAssertEqual(record.failed.map(\.description), ["M.Other/testC", "M.Ledger/testA", "M.Ledger/testB", "M.Quiet/testD"])
    XCTAssertEqual(record.outside.map(\.description), ["M.Ledger/testA", "M.Ledger/testB", "M.Quiet/testD"])
  }
}
