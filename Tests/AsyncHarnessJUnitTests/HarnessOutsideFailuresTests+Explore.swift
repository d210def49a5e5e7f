import AsyncHarness
import XCTest

/// Under `--explore N` and `--schedule TOKEN` each test runs alone, in a bundle of its own
/// that ends with it: what fails outside the test's body (an issue of no test, a failure its
/// work sends for later) is still heard, in each schedule.
extension HarnessOutsideFailuresTests {
  /// An issue a detached task records while its test runs is no test's, plainly and under
  /// `--explore N`, where each explored schedule's worker, stopped once its test ended, lost it:
  /// the run was green where `swift test` is red. It is reported under the suite of the test
  /// running as it came, which it names (before, under the suite of the test that ended last
  /// in the process, whichever it was, or the bundle's).
  func testAnIssueOfNoTestIsAFailureInEveryExploredSchedule() throws {
    for (flags, schedules) in [([String](), 1), (["--explore", "2"], 2)] {
      let run = try run("detachedIssue", ["DetachedIssue"], flags: flags)
      XCTAssertEqual(run.status, 1, run.output)
      XCTAssertEqual(run.failures.count, schedules, "\(flags): \(run.failures)")
      for failure in run.failures {
        XCTAssertEqual(failure.place, .noTest)
        XCTAssertEqual(failure.suite, SuiteRun(suite: "LedgerTests.DetachedIssue", host: "swift-testing"))
        XCTAssertEqual(failure.issue.message, "Issue recorded - recorded by a detached task")
        XCTAssertEqual(failure.issue.sourceLocation?.line, try fixtureLine(containing: "recorded by a detached task"))
        XCTAssertEqual(failure.suspects, ["LedgerTests.DetachedIssue/awaitsADetachedIssue()"], "the test running as it came")
      }
      XCTAssertTrue(run.output.contains("ERROR LedgerTests.DetachedIssue [swift-testing] no test: Issue recorded - "
                                          + "recorded by a detached task"), run.output)
      XCTAssertTrue(run.output.contains(", \(schedules) failed outside tests in "), run.output)
      XCTAssertEqual(run.verdicts, ["LedgerTests.DetachedIssue/awaitsADetachedIssue()": .passed], "\(flags)")
    }
  }

  /// An XCTest test sends an `XCTFail` for 100 ms after it returns: under `swift test` (and a
  /// plain run) it fails the test running then. Under `--explore N` each schedule's bundle ran
  /// that test alone and ended with it, so the failure never came and the run was green; the
  /// test's end now waits for the work it left, and the failure is its own, in every schedule.
  func testAFailureAfterItsXCTestReturnedIsHeardInEveryExploredSchedule() throws {
    let line = try fixtureLine(containing: "XCTFail(\"the ledger failed after its test returned\")")
    let words = "OutsideTheBodies.swift:\(line): failed - the ledger failed after its test returned\n"
    let (first, second) = ("LedgerTests.LateFailureXCTests/testA_FailsAfterItReturned",
                           "LedgerTests.LateFailureXCTests/testB_RunsWhileItComes")
    let plain = try run("lateXCTFail", ["LateFailureXCTests"])
    XCTAssertEqual(plain.status, 1, plain.output)
    XCTAssertEqual(plain.verdicts, [first: .passed, second: .failed])
    XCTAssertTrue(plain.output.contains(words), plain.output)
    let explored = try run("lateXCTFail", ["LateFailureXCTests"], flags: ["--explore", "2"])
    XCTAssertEqual(explored.status, 1, explored.output)
    XCTAssertEqual(explored.failures, [])
    XCTAssertEqual(explored.verdicts, [first: .failed, second: .passed])
    XCTAssertEqual(explored.output.components(separatedBy: "FAIL  \(first) [xctest]").count - 1, 2, explored.output)
    XCTAssertEqual(explored.output.components(separatedBy: words).count - 1, 2, explored.output)
    XCTAssertEqual(explored.issues[first]?.map(\.message), ["failed - the ledger failed after its test returned"])
  }
}
