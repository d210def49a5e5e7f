@testable @_spi(ForToolsIntegrationOnly) import AsyncHarness
import XCTest

/// What a test bundle's lane decides (`BundleLaneMachine`), told what happened and read back as
/// the commands it gives, without processes: which worker runs the test asked for, what
/// becomes of it after the wait, which tests run again alone after a crash, and whose crash
/// it was. Which tests a new worker is given is `BundleBatchTests`'.
final class BundleLaneMachineTests: XCTestCase {
  private typealias Machine = BundleLaneMachine

  /// `count` XCTest tests of one class, planned.
  private func tests(_ count: Int, timeLimit: Duration? = nil) throws -> Runner.Plan.PlannedTests {
    let catalog = Catalog(existing: (0..<count).map {
      ExistingTest(library: .xctest, suite: "M.C", name: "t\($0)", id: "M.C/t\($0)", isParameterized: false)
    })
    var configuration = Configuration()
    configuration.timeLimit = timeLimit
    let plan = try Runner.Plan(catalog: catalog, configuration: configuration, registry: .builtIn)
    return plan.plannedTests(of: plan.entries[0], repetition: 1)
  }

  /// The commands, each in a few words.
  private func said(_ commands: [Machine.Command]) -> [String] {
    commands.map { command in
      switch command {
      case .spawn(let batch, let oneAtATime): "spawn " + batch.map(\.planned.id.name).joined(separator: " ") + (oneAtATime ? " alone" : "")
      case .wait(let planned): "wait \(planned.id.name)"
      case .waitForExit(let limit, let silently): "wait for exit within \(limit)" + (silently ? ", silently" : "")
      case .retire: "retire"
      case .kill: "kill"
      case .deliver(let events): "deliver \(events.count)"
      case .report(let failure): "report \(failure.issue.message)"
      case .tell(let issues): "tell " + issues.map(\.message).joined(separator: ", ")
      case .end(let end): "end \(end)"
      }
    }
  }

  private func machine(_ tests: Runner.Plan.PlannedTests) -> Machine {
    var machine = Machine(bundle: "/b/Tests.xctest")
    XCTAssertTrue(machine.handle(.prepared(tests)).isEmpty)
    return machine
  }

  private let passed = AttemptEnd.returned(duration: 0)

  /// The tests `ids` ended, each having recorded one event.
  private func ended(_ tests: Runner.Plan.PlannedTests, _ indices: [Int], as end: AttemptEnd) -> [TestID: BundleWorker.Ended] {
    Dictionary(uniqueKeysWithValues: indices.map { (tests[$0].id, BundleWorker.Ended(events: [Event(.testStarted(tests[$0].id))], end: end)) })
  }

  func testTheFirstTestStartsAWorkerGivenItAndTheTestsAfterItAndEndsAsItEnded() throws {
    let tests = try tests(3)
    var machine = machine(tests)
    XCTAssertEqual(said(machine.handle(.asked(tests[0], workerHolds: false))), ["spawn t0 t1 t2"])
    XCTAssertEqual(said(machine.handle(.spawned)), ["wait t0"])
    // The library ran t1 too before the wait was over: it is kept for when it is asked for.
    XCTAssertEqual(said(machine.handle(.waited(.init(holdsAsked: false), ended: ended(tests, [0, 1], as: passed)))),
                   ["deliver 1", "end \(passed)"])
    XCTAssertEqual(said(machine.handle(.asked(tests[1], workerHolds: false))), ["deliver 1", "end \(passed)"],
                   "a test that ended before it was asked for ends at once")
    XCTAssertEqual(said(machine.handle(.asked(tests[2], workerHolds: true))), ["wait t2"])
    XCTAssertEqual(said(machine.handle(.waited(.init(holdsAsked: true), ended: [:]))), ["wait t2"],
                   "a wait over for another reason (a test left running) waits again")
  }

  func testATestTheWorkerDoesNotHoldStopsItAndGoesToANewWorkerWithTheTestsNotEndedAfterIt() throws {
    let tests = try tests(3)
    var machine = machine(tests)
    _ = machine.handle(.asked(tests[0], workerHolds: false))
    _ = machine.handle(.spawned)
    _ = machine.handle(.waited(.init(holdsAsked: false), ended: ended(tests, [0, 2], as: passed)))
    // A retry of t0 the worker was not given: t1 goes with it, t2 ended.
    let retry = try XCTUnwrap(Self.retry(of: tests[0]))
    XCTAssertEqual(said(machine.handle(.asked(retry, workerHolds: false))), ["kill", "spawn t0 t1"])
  }

  /// The second attempt of `planned`, whose plan allows no retry.
  private static func retry(of planned: Runner.PlannedTest) -> Runner.PlannedTest? {
    var configuration = Configuration()
    configuration.retries = 1
    let catalog = Catalog(existing: [planned.existing!])
    let plan = try? Runner.Plan(catalog: catalog, configuration: configuration, registry: .builtIn)
    return plan.flatMap { $0.plannedTests(of: $0.entries[0], repetition: 1).first?.retry }
  }

  func testATestTheBundleDoesNotListAndAWorkerThatCannotStartEndTheAttempt() throws {
    let plan = try Runner.Plan(suites: [Suite("Harness") { Test("h") { _ in } }], configuration: Configuration(), registry: .builtIn)
    var machine = Machine(bundle: "/b/Tests.xctest")
    XCTAssertEqual(said(machine.handle(.asked(plan.plannedTests(of: plan.entries[0], repetition: 1)[0], workerHolds: false))),
                   ["end couldNotStart(reason: \"Harness/h is not a test of the test bundle /b/Tests.xctest\")"])
    let tests = try tests(1)
    _ = machine.handle(.asked(tests[0], workerHolds: false))
    XCTAssertEqual(said(machine.handle(.couldNotSpawn(reason: "no such file"))), ["end couldNotStart(reason: \"no such file\")"])
    XCTAssertEqual(said(machine.handle(.asked(tests[0], workerHolds: false))), ["spawn t0"], "nothing to stop")
  }

  /// A worker that runs no other test is retired, not only stopped: what it found outside
  /// every test (under `--explore`, an issue a detached task recorded under no test while the
  /// test ran) is reported before the test ends, not lost with it.
  func testAStoppedWorkerOrOneThatRanAScheduleOrLeftAProcessIsRetiredAndNeverRunsAnotherTest() throws {
    let tests = try tests(2)
    let failure = OutsideFailure(place: .noTest, suite: SuiteRun(suite: "M.S", host: "swift-testing"),
                                 issue: Issue(kind: .expectationFailed, message: "recorded under no test"), suspects: [],
                                 afterTests: true)
    for waited in [Machine.Waited(stopped: true), Machine.Waited(leftProcesses: true), Machine.Waited(ranSchedule: true)] {
      var machine = machine(tests)
      _ = machine.handle(.asked(tests[0], workerHolds: false))
      _ = machine.handle(.spawned)
      XCTAssertEqual(said(machine.handle(.waited(waited, ended: ended(tests, [0], as: passed)))), ["retire"], "\(waited)")
      XCTAssertEqual(said(machine.handle(.retired(.init(failures: [failure])))),
                     ["report recorded under no test", "deliver 1", "end \(passed)"], "\(waited)")
      XCTAssertFalse(machine.hasWorker)
      XCTAssertEqual(said(machine.handle(.asked(tests[1], workerHolds: false))), ["spawn t1"], "\(waited)")
    }
  }

  /// A schedule's bundle (one schedule, one test) is heard to its exit once its test ended, a
  /// moment: what runs after the test (a class tear-down, an exit handler) fails outside every
  /// test, as in a plain run; stopped then, it fails nothing.
  func testAWorkerThatRanAScheduleIsGivenAMomentToExitSilently() throws {
    let tests = try tests(1)
    var machine = machine(tests)
    _ = machine.handle(.asked(tests[0], workerHolds: false))
    _ = machine.handle(.spawned)
    XCTAssertEqual(said(machine.handle(.waited(.init(ranSchedule: true, holdsNone: true), ended: ended(tests, [0], as: passed)))),
                   ["wait for exit within 1.0 seconds, silently"])
    XCTAssertEqual(said(machine.handle(.exited(ended: ended(tests, [0], as: passed)))), ["retire"])
    XCTAssertEqual(said(machine.handle(.retired(.init()))), ["deliver 1", "end \(passed)"])
    // One whose schedule failed is red already, and may be held by jobs that never run.
    _ = machine.handle(.asked(tests[0], workerHolds: false))
    _ = machine.handle(.spawned)
    XCTAssertEqual(said(machine.handle(.waited(.init(ranSchedule: true, failed: true, holdsNone: true),
                                               ended: ended(tests, [0], as: passed)))), ["retire"])
  }

  func testAWorkerThatHoldsNoTestIsWatchedToItsExitThenRetired() throws {
    let limited = try tests(1, timeLimit: .seconds(5))
    var withLimit = machine(limited)
    _ = withLimit.handle(.asked(limited[0], workerHolds: false))
    _ = withLimit.handle(.spawned)
    XCTAssertEqual(said(withLimit.handle(.waited(.init(holdsNone: true), ended: ended(limited, [0], as: passed)))),
                   ["wait for exit within 5.0 seconds"], "the time limit of the test asked for last")
    let tests = try tests(1)
    var machine = machine(tests)
    _ = machine.handle(.asked(tests[0], workerHolds: false))
    _ = machine.handle(.spawned)
    XCTAssertEqual(said(machine.handle(.waited(.init(holdsNone: true), ended: ended(tests, [0], as: passed)))),
                   ["wait for exit within 30.0 seconds"], "without one, BundleLaneMachine.exitLimit")
    XCTAssertEqual(said(machine.handle(.exited(ended: ended(tests, [0], as: passed)))), ["retire"])
    let failure = OutsideFailure(place: .process, suite: SuiteRun(suite: "M.C", host: "xctest"),
                                 issue: Issue(kind: .crashed, message: "crashed after t0"), suspects: [], afterTests: true)
    XCTAssertEqual(said(machine.handle(.retired(.init(failures: [failure])))), ["report crashed after t0", "deliver 1", "end \(passed)"])
  }

  func testTestsACrashInterruptedRunAgainAloneKeepTheirWarningsAndTheCrashIsReportedWhenNoneCrashesAgain() throws {
    let tests = try tests(3)
    var machine = machine(tests)
    _ = machine.handle(.asked(tests[0], workerHolds: false))
    _ = machine.handle(.spawned)
    XCTAssertEqual(said(machine.handle(.waited(.init(exited: true), ended: ended(tests, [0], as: passed)))), ["retire"])
    let crash = OutsideFailure(place: .process, suite: SuiteRun(suite: "M.C", host: "xctest"),
                               issue: Issue(kind: .crashed, message: "the bundle crashed"), suspects: [], afterTests: true)
    let leaked = Issue(kind: .warning, message: "leaked")
    let retired = Machine.Retired(runAgainAlone: [tests[1].id, tests[2].id], kept: [tests[1].id: [leaked]],
                                  crash: CrashUnderReview(failure: crash, awaiting: [tests[1].id, tests[2].id]))
    XCTAssertEqual(said(machine.handle(.retired(retired))), ["deliver 1", "end \(passed)"])
    // Each runs alone, in a worker of its own.
    XCTAssertEqual(said(machine.handle(.asked(tests[1], workerHolds: false))), ["spawn t1 alone"])
    _ = machine.handle(.spawned)
    XCTAssertEqual(said(machine.handle(.waited(.init(holdsNone: true), ended: ended(tests, [1], as: passed)))), ["wait for exit within 30.0 seconds"])
    _ = machine.handle(.exited(ended: ended(tests, [1], as: passed)))
    XCTAssertEqual(said(machine.handle(.retired(.init()))), ["deliver 1", "tell leaked", "end \(passed)"])
    XCTAssertEqual(said(machine.handle(.asked(tests[2], workerHolds: false))), ["spawn t2 alone"])
    _ = machine.handle(.spawned)
    XCTAssertEqual(said(machine.handle(.waited(.init(), ended: ended(tests, [2], as: passed)))),
                   ["deliver 1", "report the bundle crashed", "end \(passed)"], "none crashed again: the crash is no test's")
    XCTAssertEqual(machine.alone, [])
  }

  func testTheRunsEndStopsTheWorkerAndForgetsWhatWasPrepared() throws {
    let tests = try tests(2)
    var machine = machine(tests)
    _ = machine.handle(.asked(tests[0], workerHolds: false))
    _ = machine.handle(.spawned)
    _ = machine.handle(.waited(.init(), ended: ended(tests, [0], as: passed)))
    XCTAssertEqual(said(machine.handle(.finishing)), ["kill"])
    XCTAssertEqual(said(machine.handle(.asked(tests[1], workerHolds: false))), ["spawn t1"])
  }
}
