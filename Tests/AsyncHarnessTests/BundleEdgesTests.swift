@_spi(ForToolsIntegrationOnly) @testable import AsyncHarness
import Glibc
import XCTest

/// Issue 49: where a test bundle's worker failed outside its tests' bodies, decided without
/// processes: a class's set-up or tear-down, the process between tests, an issue of no test,
/// and a crash whose interrupted tests run again alone.
final class BundleEdgesTests: XCTestCase {
  private let bundle = SuiteRun(suite: "LedgerPackageTests", host: "xctest")

  /// The planned tests of XCTest classes `M.A` (two tests) and `M.B` (one).
  private func planned() throws -> [Runner.PlannedTest] {
    let tests = [("M.A", "testOne"), ("M.A", "testTwo"), ("M.B", "testThree")].map { suite, name in
      ExistingTest(library: .xctest, suite: suite, name: name, id: "\(suite)/\(name)", isParameterized: false)
    }
    let plan = try Runner.Plan(catalog: Catalog(existing: tests), configuration: Configuration(), registry: .builtIn)
    return plan.entries.flatMap { plan.plannedTests(of: $0, repetition: 1) }
  }

  private func suite(of name: String) -> SuiteRun? { SuiteRun(suite: name, host: "xctest") }

  func testAnEndInAClassBeforeAnyOfItsTestsIsItsSetUpAndNamesNoSuspect() throws {
    let tests = try planned()
    var edges = BundleEdges(bundleSuite: bundle)
    edges.classStarted("M.A")
    edges.started(tests[0])
    edges.ended(tests[0])
    edges.classEnded()
    edges.classStarted("M.B")
    XCTAssertEqual(edges.endedBetweenTests(.signaled(SIGILL), stoppedAt: nil, output: "Fatal error: no ledger", suite: suite),
                   "M.B", "its tests never run")
    let failure = try XCTUnwrap(edges.take().first)
    XCTAssertEqual(failure.place, .classSetUp)
    XCTAssertEqual(failure.suite, SuiteRun(suite: "M.B", host: "xctest"))
    XCTAssertFalse(failure.afterTests)
    XCTAssertEqual(failure.suspects, [])
    XCTAssertEqual(failure.issue.kind, .crashed)
    XCTAssertEqual(failure.issue.message, "The test bundle ended with signal SIGILL (illegal instruction) in class func setUp() "
      + "of M.B, before any of its tests started; its last output:\nFatal error: no ledger")
    XCTAssertEqual(edges.take(), [], "handed over once")
  }

  func testAnEndInAClassAfterItsTestsIsItsTearDownNamingThem() throws {
    let tests = try planned()
    var edges = BundleEdges(bundleSuite: bundle)
    edges.classStarted("M.A")
    for test in tests.prefix(2) {
      edges.started(test)
      edges.ended(test)
    }
    XCTAssertNil(edges.endedBetweenTests(.exited(3), stoppedAt: nil, output: "", suite: suite))
    let failure = try XCTUnwrap(edges.take().first)
    XCTAssertEqual(failure.place, .classTearDown)
    XCTAssertTrue(failure.afterTests)
    XCTAssertEqual(failure.suspects, ["M.A/testOne", "M.A/testTwo"])
    XCTAssertEqual(failure.issue.message, "The test bundle ended with exit status 3 in class func tearDown() of M.A, after its "
      + "tests ran, before the class ended; it printed nothing")
  }

  /// Between classes, or at the exit: the process's, under the suite of the test before it; a
  /// hang past the limit says so; the suspects are the last three tests, latest last.
  func testAnEndBetweenClassesIsTheProcesssAndAHangSaysItWasStopped() throws {
    let tests = try planned()
    var edges = BundleEdges(bundleSuite: bundle)
    for (index, test) in (tests + [tests[0]]).enumerated() {
      if index == 0 || index == 2 { edges.classStarted(test.existing!.suite) }
      edges.started(test)
      edges.ended(test)
      if index == 1 || index == 2 { edges.classEnded() }
    }
    XCTAssertNil(edges.endedBetweenTests(.signaled(SIGKILL), stoppedAt: .seconds(30), output: "", suite: suite))
    let failure = try XCTUnwrap(edges.take().first)
    XCTAssertEqual(failure.place, .process)
    XCTAssertEqual(failure.issue.kind, .timeLimitExceeded)
    XCTAssertEqual(failure.suite, SuiteRun(suite: "M.A", host: "xctest"), "the suite of the test that ended last")
    XCTAssertEqual(failure.suspects, ["M.A/testTwo", "M.B/testThree", "M.A/testOne"])
    XCTAssertEqual(failure.issue.message, "The test bundle was stopped at the time limit of 30 seconds, still running, with "
      + "SIGKILL while none of its tests ran, after M.A/testOne returned; it printed nothing")
  }

  /// Swift Testing posts an issue of no test twice in a row: it is one failure.
  func testAnIssueOfNoTestIsOneFailureNamingTheTestBeforeIt() throws {
    let tests = try planned()
    var edges = BundleEdges(bundleSuite: bundle)
    let issue = Issue(kind: .expectationFailed, message: "Issue recorded - late")
    edges.recordedAfterItsTest(issue)
    edges.ended(tests[0])
    edges.recordedAfterItsTest(issue)
    edges.recordedAfterItsTest(issue)
    let failures = edges.take()
    XCTAssertEqual(failures.map(\.suite), [bundle, SuiteRun(suite: "M.A", host: "xctest")])
    XCTAssertEqual(failures.map(\.suspects), [[], ["M.A/testOne"]])
    XCTAssertEqual(failures.map(\.place), [.noTest, .noTest])
  }

  /// A crash under review is the process's failure only once every test it interrupted ended
  /// alone without crashing; one crash among them makes it theirs.
  func testACrashUnderReviewFailsOnlyWhenNoInterruptedTestCrashesAgain() throws {
    let tests = try planned()
    var edges = BundleEdges(bundleSuite: bundle)
    edges.ended(tests[0])
    var review = edges.crashUnderReview(.signaled(SIGSEGV), running: [tests[1], tests[2]], output: "boom")
    XCTAssertNil(review.ended(tests[0].id, as: .returned(duration: 0)), "not one it interrupted")
    XCTAssertNil(review.ended(tests[1].id, as: .returned(duration: 0)))
    let failure = try XCTUnwrap(review.ended(tests[2].id, as: .returned(duration: 0)))
    XCTAssertTrue(review.isSettled)
    XCTAssertEqual(failure.place, .process)
    XCTAssertEqual(failure.suspects, ["M.A/testOne", "M.A/testTwo", "M.B/testThree"])
    XCTAssertEqual(failure.issue.message, "The test bundle ended with signal SIGSEGV (segmentation fault) while M.A/testTwo, "
      + "M.B/testThree ran, and none of them crashed when run again alone, in a fresh process: the crash came from work that "
      + "tests before them left behind; its last output:\nboom")

    var culprit = edges.crashUnderReview(.signaled(SIGSEGV), running: [tests[1], tests[2]], output: "")
    XCTAssertNil(culprit.ended(tests[1].id, as: .processEnded(.signaled(SIGSEGV), output: "")))
    XCTAssertNil(culprit.ended(tests[2].id, as: .returned(duration: 0)), "the crash was testTwo's")
    XCTAssertTrue(culprit.isSettled)

    let first = BundleEdges(bundleSuite: bundle).crashUnderReview(.exited(3), running: [tests[0]], output: "")
    XCTAssertTrue(first.failure.issue.message.hasSuffix("it did not crash when run again alone, in a fresh process: the crash did not "
      + "happen again: it depends on what ran beside it, or on timing"), first.failure.issue.message)
  }
  /// An issue of no test (a detached task's) that comes while Swift Testing runs tests side by
  /// side goes under the suite of the running test declared nearest above it in its file, the
  /// last of its suspects: not a test declared below it or in another file, nor the one that
  /// ended last.
  func testAnIssueOfNoTestWhileTestsRunGoesUnderTheTestDeclaredAboveIt() throws {
    let tests = [("M.Early", "early()", 3), ("M.Known", "detached()", 30), ("M.Names", "later()", 40)].map { suite, name, line in
      var test = ExistingTest(library: .swiftTesting, suite: suite, name: name, id: "\(suite)/\(name)/A.swift:\(line):4",
                              isParameterized: false)
      test.sourceLocation = SourceLocation(fileID: "M/A.swift", filePath: "/p/A.swift", line: line, column: 4)
      return test
    } + [ExistingTest(library: .swiftTesting, suite: "M.Other", name: "elsewhere()", id: "M.Other/elsewhere()/B.swift:31:4",
                      isParameterized: false)]
    let plan = try Runner.Plan(catalog: Catalog(existing: tests), configuration: Configuration(), registry: .builtIn)
    let planned = plan.entries.flatMap { plan.plannedTests(of: $0, repetition: 1) }
    let named = { (name: String) in try XCTUnwrap(planned.first { $0.id.name == name }) }
    var edges = BundleEdges(bundleSuite: SuiteRun(suite: "MPackageTests", host: "swift-testing"))
    edges.ended(try named("early()"))
    let issue = Issue(kind: .expectationFailed, message: "Issue recorded - from detached",
                      sourceLocation: SourceLocation(fileID: "M/A.swift", filePath: "/p/A.swift", line: 33, column: 57))
    edges.recordedAfterItsTest(issue, running: [try named("detached()"), try named("later()"), try named("elsewhere()")])
    let failure = try XCTUnwrap(edges.take().first)
    XCTAssertEqual(failure.place, .noTest)
    XCTAssertEqual(failure.suite, SuiteRun(suite: "M.Known", host: "swift-testing"))
    XCTAssertEqual(failure.suspects, ["M.Names/later()", "M.Other/elsewhere()", "M.Known/detached()"])
    // With no test running, it goes after the test that ended last, as before.
    edges.recordedAfterItsTest(Issue(kind: .expectationFailed, message: "later"))
    XCTAssertEqual(edges.take().first?.suite, SuiteRun(suite: "M.Early", host: "swift-testing"))
  }
}
