import AsyncHarness
import Foundation
import HarnessTestSupport
import XCTest

@testable import AsyncHarnessJUnit

/// Issue 49: wherever `swift test` is red, `harness test` is red and says why in the user's
/// words, for failures outside any test's body. Each case of the fixture's
/// `OutsideTheBodies.swift` (Tests/Fixtures/ExistingTests, chosen by EXISTING_TESTS_OUTSIDE)
/// makes `swift test` red; here each is one `outsideFailure` of its own (place, suite, the
/// words, the suspects), the run exits with status 1, and the JUnit report gives it a testcase
/// of its own (`initializationError` or `executionError`) that the dashboards' schemas accept.
final class HarnessOutsideFailuresTests: ReportTestCase {
  static let package = FixturePackage("ExistingTests", scratch: "existing-tests-scratch")

  /// What a run of one case gave: its status, console, failures outside tests, verdicts and
  /// attempts by test path, and its JUnit report.
  struct Run {
    var status: Int32
    var output: String
    var failures: [OutsideFailure] = []
    var verdicts: [String: Verdict] = [:]
    var reasons: [String: String] = [:]
    var attempts: [String: Int] = [:]
    var issues: [String: [Issue]] = [:]
    var junit: String
  }

  /// Runs the fixture's tests that `filters` select with EXISTING_TESTS_OUTSIDE=`outside`.
  func run(_ outside: String, _ filters: [String], flags: [String] = []) throws -> Run {
    try Self.package.build()
    let json = path("\(outside).jsonl")
    let junit = path("\(outside).xml")
    var environment = ProcessInfo.processInfo.environment
    environment["EXISTING_TESTS_OUTSIDE"] = outside
    let process = try runToEnd(try builtHarness(), [
      "test", "--package-path", Self.package.directory.path, "--skip-build", "--time-limit", "60", "--json", json,
      "--junit", junit,
    ] + filters.flatMap { ["--filter", $0] } + flags + ["--", "--scratch-path", Self.package.scratch.path],
      environment: environment, limit: 300)
    var run = Run(status: process.status, output: process.output + process.errors, junit: junit)
    for line in try String(contentsOfFile: json, encoding: .utf8).split(separator: "\n") {
      switch try Event(jsonLine: line).kind {
      case .outsideFailure(let failure): run.failures.append(failure)
      case .testEnded(let test, let end):
        run.verdicts[test.path] = end.verdict
        run.reasons[test.path] = end.reason
        run.attempts[test.path] = end.attempts.count
        run.issues[test.path] = end.attempts.flatMap(\.issues)
      case .runEnded(let summary, _): XCTAssertEqual(summary.outsideFailures, run.failures.count, "runEnded counts them")
      default: break
      }
    }
    return run
  }

  /// The one failure outside tests of `run`, with its place, suite and the words it must say.
  private func assertOneFailure(_ run: Run, _ place: OutsideFailure.Place, under suite: String, library: String,
                                saying words: [String], file: StaticString = #filePath, line: UInt = #line) throws
    -> OutsideFailure {
    XCTAssertEqual(run.status, 1, run.output, file: file, line: line)
    XCTAssertEqual(run.failures.count, 1, "\(run.failures)", file: file, line: line)
    let failure = try XCTUnwrap(run.failures.first, file: file, line: line)
    XCTAssertEqual(failure.place, place, file: file, line: line)
    XCTAssertEqual(failure.suite, SuiteRun(suite: suite, host: library), file: file, line: line)
    for word in words { XCTAssertTrue(failure.issue.message.contains(word), failure.issue.message, file: file, line: line) }
    XCTAssertTrue(run.output.contains("ERROR \(suite) [\(library)] \(place.description): "), run.output, file: file, line: line)
    XCTAssertTrue(run.output.contains(", 1 failed outside tests in "), run.output, file: file, line: line)
    return failure
  }

  /// The line of the fixture's `OutsideTheBodies.swift` that contains `text`, counted from 1.
  func fixtureLine(containing text: String) throws -> Int {
    let source = Self.package.directory.appendingPathComponent("Tests/LedgerTests/OutsideTheBodies.swift")
    let lines = try String(contentsOf: source, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
    return try XCTUnwrap(lines.firstIndex { $0.contains(text) }, text) + 1
  }

  /// The JUnit report holds the failure's testcase, errored, under its suite's classname, and
  /// passes the dashboards' schemas with the run's totals (the failure counted as an error).
  private func assertReported(_ run: Run, name: String, classname: String, file: StaticString = #filePath,
                              line: UInt = #line) throws {
    let report = try String(contentsOfFile: run.junit, encoding: .utf8)
    XCTAssertTrue(report.contains("<testcase name=\"\(name)\" classname=\"\(classname)\""), report, file: file, line: line)
    let tests = run.verdicts.count
    let failed = run.verdicts.values.filter { $0 == .failed }.count
    let errored = run.verdicts.values.filter { $0 == .errored }.count + run.failures.count
    let skipped = run.verdicts.values.filter { $0 == .skipped || $0 == .knownIssue }.count
    try assertCheckerPasses(run.junit, ["--expect-tests", String(tests + run.failures.count), "--expect-failures",
                                        String(failed), "--expect-errors", String(errored), "--expect-skipped", String(skipped)],
                            line: line)
  }

  func testACrashInAClassSetUpIsTheClassInitializationErrorAndItsTestsDoNotRun() throws {
    let run = try run("classSetUp", ["ClassSetUpXCTests"])
    let failure = try assertOneFailure(run, .classSetUp, under: "LedgerTests.ClassSetUpXCTests", library: "xctest", saying: [
      "The test bundle ended with signal SIGILL (illegal instruction) in class func setUp() of "
        + "LedgerTests.ClassSetUpXCTests, before any of its tests started",
      "Fatal error: class set-up could not open the ledger",
    ])
    XCTAssertFalse(failure.afterTests)
    XCTAssertEqual(failure.suspects, [])
    XCTAssertEqual(run.verdicts, ["LedgerTests.ClassSetUpXCTests/testOne": .skipped, "LedgerTests.ClassSetUpXCTests/testTwo": .skipped])
    XCTAssertEqual(run.reasons["LedgerTests.ClassSetUpXCTests/testOne"], "Not run: class func setUp() of "
      + "LedgerTests.ClassSetUpXCTests failed (the test bundle ended with signal SIGILL (illegal instruction)); see its "
      + "initializationError")
    try assertReported(run, name: "initializationError", classname: "LedgerTests.ClassSetUpXCTests [xctest]")
  }

  func testACrashInAClassTearDownAfterItsTestsPassedIsTheClassExecutionError() throws {
    let run = try run("classTearDown", ["ClassTearDownXCTests"])
    let failure = try assertOneFailure(run, .classTearDown, under: "LedgerTests.ClassTearDownXCTests", library: "xctest",
                                       saying: ["in class func tearDown() of LedgerTests.ClassTearDownXCTests, after its tests ran",
                                                "Fatal error: class tear-down could not close the ledger"])
    XCTAssertTrue(failure.afterTests)
    XCTAssertEqual(failure.suspects, ["LedgerTests.ClassTearDownXCTests/testOne", "LedgerTests.ClassTearDownXCTests/testTwo"])
    XCTAssertEqual(run.verdicts, ["LedgerTests.ClassTearDownXCTests/testOne": .passed,
                                  "LedgerTests.ClassTearDownXCTests/testTwo": .passed])
    try assertReported(run, name: "executionError", classname: "LedgerTests.ClassTearDownXCTests [xctest]")
  }

  /// Issue 51: a class cut over two workers (by the times an earlier report gives its tests)
  /// runs its `class func tearDown()` in each: each crash is reported, naming the test of its
  /// own worker, and the run is red.
  func testACrashInTheTearDownOfAClassCutOverTwoWorkersIsReportedByEach() throws {
    let timings = path("timings.xml")
    let cases = ["testOne", "testTwo"].map { "<testcase classname=\"LedgerTests.ClassTearDownXCTests\" name=\"\($0)\" time=\"1\"/>" }
    try "<testsuites><testsuite name=\"earlier\">\(cases.joined())</testsuite></testsuites>\n"
      .write(toFile: timings, atomically: true, encoding: .utf8)
    let run = try run("classTearDown", ["ClassTearDownXCTests"], flags: ["--workers", "2", "--shard-timings", timings])
    XCTAssertEqual(run.status, 1, run.output)
    XCTAssertEqual(run.failures.map(\.place), [.classTearDown, .classTearDown], "\(run.failures)")
    for failure in run.failures {
      XCTAssertEqual(failure.suite, SuiteRun(suite: "LedgerTests.ClassTearDownXCTests", host: "xctest"))
      XCTAssertTrue(failure.issue.message.contains("Fatal error: class tear-down could not close the ledger"), failure.issue.message)
    }
    XCTAssertEqual(Set(run.failures.map(\.suspects)), [["LedgerTests.ClassTearDownXCTests/testOne"],
                                                        ["LedgerTests.ClassTearDownXCTests/testTwo"]])
    XCTAssertEqual(run.verdicts, ["LedgerTests.ClassTearDownXCTests/testOne": .passed,
                                  "LedgerTests.ClassTearDownXCTests/testTwo": .passed])
    try assertReported(run, name: "executionError", classname: "LedgerTests.ClassTearDownXCTests [xctest]")
  }

  /// Surefire's 2026 bug, not ours: a class tear-down failure is never a flaky pass, and the
  /// tests that passed before it never run again.
  func testRetriesNeitherRerunTheTestsNorTurnTheTearDownFailureIntoAFlakyPass() throws {
    let run = try run("classTearDown", ["ClassTearDownXCTests"], flags: ["--retries", "2"])
    _ = try assertOneFailure(run, .classTearDown, under: "LedgerTests.ClassTearDownXCTests", library: "xctest",
                             saying: ["class tear-down could not close the ledger"])
    XCTAssertEqual(run.attempts, ["LedgerTests.ClassTearDownXCTests/testOne": 1, "LedgerTests.ClassTearDownXCTests/testTwo": 1])
    XCTAssertFalse(run.verdicts.values.contains(.flaky))
    XCTAssertFalse(run.output.contains("Flaky"), run.output)
  }

  /// The crash comes while the next test runs: that test runs again alone, passes, and the
  /// crash is reported on its own, naming the test that ran before it.
  func testACrashLeftBehindByAnXCTestIsReportedOnItsOwnNamingTheSuspects() throws {
    let run = try run("leftBehindXCTest", ["LeftBehindXCTests"])
    let failure = try assertOneFailure(run, .process, under: "LedgerTests.LeftBehindXCTests", library: "xctest", saying: [
      "The test bundle ended with signal SIGILL (illegal instruction) while LedgerTests.LeftBehindXCTests/testB_RunsWhileItComes "
        + "ran, and it did not crash when run again alone, in a fresh process: the crash came from work that tests before it left "
        + "behind",
      "Fatal error: the crash a test left behind",
    ])
    XCTAssertEqual(failure.suspects, ["LedgerTests.LeftBehindXCTests/testA_SchedulesACrash"])
    XCTAssertEqual(run.verdicts, ["LedgerTests.LeftBehindXCTests/testA_SchedulesACrash": .passed,
                                  "LedgerTests.LeftBehindXCTests/testB_RunsWhileItComes": .passed])
    XCTAssertEqual(run.attempts["LedgerTests.LeftBehindXCTests/testB_RunsWhileItComes"], 1)
    try assertReported(run, name: "executionError", classname: "LedgerTests.LeftBehindXCTests [xctest]")
  }

  func testACrashLeftBehindByASwiftTestingTestIsReportedOnItsOwnNamingTheSuspects() throws {
    let run = try run("leftBehindSwiftTesting", ["LeftBehindSwiftTests"])
    let failure = try assertOneFailure(run, .process, under: "LedgerTests.LeftBehindSwiftTests", library: "swift-testing",
                                       saying: ["while LedgerTests.LeftBehindSwiftTests/runsWhileItComes() ran",
                                                "Fatal error: the crash a test left behind"])
    XCTAssertEqual(failure.suspects, ["LedgerTests.LeftBehindSwiftTests/schedulesACrash()"])
    XCTAssertEqual(run.verdicts, ["LedgerTests.LeftBehindSwiftTests/schedulesACrash()": .passed,
                                  "LedgerTests.LeftBehindSwiftTests/runsWhileItComes()": .passed])
    try assertReported(run, name: "executionError", classname: "LedgerTests.LeftBehindSwiftTests [swift-testing]")
  }

  /// Swift Testing's `✘ Test «unknown» recorded an issue`, in its own words and at its line.
  func testAnIssueRecordedAfterItsTestReturnedIsAFailureOfNoTest() throws {
    let run = try run("issueAfterItsTest", ["IssueAfterItsTest"])
    let failure = try assertOneFailure(run, .noTest, under: "LedgerTests.IssueAfterItsTest", library: "swift-testing",
                                       saying: ["Issue recorded - recorded after its test returned"])
    XCTAssertEqual(failure.issue.sourceLocation?.fileID, "LedgerTests/OutsideTheBodies.swift")
    // The test that ended before it, then the one running as it came.
    XCTAssertEqual(failure.suspects, ["LedgerTests.IssueAfterItsTest/detachesAnIssue()", "LedgerTests.IssueAfterItsTest/waitsForIt()"])
    XCTAssertEqual(run.verdicts, ["LedgerTests.IssueAfterItsTest/detachesAnIssue()": .passed,
                                  "LedgerTests.IssueAfterItsTest/waitsForIt()": .passed])
    try assertReported(run, name: "executionError", classname: "LedgerTests.IssueAfterItsTest [swift-testing]")
  }

  func testASuiteTraitThatThrowsIsTheSuiteInitializationErrorInItsOwnWords() throws {
    let run = try run("suiteTrait", ["BrokenFixtureTests"])
    let failure = try assertOneFailure(run, .suite, under: "LedgerTests.BrokenFixtureTests", library: "swift-testing",
                                       saying: ["Caught error: the suite's fixture could not be prepared"])
    XCTAssertFalse(failure.afterTests)
    XCTAssertEqual(run.verdicts, ["LedgerTests.BrokenFixtureTests/first()": .skipped,
                                  "LedgerTests.BrokenFixtureTests/second()": .skipped])
    XCTAssertEqual(run.reasons["LedgerTests.BrokenFixtureTests/first()"],
                   "Not run: its suite LedgerTests.BrokenFixtureTests failed before it; see the suite's initializationError")
    XCTAssertFalse(run.output.contains("it has no such Swift Testing test"), run.output)
    try assertReported(run, name: "initializationError", classname: "LedgerTests.BrokenFixtureTests [swift-testing]")
  }

  /// The Swift Testing listing crashes: the run is red with the crash's words, and the XCTest
  /// tests, which could be listed, still run.
  func testAListingThatCrashesFailsTheRunAndTheOtherLibrarysTestsStillRun() throws {
    let run = try run("listing", ["ClassTearDownXCTests"])
    let failure = try assertOneFailure(run, .listing, under: "ExistingTestsPackageTests", library: "swift-testing", saying: [
      "The Swift Testing tests of the test bundle could not be listed: ExistingTestsPackageTests.xctest --testing-library "
        + "swift-testing --list-tests ended with signal SIGILL (illegal instruction)",
      "Fatal error: LEDGER_CURRENCY is not set",
    ])
    XCTAssertFalse(failure.afterTests)
    XCTAssertEqual(run.verdicts, ["LedgerTests.ClassTearDownXCTests/testOne": .passed,
                                  "LedgerTests.ClassTearDownXCTests/testTwo": .passed])
    try assertReported(run, name: "initializationError", classname: "ExistingTestsPackageTests [swift-testing]")
  }

  /// Every test passes, then an `atexit` handler a test left ends the bundle with status 1:
  /// `swift test` is red and prints nothing; the status is not XCTest's (it ends with 0 when
  /// no test failed), so it is a failure of the process after them, in every worker layout.
  func testAStatusOneAfterEveryTestPassedIsAFailureOfTheProcess() throws {
    for (outside, suite, library, test) in [
      ("exitStatusXCTest", "LedgerTests.ExitStatusXCTests", "xctest", "testLeavesAnExitHandler"),
      ("exitStatusSwiftTesting", "LedgerTests.ExitStatusSwiftTests", "swift-testing", "leavesAnExitHandler()"),
    ] {
      for flags in [[], ["--workers", "2"]] {
        let run = try run(outside, [suite], flags: flags)
        let failure = try assertOneFailure(run, .process, under: suite, library: library, saying: [
          "The test bundle ended with exit status 1 while none of its tests ran, after \(suite)/\(test) returned: none of "
            + "the tests it ran failed, so \(library == "xctest" ? "XCTest" : "Swift Testing") itself ends with status 0: "
            + "code that ran after them (an atexit handler, a thread calling exit) ended the process so; it printed nothing",
        ])
        XCTAssertEqual(failure.suspects, ["\(suite)/\(test)"])
        XCTAssertEqual(run.verdicts, ["\(suite)/\(test)": .passed])
        try assertReported(run, name: "executionError", classname: "\(suite) [\(library)]")
      }
    }
  }

  /// A test trait's `prepare` and an `.enabled(if:)` condition that throw: Swift Testing
  /// records the error as the test's issue and never starts it (`✘ Test prepared() recorded
  /// an issue: Caught error: …`). Each test errors with that issue at its declaration, not as
  /// a test the bundle does not have, and nothing fails outside the tests.
  func testATestTraitThatThrowsIsTheTestsOwnIssueInSwiftTestingsWords() throws {
    for flags in [[], ["--workers", "2"]] {
      let run = try run("testTrait", ["UnpreparedTests"], flags: flags)
      XCTAssertEqual(run.status, 1, run.output)
      XCTAssertEqual(run.failures, [])
      XCTAssertEqual(run.verdicts, ["LedgerTests.UnpreparedTests/prepared()": .errored,
                                    "LedgerTests.UnpreparedTests/enabledIfOpen()": .errored])
      for test in ["prepared()", "enabledIfOpen()"] {
        let line = try fixtureLine(containing: "func \(test)")
        XCTAssertTrue(run.output.contains("ERROR LedgerTests.UnpreparedTests/\(test) [swift-testing] ("), run.output)
        XCTAssertTrue(run.output.contains("/LedgerTests/OutsideTheBodies.swift:\(line): Caught error: the ledger could not be "
          + "opened\n"), run.output)
      }
      XCTAssertFalse(run.output.contains("no such Swift Testing test"), run.output)
    }
  }

  /// A suite's warning, and a warning recorded once its test returned, fail nothing: `swift
  /// test` passes both (`⚠︎ Suite WarnedSuiteTests recorded a warning …`, `⚠︎ Test «unknown»
  /// recorded a warning …`). The suite's warning is one of its test's.
  func testAWarningOutsideATestFailsNothing() throws {
    for flags in [[], ["--workers", "2"]] {
      let warned = try run("suiteWarning", ["WarnedSuiteTests"], flags: flags)
      XCTAssertEqual(warned.status, 0, warned.output)
      XCTAssertEqual(warned.failures, [])
      XCTAssertEqual(warned.verdicts, ["LedgerTests.WarnedSuiteTests/balances()": .passed])
      XCTAssertEqual(warned.issues["LedgerTests.WarnedSuiteTests/balances()"]?.map(\.kind), [.warning])
      XCTAssertEqual(warned.issues["LedgerTests.WarnedSuiteTests/balances()"]?.map(\.message),
                     ["Issue recorded - the ledger is nearly full"])
      XCTAssertTrue(warned.output.contains("Result: 1 passed, 0 failed, 0 skipped in "), warned.output)
      let late = try run("lateWarning", ["WarningAfterItsTest"], flags: flags)
      XCTAssertEqual(late.status, 0, late.output)
      XCTAssertEqual(late.failures, [])
      XCTAssertEqual(late.verdicts, ["LedgerTests.WarningAfterItsTest/detachesAWarning()": .passed,
                                     "LedgerTests.WarningAfterItsTest/waitsForIt()": .passed])
      XCTAssertTrue(late.output.contains("Result: 2 passed, 0 failed, 0 skipped in "), late.output)
    }
  }

  /// The Swift Testing listing hangs (`swift test` never ends): it is stopped at `--time-limit`,
  /// the run is red with how long it ran, and the XCTest tests, which could be listed, still run.
  func testAListingThatHangsIsStoppedAtTheTimeLimit() throws {
    let run = try run("listingHangs", ["ClassTearDownXCTests"], flags: ["--time-limit", "3"])
    let failure = try assertOneFailure(run, .listing, under: "ExistingTestsPackageTests", library: "swift-testing", saying: [
      "The Swift Testing tests of the test bundle could not be listed: ExistingTestsPackageTests.xctest --testing-library "
        + "swift-testing --list-tests did not end within 3 seconds (--time-limit), so it was stopped with SIGKILL",
    ])
    XCTAssertFalse(failure.afterTests)
    XCTAssertEqual(run.verdicts, ["LedgerTests.ClassTearDownXCTests/testOne": .passed,
                                  "LedgerTests.ClassTearDownXCTests/testTwo": .passed])
  }

  /// A test that calls `exit(0)` never ends: `swift test` is green (the bundle's run stops there,
  /// and the tests after it never run), `harness test` errors that test, in words that say it
  /// exited rather than crashed, and runs the test after it.
  func testATestThatExitsWithZeroNeverEnded() throws {
    let run = try run("exitZero", ["ExitsWithZeroXCTests"])
    XCTAssertEqual(run.status, 1, run.output)
    XCTAssertEqual(run.failures, [])
    XCTAssertEqual(run.verdicts, ["LedgerTests.ExitsWithZeroXCTests/testA_ExitsWithZero": .errored,
                                  "LedgerTests.ExitsWithZeroXCTests/testB_After": .passed])
    XCTAssertEqual(run.issues["LedgerTests.ExitsWithZeroXCTests/testA_ExitsWithZero"]?.map(\.message), [
      "Exited: the worker process running the test ended with exit status 0 before the test returned (a call to exit), so "
        + "the test never ended; it printed nothing",
    ])
  }

  /// What a test prints is its output, whole, even when it looks like XCTest's own lines;
  /// XCTest's own lines are not in it.
  func testATestsOutputIsKeptWholeWhateverItLooksLike() throws {
    let run = try run("", ["ForgedLinesXCTests"])
    let json = try String(contentsOfFile: path(".jsonl"), encoding: .utf8)
    var outputs: [String: String] = [:]
    for line in json.split(separator: "\n") {
      if case .outputCaptured(let test, let text) = try Event(jsonLine: line).kind { outputs[test.path, default: ""] += text }
    }
    XCTAssertEqual(run.failures, [])
    let forged = try XCTUnwrap(outputs["LedgerTests.ForgedLinesXCTests/testPrintsAFailureLineAndPasses"], "\(outputs)")
    XCTAssertTrue(forged.contains(": error: ForgedLinesXCTests.testPrintsAFailureLineAndPasses : "), forged)
    for (test, output) in outputs {
      XCTAssertFalse(output.contains("Test Suite '"), "\(test): \(output)")
      XCTAssertFalse(output.contains("Executed "), "\(test): \(output)")
    }
  }
}
