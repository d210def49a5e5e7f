import AsyncHarness
import Foundation
import HarnessTestSupport
import XCTest

/// Issue 9, time limits that hold and slow tests: the `harness-fixture` executable run as a
/// real child process. In-process (`--isolation none`) a test hung outside any wait is named
/// on standard error at its limit and, a grace period later, the run ends with complete
/// reports; `--slow` announces a running test at each multiple of the threshold, in every
/// isolation mode.
final class HungAndSlowTests: ReportTestCase {
  private func recorded() throws -> EventRecorder {
    try EventRecorder(jsonLines: String(contentsOfFile: path("events.jsonl"), encoding: .utf8))
  }

  private func events() throws -> [Event] { try recorded().events }

  func testAnInProcessTestHungPastItsLimitEndsTheRunWithCompleteReports() throws {
    let run = try runToEnd(try harnessFixture(), [
      "--isolation", "none", "--filter", "Crashes/passes first", "--filter", "Crashes/hangs outside a wait",
      "--time-limit", "0.5", "--junit", path("report.xml"), "--json", path("events.jsonl"),
    ])
    XCTAssertEqual(run.status, 1, run.output)
    XCTAssertEqual(run.errors, "AsyncHarness: Crashes/hangs outside a wait [expectation] is still running after its "
      + "time limit of 0.5 seconds, outside any wait the harness can end; the run ends in 1 seconds unless it returns.\n")
    XCTAssertTrue(run.output.contains("Result: 1 passed, 1 failed, 0 skipped in "), run.output)
    let events = try events()
    guard case .runEnded(let summary, _)? = events.last?.kind else { return XCTFail("the stream ends with runEnded") }
    XCTAssertEqual([summary.passed, summary.errored], [1, 1])
    let hung = try recorded().results.filter { $0.test.name == "hangs outside a wait" }.map(\.result)
    XCTAssertEqual(hung.count, 1, "the hung test ends once")
    XCTAssertEqual(hung.first?.verdict, .errored)
    XCTAssertEqual(hung.first?.issues.map(\.kind), [.timeLimitExceeded])
    XCTAssertEqual(hung.first?.issues.first?.message, "Test exceeded its time limit of 0.5 seconds outside any wait the "
      + "harness could end, and had not returned 1 seconds later, so the run was ended")
    try assertCheckerPasses(path("report.xml"), ["--expect-tests", "2", "--expect-failures", "0", "--expect-errors", "1",
                                                 "--expect-skipped", "0"])
  }

  /// With no flag, a hung test ends at the default limit of a minute: its worker is stopped,
  /// the test errors, and the run goes on to the next test.
  func testAHungTestWithNoFlagsEndsAtTheDefaultLimit() throws {
    let started = ContinuousClock().now
    let run = try runToEnd(try harnessFixture(), [
      "--filter", "Crashes/hangs outside a wait", "--filter", "Crashes/passes first", "--json", path("events.jsonl"),
    ], limit: 120)
    let took = started.duration(to: .now)
    XCTAssertEqual(run.status, 1, run.output)
    XCTAssertTrue(run.output.contains("Result: 1 passed, 1 failed, 0 skipped in "), run.output)
    let hung = try recorded().results.filter { $0.test.name == "hangs outside a wait" }.map(\.result)
    XCTAssertEqual(hung.map(\.verdict), [.errored])
    XCTAssertEqual(hung.first?.issues.first?.message.hasPrefix("Test exceeded its time limit of 60 seconds outside any wait"),
                   true, "\(hung)")
    XCTAssertGreaterThanOrEqual(took, .seconds(60), "the limit is a minute, not less")
    XCTAssertLessThan(took, .seconds(75), "the run ends within seconds of the limit")
  }

  func testSlowTestsAreAnnouncedAtEachMultipleOfTheThresholdWhileTheyRun() throws {
    for isolation in ["worker", "none"] {
      let run = try runToEnd(try harnessFixture(), [
        "--isolation", isolation, "--filter", "Crashes/blocks on a semaphore", "--filter", "Crashes/passes first",
        "--time-limit", "1", "--slow", "0.25", "--json", path("events.jsonl"),
      ])
      XCTAssertEqual(run.status, 1, run.output)
      XCTAssertTrue(run.output.contains("SLOW  Crashes/blocks on a semaphore [expectation] still running after 0.250s\n"),
                    run.output)
      let events = try events()
      let slow = events.enumerated().compactMap { index, event -> (index: Int, name: String, elapsed: Double)? in
        guard case .testSlow(let test, let elapsed) = event.kind else { return nil }
        return (index, test.name, elapsed)
      }
      let ended = try XCTUnwrap(events.firstIndex { event in
        if case .testEnded(let test, _) = event.kind { test.name == "blocks on a semaphore" } else { false }
      })
      XCTAssertEqual(Set(slow.map(\.name)), ["blocks on a semaphore"], "a test that passes at once is never slow")
      XCTAssertEqual(slow.first?.elapsed, 0.25, isolation)
      XCTAssertGreaterThanOrEqual(slow.count, 3, "the test runs at least 1 s: \(slow.map(\.elapsed))")
      for (earlier, later) in zip(slow, slow.dropFirst()) {
        XCTAssertGreaterThan(later.elapsed, earlier.elapsed)
        XCTAssertEqual((later.elapsed / 0.25).rounded(), later.elapsed / 0.25, "a multiple of the threshold")
      }
      XCTAssertTrue(slow.allSatisfy { $0.index < ended }, "announcements come while the test runs")
    }
  }

  func testSlowMustBeAPositiveNumberOfSeconds() throws {
    let run = try runToEnd(try harnessFixture(), ["--slow", "0"])
    XCTAssertEqual(run.status, 2)
    XCTAssertTrue(run.errors.hasPrefix("error: --slow must be a positive number of seconds, not 0.0\n"), run.errors)
  }
}
