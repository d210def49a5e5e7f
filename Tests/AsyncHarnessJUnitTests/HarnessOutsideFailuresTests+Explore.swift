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

  /// A Swift Testing test leaves a thread that records an issue 100 ms after it returned, or a
  /// Dispatch block that crashes then: under `swift test` (and a plain run) it comes while the
  /// next test runs, and the run is red. Under `--explore N` each schedule's bundle ran the test
  /// alone, and its testing library ended the run, and the bundle, before it came: green. The
  /// run's end now waits for the work the test left, and each schedule fails outside the test,
  /// in the plain run's words.
  func testASwiftTestingTestsLateIssueOrCrashFailsOutsideItInEverySchedule() throws {
    let (issuing, crashing) = ("LedgerTests.LateSwiftTests/a_recordsAnIssueAfterItReturned()",
                               "LedgerTests.LateSwiftTests/b_crashesAfterItReturned()")
    let late = try run("lateIssue", ["LateSwiftTests/a_"], flags: ["--explore", "2"])
    XCTAssertEqual(late.status, 1, late.output)
    XCTAssertEqual(late.failures.map(\.place), [.noTest, .noTest], "\(late.failures)")
    for failure in late.failures {
      XCTAssertEqual(failure.issue.message, "Issue recorded - the ledger failed after its test returned")
      XCTAssertEqual(failure.issue.sourceLocation?.line, try fixtureLine(containing: "Issue.record(\"the ledger failed after"))
      XCTAssertEqual(failure.suspects, [issuing])
    }
    XCTAssertEqual(late.verdicts, [issuing: .passed])
    let crash = try run("lateCrash", ["LateSwiftTests/b_"], flags: ["--explore", "2"])
    XCTAssertEqual(crash.status, 1, crash.output)
    XCTAssertEqual(crash.failures.map(\.place), [.process, .process], "\(crash.failures)")
    for failure in crash.failures {
      XCTAssertTrue(failure.issue.message.hasPrefix("The test bundle ended with signal SIGILL (illegal instruction) while none "
        + "of its tests ran, after \(crashing) returned; its last output:"), failure.issue.message)
      XCTAssertTrue(failure.issue.message.contains("Fatal error: the ledger crashed after its test returned"), failure.issue.message)
    }
    XCTAssertEqual(crash.verdicts, [crashing: .passed])
  }

  /// A test's `tearDown()` cancels a watchdog its `setUp()` sent for 150 ms later, which would
  /// fail it: under `swift test` it never fires. The wait for the work an explored XCTest test
  /// left ran before `tearDown()`, where the watchdog fired: a false red in every schedule. It
  /// now runs after, and the test passes in each, as plainly.
  func testAWatchdogItsTearDownCancelsNeverFiresInAnExploredSchedule() throws {
    for flags in [[], ["--explore", "3"]] {
      let run = try run("watchdog", ["WatchdogXCTests"], flags: flags)
      XCTAssertEqual(run.status, 0, "\(flags): \(run.output)")
      XCTAssertEqual(run.failures, [], "\(flags)")
      XCTAssertEqual(run.verdicts, ["LedgerTests.WatchdogXCTests/testCancelsItsWatchdogInTearDown": .passed], "\(flags)")
      XCTAssertFalse(run.output.contains("the ledger's watchdog fired"), run.output)
    }
  }

  /// Under `--explore N` each schedule's bundle ended with its test: a crash in its class
  /// tear-down, or a status an exit handler set, never came, and the run was green where
  /// `swift test` (and a plain run) is red. The bundle is now heard to its exit, a moment
  /// (``BundleLaneMachine/scheduleExitLimit``): each schedule fails outside its test, in the
  /// plain run's words.
  func testWhatRunsAfterAnExploredTestFailsOutsideItInEverySchedule() throws {
    let classTearDown = try run("classTearDown", ["ClassTearDownXCTests/testOne"], flags: ["--explore", "2"])
    XCTAssertEqual(classTearDown.status, 1, classTearDown.output)
    XCTAssertEqual(classTearDown.failures.map(\.place), [.classTearDown, .classTearDown], "\(classTearDown.failures)")
    for failure in classTearDown.failures {
      XCTAssertTrue(failure.issue.message.contains("in class func tearDown() of LedgerTests.ClassTearDownXCTests, after its "
                                                   + "tests ran"), failure.issue.message)
      XCTAssertTrue(failure.issue.message.contains("Fatal error: class tear-down could not close the ledger"), failure.issue.message)
    }
    XCTAssertEqual(classTearDown.verdicts, ["LedgerTests.ClassTearDownXCTests/testOne": .passed])
    for (outside, suite, library, test) in [
      ("exitStatusXCTest", "LedgerTests.ExitStatusXCTests", "xctest", "testLeavesAnExitHandler"),
      ("exitStatusSwiftTesting", "LedgerTests.ExitStatusSwiftTests", "swift-testing", "leavesAnExitHandler()"),
    ] {
      let run = try run(outside, [suite], flags: ["--explore", "2"])
      XCTAssertEqual(run.status, 1, run.output)
      XCTAssertEqual(run.failures.map(\.issue.message), Array(repeating: "The test bundle ended with exit status 1 while none "
        + "of its tests ran, after \(suite)/\(test) returned: none of the tests it ran failed, so "
        + "\(library == "xctest" ? "XCTest" : "Swift Testing") itself ends with status 0: code that ran after them (an "
        + "atexit handler, a thread calling exit) ended the process so; it printed nothing", count: 2), outside)
      XCTAssertEqual(run.verdicts, ["\(suite)/\(test)": .passed], outside)
    }
  }
}
