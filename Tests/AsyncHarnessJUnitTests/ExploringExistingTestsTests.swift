import AsyncHarness
import Foundation
import Synchronization
import HarnessTestSupport
import XCTest

/// Issue 41: `harness test --explore N` finds the ordering bugs of a package's own XCTest and
/// Swift Testing tests (Tests/Fixtures/OrderingBugs, which does not depend on AsyncHarness), and
/// `--schedule TOKEN` replays a failing order exactly.
final class ExploringExistingTestsTests: ReportTestCase {
  private static let package = FixturePackage("OrderingBugs", scratch: "ordering-bugs-scratch")
  private static var fixture: URL { package.directory }
  private static var scratch: URL { package.scratch }

  /// The fixture's tests of a bug, each failing in some orders only.
  private static let bugs = [
    "OrdersTests.OrdersXCTests/testTwoWithdrawalsNeverOverdraw", "OrdersTests.OrdersXCTests/testAThumbnailIsRenderedOnce",
    "OrdersTests.OrdersXCTests/testPagesComeInTheOrderAskedFor", "OrdersTests.OrdersXCTests/testTheDoorbellWakesTheOneWaiting",
    "OrdersTests.OrdersTests/twoWithdrawalsNeverOverdraw()", "OrdersTests.OrdersTests/aThumbnailIsRenderedOnce()",
    "OrdersTests.OrdersTests/pagesComeInTheOrderAskedFor()", "OrdersTests.OrdersTests/theDoorbellWakesTheOneWaiting()",
  ]
  /// The lost wake-ups, which end stuck rather than failing an assertion.
  private static let stuck: Set<String> = [
    "OrdersTests.OrdersXCTests/testTheDoorbellWakesTheOneWaiting", "OrdersTests.OrdersTests/theDoorbellWakesTheOneWaiting()",
  ]

  /// Every bug is found in at least 5 of 100 seeds (so 100 seeds find it with more than 99 %
  /// probability), every fixed twin passes all 100, and each test's every seed is reported.
  func testExploringFindsEveryBugAndPassesEveryFixedTwin() throws {
    let runs = try explore(["--explore", "100", "--workers", "2", "--filter", "\\.OrdersXCTests/", "--filter", "\\.OrdersTests/"])
    XCTAssertEqual(runs.status, 1, runs.errors)
    XCTAssertEqual(Set(runs.bySeed.keys).count, 17, "every test of the fixture is explored: \(runs.bySeed.keys.sorted())")
    for (test, seeds) in runs.bySeed {
      XCTAssertEqual(seeds.count, 100, "\(test) ran under \(seeds.count) schedules")
      let failing = seeds.values.filter { $0.result.verdict.isFailure }
      if Self.bugs.contains(test) {
        XCTAssertGreaterThanOrEqual(failing.count, 5, "\(test) failed in \(failing.count) of 100 seeds")
      } else {
        XCTAssertEqual(failing.count, 0, "the fixed twin \(test) failed under \(failing.compactMap(\.test.schedule))")
      }
    }
    // A lost wake-up ends as the stuck test it is, with its order's replay.
    for test in Self.stuck {
      let stuck = runs.bySeed[test]?.values.first { $0.result.verdict.isFailure }
      XCTAssertEqual(stuck?.result.issues.map(\.kind), [.deadlock], test)
      XCTAssertTrue(stuck?.result.issues.first?.message.hasPrefix("The async code is suspended and nothing can resume it") == true)
      XCTAssertTrue(stuck?.result.issues.first?.message.hasSuffix("; nothing outside the schedule can resume it either: every "
        + "other thread of the test bundle waits for another thread (none runs, sleeps, reads or writes, waits with a timeout "
        + "or for a child process, and no timer is armed and no socket open while one waits for events)") == true)
    }
    XCTAssertTrue(runs.output.contains("Explored schedules:\n"), runs.output)
  }

  /// Each bug's printed replay fails the same way five times out of five, and takes the same
  /// steps (no "took other steps" warning).
  func testTheReplayOfAFailingOrderFailsEveryTime() throws {
    let explored = try explore(["--explore", "20", "--workers", "2"] + Self.bugs.flatMap { ["--filter", $0] })
    for test in Self.bugs {
      let failure = try XCTUnwrap(explored.bySeed[test]?.sorted { $0.key < $1.key }.first { $0.value.result.verdict.isFailure }?.value,
                                  "\(test) did not fail in 20 seeds")
      let token = try XCTUnwrap(failure.result.replayToken(of: failure.test))
      let replay = try explore(["--schedule", token, "--repeat", "5", "--filter", test])
      XCTAssertEqual(replay.status, 1, replay.errors)
      let results = replay.bySeed[test]?.values.map(\.result) ?? []
      XCTAssertEqual(results.count, 1, "\(test) under \(token)")
      let ended = replay.ended.filter { $0.test.path == test }
      XCTAssertEqual(ended.count, 5, "\(test) under \(token) ran \(ended.count) times")
      for run in ended {
        XCTAssertEqual(run.result.verdict, failure.result.verdict, "\(test) under \(token)")
        XCTAssertEqual(run.result.issues.map(\.message), failure.result.issues.map(\.message), "\(test) under \(token)")
      }
    }
  }

  /// Under `--trace` each step of a test's schedule is an event as it is taken, numbered from
  /// the test's start, and an instant on the trace's timeline.
  func testTheTraceShowsTheStepsOfATestsSchedule() throws {
    let trace = path("trace-\(UUID().uuidString).json")
    let json = path("events-\(UUID().uuidString).jsonl")
    let test = "OrdersTests.OrdersXCTests/testTwoWithdrawalsNeverOverdraw"
    try Self.package.build()
    let run = try runToEnd(try builtHarness(), ["test", "--package-path", Self.fixture.path, "--skip-build", "--explore", "1",
                                           "--filter", test, "--trace", trace, "--json", json,
                                           "--", "--scratch-path", Self.scratch.path], limit: 300)
    XCTAssertLessThanOrEqual(run.status, 1, run.errors)
    var steps: [(number: Int, ran: String)] = []
    var traced: ScheduleTrace?
    for line in try String(contentsOfFile: json, encoding: .utf8).split(separator: "\n") {
      switch try Event(jsonLine: line).kind {
      case .scheduleStep(let id, let number, let ran, _) where id.path == test: steps.append((number, ran))
      case .testEnded(_, let end): traced = end.lastAttempt.scheduleTrace
      default: break
      }
    }
    XCTAssertFalse(steps.isEmpty)
    XCTAssertEqual(steps.map(\.number), Array(1...max(1, steps.count)))
    XCTAssertEqual(steps.count, traced?.steps, "an XCTest bundle takes no step before the test")
    XCTAssertTrue(steps.allSatisfy { $0.ran.hasPrefix("task #") || $0.ran.hasPrefix("an actor's job") }, "\(steps)")
    let document = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: trace))) as? [String: Any]
    let instants = (document?["traceEvents"] as? [[String: Any]] ?? []).filter { $0["cat"] as? String == "step" }
    XCTAssertEqual(instants.count, steps.count)
  }

  /// A synchronous XCTest body that works longer than the quiet period holds XCTest's main
  /// thread, with nothing for the schedule to run: it is running, not stuck, and passes. An
  /// async body that blocks on a task it started, or on a group's notify block it sent (as
  /// async-kit's `syncShutdownGracefully()` does; Swift Testing's hung until its time limit),
  /// or that loops on the clock while a block it sent runs beside it (as swift-dependencies'
  /// `testDeadlock` does; it failed in every seed), has its jobs handed to Swift's own
  /// executors and Dispatch after a long step, passes, and says so.
  func testTestsThatKeepAThreadAreNeitherStuckNorHeld() throws {
    let runs = try explore(["--explore", "2", "--filter", "SlowXCTests", "--filter", "SlowTests", "--time-limit", "30"])
    XCTAssertEqual(runs.status, 0, runs.output)
    let synchronous = runs.ended.filter { $0.test.name == "testASynchronousBodyLongerThanTheQuietPeriodPasses" }
    XCTAssertEqual(synchronous.map(\.result.verdict), [.passed, .passed])
    XCTAssertEqual(synchronous.flatMap(\.result.issues).map(\.kind), [])
    let keeping = runs.ended.filter {
      ["testAJobBlockingOnAnotherJobPasses", "testAJobWaitingForAGroupsNotifyBlockPasses", "aJobWaitingForAGroupsNotifyBlockPasses()",
       "testABlockRunsBesideALoopOnTheClock", "aBlockRunsBesideALoopOnTheClock()"].contains($0.test.name)
    }
    XCTAssertEqual(keeping.map(\.result.verdict), Array(repeating: .passed, count: 10), runs.output)
    for run in keeping {
      let warning = run.result.issues.first { $0.kind == .warning }?.message ?? ""
      XCTAssertTrue(warning.hasPrefix("The Swift concurrency job of step "), warning)
      XCTAssertTrue(warning.hasSuffix(" kept the schedule's thread for 0.05 seconds, while other work waited to run beside it "
        + "(it blocks its thread on that work: a semaphore, a lock, a synchronous wait; or it works on without it, as a loop "
        + "on the clock does); the schedule gave Swift concurrency back to Swift's own executors, so the rest of the test "
        + "runs in real time, neither ordered nor replayed"), warning)
    }
  }

  /// A test whose order is partly a Dispatch queue's passes, with a warning that says so, and
  /// the exploration summary says in how many schedules.
  func testWorkFromOutsideTheScheduleIsNamed() throws {
    let runs = try explore(["--explore", "3", "--filter", "AnswerFromAThread"])
    XCTAssertEqual(runs.status, 0, runs.errors)
    // The summary says how often: in every one of its schedules.
    XCTAssertTrue(runs.output.contains("  OrdersTests.OrdersXCTests/testAnAnswerFromAThreadArrivesWhileTheTestWorks [xctest]: "
      + "3 of 3 passed; 3 took work from outside the schedule\n"), runs.output)
    let ended = runs.ended
    XCTAssertEqual(ended.count, 3)
    for run in ended {
      XCTAssertEqual(run.result.verdict, .passed)
      let warning = try XCTUnwrap(run.result.issues.first { $0.kind == .warning }?.message)
      XCTAssertTrue(warning.hasPrefix("The test's order was partly outside the schedule's control: "), warning)
      XCTAssertTrue(warning.hasSuffix("; the schedule neither orders nor replays that work"), warning)
    }
  }

  /// Issue 50: the blocks a test sends to Dispatch are jobs of the schedule, in the orders
  /// Dispatch allows (a serial queue's in the order sent, a global queue's in any, a concurrent
  /// queue's barriers alone, a group's notify after its last leave): the four Dispatch bugs of
  /// the fixture (`Preferences` written on a global queue, `Lookup` taking the first answer,
  /// `Scoreboard` recording without a barrier, `Report` leaving its group before filing) are
  /// found in at least 5 of 100 seeds, in XCTest and in Swift Testing, their
  /// fixed twins pass all 100, and each failing schedule replays five times out of five.
  func testDispatchBlocksAreOrderedByTheSchedule() throws {
    let runs = try explore(["--explore", "100", "--workers", "2", "--filter", "\\.DispatchOrders"])
    XCTAssertEqual(runs.status, 1, runs.errors)
    // A global queue's blocks in any order, two serial queues' in any order between them, a
    // concurrent queue's in any order between its barriers, a group's notify as soon as it is empty.
    let bugs: Set<String> = [
      "OrdersTests.DispatchOrdersXCTests/testTheLastThemeSavedIsKept", "OrdersTests.DispatchOrdersXCTests/testTheCachedValueWins",
      "OrdersTests.DispatchOrdersXCTests/testTheTotalCountsEveryScore", "OrdersTests.DispatchOrdersXCTests/testACompleteReportHasBothParts",
      "OrdersTests.DispatchOrdersTests/theLastThemeSavedIsKept()", "OrdersTests.DispatchOrdersTests/theCachedValueWins()",
      "OrdersTests.DispatchOrdersTests/theTotalCountsEveryScore()", "OrdersTests.DispatchOrdersTests/aCompleteReportHasBothParts()",
    ]
    // And a correct test of a queue that targets another, which keeps that one's order; then
    // correct synchronous XCTest bodies, whose blocks stay Dispatch's: two twins, a test that
    // waits out an inverted expectation and one that waits on a semaphore.
    XCTAssertEqual(runs.bySeed.count, 21, "\(runs.bySeed.keys.sorted())")
    for (test, seeds) in runs.bySeed {
      XCTAssertEqual(seeds.count, 100, test)
      let failing = seeds.values.filter { $0.result.verdict.isFailure }
      if !test.contains("XCTests/") {
        // Swift Testing's continuations are resumed by scheduled blocks: none of its work is
        // outside the schedule (XCTest's waiter has a thread of its own, which may be).
        let warnings = seeds.values.flatMap { $0.result.issues.filter { $0.kind == .warning }.map(\.message) }
        XCTAssertEqual(warnings, [], test)
      }
      if bugs.contains(test) {
        XCTAssertGreaterThanOrEqual(failing.count, 5, "\(test) failed in \(failing.count) of 100 seeds")
        XCTAssertTrue(failing.allSatisfy { $0.result.verdict == .failed }, "\(test): \(failing.map(\.result.issues))")
      } else {
        XCTAssertEqual(failing.count, 0, "the fixed twin \(test) failed under \(failing.compactMap(\.test.schedule))")
      }
    }
    // The order is the schedule's alone: each failing schedule's replay fails every time.
    for test in bugs.sorted() {
      let failure = try XCTUnwrap(runs.bySeed[test]?.sorted { $0.key < $1.key }.first { $0.value.result.verdict.isFailure }?.value)
      let token = try XCTUnwrap(failure.result.replayToken(of: failure.test))
      let replay = try explore(["--schedule", token, "--repeat", "5", "--filter", test])
      XCTAssertEqual(replay.ended.filter { $0.test.path == test }.map(\.result.verdict), Array(repeating: .failed, count: 5),
                     "\(test) under \(token)")
    }
  }

  /// Issue 50: exploring never fails a correct test. Tests that await real work (a Dispatch
  /// timer, a thread reading a file, an expectation a queue fulfils) wait for it, in real time,
  /// with the warning that says so when it came from outside the schedule; a DispatchIO read,
  /// whose blocks on Dispatch's own queues are Dispatch's, not the schedule's, runs as Dispatch
  /// runs it (the schedule took them: every `async` one warned that a job kept its thread, and a
  /// synchronous one crashed libdispatch in about one seed in ten); a sleep takes the
  /// real time it says, so the clocks a test reads agree with it; a synchronous XCTest body
  /// that polls the main run loop until a deadline on the clock, as Nimble's `toEventually`
  /// does, is given its time (it was called stuck in every order); a test that installs its own
  /// executor hook runs unexplored in the order it asks for, and is told so.
  func testCorrectTestsThatAwaitRealWorkReadClocksOrHookTheExecutorPassInEveryOrder() throws {
    let runs = try explore(["--explore", "5", "--workers", "2", "--filter", "RealWork", "--filter", "OwnExecutorHook"])
    XCTAssertEqual(runs.status, 0, runs.output)
    XCTAssertEqual(runs.bySeed.count, 11, "\(runs.bySeed.keys.sorted())")
    for (test, seeds) in runs.bySeed {
      XCTAssertEqual(seeds.values.map(\.result.verdict), Array(repeating: .passed, count: 5), test)
      let warnings = Set(seeds.values.flatMap { $0.result.issues.filter { $0.kind == .warning }.map(\.message) })
      if test.contains("OwnExecutorHook") {
        XCTAssertTrue(!warnings.isEmpty && warnings.allSatisfy { $0.hasPrefix("The test installed its own executor hook ") }
          && warnings.allSatisfy { $0.hasSuffix(" of its schedule: from there its Swift concurrency ran on Swift's own "
            + "executors in the order the hook gives, unexplored") }, "\(test): \(warnings)")
      } else {
        // Work the schedule does not run (a thread's) is said, when it came while the schedule
        // ran or waited; nothing else is.
        XCTAssertTrue(warnings.allSatisfy { $0.hasPrefix("The test's order was partly outside the schedule's control: ") },
                      "\(test): \(warnings)")
      }
    }
  }

  /// A synchronous XCTest body reading a pipe through DispatchIO: the preloaded library copied
  /// and retained every block sent to Dispatch, DispatchIO's own ones too, even those it handed
  /// straight on, which crashed libdispatch's event loop (SIGSEGV) in about one seed in ten;
  /// `swift test` passed it 100 times in 100. Sixty seeds all pass (one crash in ten would fail
  /// them with a probability above 99.8 %).
  func testASynchronousDispatchIOReadNeverCrashesTheBundle() throws {
    let runs = try explore(["--explore", "60", "--workers", "2", "--filter", "RealWorkXCTests/testADispatchIOReadIsWaitedFor"])
    XCTAssertEqual(runs.status, 0, runs.output)
    XCTAssertEqual(runs.ended.map(\.result.verdict), Array(repeating: .passed, count: 60), runs.output)
  }

  /// On a loaded machine the schedule's thread waits for a processor between its steps. A job
  /// that only waited so kept the thread past the long step by the clock, and the schedule
  /// handed every job back to Swift's and Dispatch's own threads (`ExploringExistingTestsTests`
  /// failed so at a load of 9). With twice as many threads spinning as there are processors,
  /// Swift Testing's tests of Dispatch orders are explored to their end, warning of nothing.
  /// A race: without the change this failed in 2 of 5 runs (a step whose job waited 50 ms for
  /// a processor), with it in none of 8.
  func testAJobThatOnlyWaitsForAProcessorKeepsTheScheduleExplored() throws {
    let spinning = Atomic<Bool>(true)
    let spinners = (0..<2 * ProcessInfo.processInfo.activeProcessorCount).map { _ in
      Thread { while spinning.load(ordering: .relaxed) {} }  // Deliberate: it only burns a processor.
    }
    for spinner in spinners { spinner.start() }
    defer { spinning.store(false, ordering: .relaxed) }
    let runs = try explore(["--explore", "30", "--filter", "DispatchOrdersTests/"])
    XCTAssertFalse(runs.bySeed.isEmpty, runs.output)
    for (test, seeds) in runs.bySeed {
      let warnings = seeds.values.flatMap { $0.result.issues.filter { $0.kind == .warning }.map(\.message) }
      XCTAssertEqual(warnings, [], test)
    }
  }

  func testBadScheduleFlagsAreUsageErrors() throws {
    let cases: [([String], String)] = [
      (["--explore", "0"], "error: --explore must be at least 1, not 0\n"),
      (["--explore-policy", "random"], "error: --explore-policy needs --explore N\n"),
      (["--explore", "2", "--explore-policy", "pct12"],
       "error: --explore-policy \"pct12\" is not a policy: expected random or pctD with D from 1 to 9, e.g. pct3\n"),
      (["--explore", "2", "--schedule", "1:random:abcdef"], "error: --explore and --schedule cannot be combined\n"),
      (["--schedule", "nope"], "error: --schedule \"nope\" is not a replay token: "),
    ]
    for (flags, message) in cases {
      let run = try runToEnd(try builtHarness(), ["test", "--package-path", Self.fixture.path, "--skip-build"] + flags)
      XCTAssertEqual(run.status, 2, "\(flags)")
      XCTAssertTrue(run.errors.hasPrefix(message), "\(flags): \(run.errors)")
    }
  }

  // MARK: Helpers

  /// What one `harness test` run of the fixture said: its status and console, and the
  /// attempts that ended, each test's by its schedule's seed.
  private struct Explored {
    var status: Int32
    var output: String
    var errors: String
    var ended: [(test: TestID, result: TestResult)]
    var bySeed: [String: [String: (test: TestID, result: TestResult)]] {
      var tests: [String: [String: (test: TestID, result: TestResult)]] = [:]
      for run in ended { tests[run.test.path, default: [:]][run.test.schedule ?? ""] = run }
      return tests
    }
  }

  private func explore(_ flags: [String]) throws -> Explored {
    try Self.package.build()
    let json = path("events-\(UUID().uuidString).jsonl")
    let run = try runToEnd(try builtHarness(), ["test", "--package-path", Self.fixture.path, "--skip-build", "--json", json]
      + flags + ["--", "--scratch-path", Self.scratch.path], limit: 600)
    let ended = try EventRecorder(jsonLines: String(contentsOfFile: json, encoding: .utf8)).results.map { ($0.test, $0.result) }
    return Explored(status: run.status, output: run.output, errors: run.errors, ended: ended)
  }
}
