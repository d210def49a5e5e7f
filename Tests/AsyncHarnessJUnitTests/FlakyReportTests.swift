import AsyncHarness
import Foundation
import XCTest

@testable import AsyncHarnessJUnit

/// Issue 9, retries and flaky results, end to end: the `harness-fixture` executable's
/// `Flaky` suite (tests that fail, or crash, on their first attempts by design) run as a
/// real child process with `--retries 1`, in worker processes and in-process. Flaky tests
/// pass with Surefire's `<flakyFailure>`/`<flakyError>`, a test that failed every attempt
/// fails with `<rerunFailure>`, and the checker accepts the report with exact totals.
final class FlakyReportTests: ReportTestCase {
  /// Each attempt of each ended test, as its test's one `testEnded` gives them:
  /// `name #attempt outcome`, then ` retry` for an attempt that ran again; the last
  /// attempt with its test's verdict.
  private func endings() throws -> [String] {
    try String(contentsOfFile: path("events.jsonl"), encoding: .utf8).split(separator: "\n").flatMap { line in
      guard case .testEnded(let test, let end) = try Event(jsonLine: line).kind else { return [String]() }
      return end.attempts.map { attempt in
        attempt.number == test.attempt
          ? "\(test.name) #\(attempt.number) \(end.verdict.rawValue)"
          : "\(test.name) #\(attempt.number) \(attempt.outcome.rawValue) retry"
      }
    }
  }

  func testFlakyTestsPassWithTheirFailedAttemptsInEveryReport() throws {
    let run = try runToEnd(try harnessFixture(), ["--filter", "Flaky/", "--retries", "1", "--junit", path("report.xml"),
                                                  "--json", path("events.jsonl")])
    XCTAssertEqual(run.status, 1, "a test failed every attempt: \(run.output)")
    XCTAssertTrue(run.output.hasSuffix("""
      Flaky (failed, then passed on a retry):
          Flaky/passes on attempt 2 [expectation]: passed on attempt 2
          Flaky/crashes, then passes [expectation]: passed on attempt 2
          Flaky/passes on attempt 3 [expectation]: passed on attempt 3

      """ + run.output.split(separator: "\n").last! + "\n"), run.output)
    XCTAssertTrue(run.output.contains("\nResult: 1 passed, 3 flaky, 1 failed, 0 skipped in "), run.output)
    XCTAssertEqual(try endings(), [
      "passes #1 passed",
      "passes on attempt 2 #1 failed retry", "passes on attempt 2 #2 flaky",
      "crashes, then passes #1 errored retry", "crashes, then passes #2 flaky",
      "passes on attempt 3 #1 failed retry", "passes on attempt 3 #2 failed retry", "passes on attempt 3 #3 flaky",
      "always fails #1 failed retry", "always fails #2 failed",
    ])
    try assertCheckerPasses(path("report.xml"), ["--expect-tests", "5", "--expect-failures", "1", "--expect-errors", "0",
                                                 "--expect-skipped", "0"])

    let cases = Dictionary(uniqueKeysWithValues: try XMLReader.readDocument(path("report.xml")).testCases.map {
      ($0.attributeMap["name"]!, $0)
    })
    let second = try XCTUnwrap(cases["passes on attempt 2"])
    XCTAssertEqual(second.elements.map(\.name), ["flakyFailure", "system-out"])
    let flaky = second.elements[0]
    XCTAssertEqual(flaky.attributeMap, ["message": "attempt 1: Expectation failed: attempt 1 fails", "type": "expectationFailed"])
    XCTAssertEqual(flaky.elements.map(\.name), ["stackTrace", "system-out"])
    XCTAssertEqual(flaky.elements[0].text, "Expectation failed: attempt 1 fails Tests/Fixtures/harness-fixture/main.swift:66")
    XCTAssertEqual(flaky.elements[1].text, "attempt 1\n", "the failed attempt keeps its own output")
    XCTAssertEqual(second.elements[1].text, "attempt 2\n")

    let crashed = try XCTUnwrap(cases["crashes, then passes"]?.elements.first)
    XCTAssertEqual(crashed.name, "flakyError")
    XCTAssertEqual(crashed.attributeMap["type"], "crashed")
    XCTAssertEqual(cases["passes on attempt 3"]?.elements.map(\.name), ["flakyFailure", "flakyFailure"])
    XCTAssertEqual(cases["passes on attempt 3"]?.elements.map { $0.attributeMap["message"]! },
                   ["attempt 1: Expectation failed: attempt 1 fails", "attempt 2: Expectation failed: attempt 2 fails"])
    let failing = try XCTUnwrap(cases["always fails"])
    XCTAssertEqual(failing.elements.map(\.name), ["failure", "rerunFailure"])
    XCTAssertEqual(failing.elements[1].attributeMap["message"], "attempt 1: fails every attempt")
    XCTAssertEqual(cases["passes"]?.elements.map(\.name), [])
  }

  func testInProcessRetriesGiveTheSameResults() throws {
    let run = try runToEnd(try harnessFixture(), ["--isolation", "none", "--filter", "Flaky/passes", "--retries", "1",
                                                  "--json", path("events.jsonl")])
    XCTAssertEqual(run.status, 0, "flaky tests do not fail the run: \(run.output)")
    XCTAssertEqual(try endings(), [
      "passes #1 passed",
      "passes on attempt 2 #1 failed retry", "passes on attempt 2 #2 flaky",
      "passes on attempt 3 #1 failed retry", "passes on attempt 3 #2 failed retry", "passes on attempt 3 #3 flaky",
    ])
  }

  func testFailOnFlakyFailsARunWhoseTestsAllPassedInTheEnd() throws {
    let run = try runToEnd(try harnessFixture(), ["--filter", "Flaky/passes on attempt", "--retries", "1", "--fail-on-flaky"])
    XCTAssertEqual(run.status, 1, run.output)
    XCTAssertTrue(run.output.contains("Result: 0 passed, 2 flaky, 0 failed, 0 skipped in "), run.output)
    XCTAssertEqual(run.errors, "error: 2 flaky tests (--fail-on-flaky)\n")
  }

  /// A test's one `testEnded` carries its attempts: the last is the testcase's result, the
  /// attempts before it its reruns, each with the issues its `issueRecorded` events said.
  func testTheAttemptsOfATestsEndAreItsReruns() throws {
    let suite = SuiteRun(suite: "Cut", host: "semaphore")
    var events = [Event(.runStarted(RunInfo(waiters: ["semaphore"]))), Event(.suiteStarted(suite))]
    var attempts: [TestAttempt] = []
    var id = TestID(suite: "Cut", name: "retried", host: "semaphore")
    for attempt in 1...2 {
      id.attempt = attempt
      let broke = Issue(kind: .expectationFailed, message: "broke \(attempt)")
      events += [Event(.testStarted(id)), Event(.issueRecorded(id, broke))]
      attempts.append(TestAttempt(number: attempt, outcome: .failed, duration: 0.25, issues: [broke]))
    }
    events.append(Event(.testEnded(id, TestEnd(verdict: .failed, attempts: attempts))))
    let testCase = try XCTUnwrap(try report(events).testCases.first)
    XCTAssertEqual(testCase.attributeMap["time"], "0.500")
    XCTAssertEqual(testCase.elements.map(\.name), ["failure", "rerunFailure"])
    XCTAssertEqual(testCase.elements[0].attributeMap["message"], "broke 2")
    XCTAssertEqual(testCase.elements[1].attributeMap["message"], "attempt 1: broke 1")
  }

  func testRetriesMustNotBeNegative() throws {
    let run = try runToEnd(try harnessFixture(), ["--retries=-1"])
    XCTAssertEqual(run.status, 2)
    XCTAssertTrue(run.errors.hasPrefix("error: --retries must be 0 or more, not -1\n"), run.errors)
  }
}
