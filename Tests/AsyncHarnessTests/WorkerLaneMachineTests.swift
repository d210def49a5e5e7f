@testable @_spi(ForToolsIntegrationOnly) import AsyncHarness
import XCTest

/// What a lane of harness workers decides (`WorkerLaneMachine`), told what happened and read
/// back as the commands it gives, without processes: every transition of the tests it sends
/// ahead, of its workers after each attempt, and of the attempts that run again side by side.
final class WorkerLaneMachineTests: XCTestCase {
  private typealias Machine = WorkerLaneMachine

  /// `count` async tests of one suite (the one at `skipped`, if any, skipped), planned.
  private func tests(_ count: Int, skipped: Int? = nil) throws -> Runner.Plan.PlannedTests {
    let suite = Suite("Lane") {
      for number in 0..<count {
        if number == skipped { Test("t\(number)", .skip("not today")) { _ async in } } else { Test("t\(number)") { _ async in } }
      }
    }
    let plan = try Runner.Plan(suites: [suite], configuration: Configuration(), registry: .builtIn)
    return plan.plannedTests(of: plan.entries[0], repetition: 1)
  }

  /// The commands, each in a few words: `send t3 #4` is the request for `t3` under reference 4.
  private func said(_ commands: [Machine.Command]) -> [String] {
    commands.map { command in
      switch command {
      case .spawn(let slot): "spawn \(slot)"
      case .takeSpare: "take spare"
      case .send(let planned, let ref, let answered): "send \(name(planned)) #\(ref)" + (answered ? " answered" : "")
      case .begin(let planned, let ref): "begin \(name(planned))" + (ref.map { " #\($0)" } ?? "")
      case .resume: "resume"
      case .start(let planned, let ref, _): "start \(name(planned)) #\(ref)"
      case .waitBeside: "wait"
      case .deliver(let attempt, _, _): "deliver \(name(attempt.planned))"
      case .tell(let attempt, let issues): "tell \(name(attempt.planned)) " + issues.map(\.message).joined(separator: ", ")
      case .couldNotStart(let id, let reason): "could not start \(id.name): \(reason)"
      case .kill(let slot): "kill \(slot)"
      case .retire(let slot): "retire \(slot)"
      case .forget(let slot): "forget \(slot)"
      case .reportEnd(let slot, let exit): "report end \(slot): \(exit)"
      }
    }
  }

  private func name(_ planned: Runner.PlannedTest) -> String {
    planned.id.name + (planned.id.attempt > 1 ? " attempt \(planned.id.attempt)" : "")
  }

  /// A machine told of `tests`, sending up to `depth` ahead.
  private func machine(_ tests: Runner.Plan.PlannedTests, depth: Int = 3, freshWorkerPerTest: Bool = false) -> Machine {
    var machine = Machine(freshWorkerPerTest: freshWorkerPerTest, pipelineDepth: depth)
    XCTAssertEqual(said(machine.handle(.prepared(tests))), [])
    return machine
  }

  /// A machine told of `tests` whose worker ran `tests[0]`, which ended as `ended` says.
  private func afterTheFirst(of tests: Runner.Plan.PlannedTests, _ ended: Machine.EndedAlone) -> Machine {
    var machine = machine(tests)
    _ = machine.handle(.asked(tests[0]))
    _ = machine.handle(.spawned(.worker))
    _ = machine.handle(.endedAlone(returned(tests[0]), ended))
    return machine
  }

  /// `planned`'s attempt returned.
  private func returned(_ planned: Runner.PlannedTest) -> WorkerSupervision.Finished {
    .ended(attempt(planned), .returned(duration: 0), note: nil)
  }

  /// The next attempt of `planned`.
  private func retry(_ planned: Runner.PlannedTest) throws -> Runner.PlannedTest {
    var configuration = Configuration()
    configuration.retries = 1
    let plan = try Runner.Plan(suites: [Suite("Lane") { Test(planned.id.name) { _ async in } }], configuration: configuration,
                               registry: .builtIn)
    return try XCTUnwrap(plan.plannedTests(of: plan.entries[0], repetition: 1).first?.retry)
  }

  // MARK: One at a time

  func testTheFirstTestStartsAWorkerThenGoesWithTheTestsAfterItUpToThePipelinesDepth() throws {
    let tests = try tests(5)
    var machine = machine(tests)
    XCTAssertEqual(said(machine.handle(.asked(tests[0]))), ["spawn worker"])
    XCTAssertEqual(said(machine.handle(.spawned(.worker))), ["send t0 #1", "send t1 #2", "send t2 #3", "begin t0 #1"])
    XCTAssertEqual(said(machine.handle(.endedAlone(returned(tests[0]), .init()))), ["deliver t0"],
                   "the worker is kept, and runs t1 next")
    // The test held first runs; one more is sent to keep three.
    XCTAssertEqual(said(machine.handle(.asked(tests[1]))), ["send t3 #4", "begin t1 #2"])
    XCTAssertEqual(machine.sent.map(\.id), [tests[1].id, tests[2].id, tests[3].id])
  }

  func testASkippedTestIsNeverSentAhead() throws {
    let tests = try tests(4, skipped: 1)
    var machine = machine(tests)
    _ = machine.handle(.asked(tests[0]))
    XCTAssertEqual(said(machine.handle(.spawned(.worker))), ["send t0 #1", "send t2 #2", "send t3 #3", "begin t0 #1"])
  }

  func testAWorkerHoldingOtherTestsThanTheOneAskedForIsStoppedAndTheTestsGoToAnother() throws {
    let tests = try tests(6)
    var machine = afterTheFirst(of: tests, .init())
    // The runner asks for t4, not t1: the worker cannot be told to forget what it was sent.
    XCTAssertEqual(said(machine.handle(.asked(tests[4]))), ["kill worker", "spawn worker"])
    XCTAssertEqual(said(machine.handle(.spawned(.worker))), ["send t4 #4", "send t5 #5", "begin t4 #4"])
  }

  func testAFailureWhoseWorkerPausedResumesItAndSendsAgainWhatItDropped() throws {
    let tests = try tests(4)
    var machine = machine(tests)
    _ = machine.handle(.asked(tests[0]))
    _ = machine.handle(.spawned(.worker))
    XCTAssertEqual(said(machine.handle(.endedAlone(returned(tests[0]), .init(paused: true)))), ["deliver t0", "resume"])
    XCTAssertEqual(machine.sent, [], "it dropped t1 and t2")
    // A retry was never prepared: it goes first, then what was dropped, again.
    let again = try retry(tests[0])
    XCTAssertEqual(said(machine.handle(.asked(again))), ["send t0 attempt 2 #4 answered"])
    XCTAssertEqual(said(machine.handle(.taken)), ["send t1 #5", "send t2 #6", "begin t0 attempt 2 #4"])
  }

  func testAWorkerThatNoLongerReadsIsStoppedAndTheTestAskedForGoesToAFreshOne() throws {
    let tests = try tests(3)
    var machine = afterTheFirst(of: tests, .init(paused: true))
    XCTAssertEqual(said(machine.handle(.asked(try retry(tests[0])))), ["send t0 attempt 2 #4 answered"])
    XCTAssertEqual(said(machine.handle(.refused)), ["kill worker", "spawn worker"])
    // A fresh worker that dies before reading its test is reported by the wait: not answered.
    XCTAssertEqual(said(machine.handle(.spawned(.worker))), ["send t0 attempt 2 #5", "send t1 #6", "send t2 #7",
                                                             "begin t0 attempt 2 #5"])
  }

  func testAWorkerThatCannotStartEndsTheAttemptAndTheNextTestTriesAgain() throws {
    let tests = try tests(3)
    var machine = machine(tests)
    _ = machine.handle(.asked(tests[0]))
    XCTAssertEqual(said(machine.handle(.couldNotSpawn(.worker, reason: "no such file"))),
                   ["could not start t0: no such file"])
    XCTAssertEqual(machine.sent, [])
    XCTAssertEqual(said(machine.handle(.asked(tests[1]))), ["spawn worker"])
    XCTAssertEqual(said(machine.handle(.spawned(.worker))), ["send t1 #1", "send t2 #2", "begin t1 #1"])
  }

  func testAWorkerThatEndedIsForgottenAndWhatItHeldIsSentAgainToTheNext() throws {
    let tests = try tests(5)
    var machine = machine(tests)
    _ = machine.handle(.asked(tests[0]))
    _ = machine.handle(.spawned(.worker))
    XCTAssertEqual(said(machine.handle(.endedAlone(nil, .init(workerEnded: true)))),
                   ["could not start t0: the worker ended without saying how the test ended", "forget worker"],
                   "nothing said how its attempt ended")
    XCTAssertEqual(said(machine.handle(.asked(tests[1]))), ["spawn worker"])
    XCTAssertEqual(said(machine.handle(.spawned(.worker))), ["send t1 #4", "send t2 #5", "send t3 #6", "begin t1 #4"])
  }

  func testAWorkerNotWaitedForThatEndedAfterItsTestsIsJudgedAndForgottenOneHoldingWorkKeepsItsEnd() throws {
    let tests = try tests(4)
    var machine = machine(tests)
    _ = machine.handle(.asked(tests[0]))
    XCTAssertEqual(said(machine.handle(.spawned(.worker))), ["send t0 #1", "send t1 #2", "send t2 #3", "begin t0 #1"])
    _ = machine.handle(.endedAlone(returned(tests[0]), .init()))
    // It holds t1 and t2, sent ahead: the test that runs in it next hears its end.
    XCTAssertEqual(said(machine.handle(.endedUnawaited(.worker, .init(exit: .exited(1))))), [])
    XCTAssertEqual(said(machine.handle(.endedUnawaited(.sideBySide, .init(exit: .exited(1), running: 1)))), [],
                   "an attempt still runs in it")
    XCTAssertEqual(said(machine.handle(.endedUnawaited(.spare, .init(exit: .exited(1), ranTests: false)))), [],
                   "it ran no test yet")
    XCTAssertEqual(said(machine.handle(.endedUnawaited(.sideBySide, .init(exit: .signaled(SIGSEGV))))),
                   ["report end sideBySide: signal SIGSEGV (segmentation fault)", "forget sideBySide"])
    XCTAssertEqual(said(machine.handle(.endedUnawaited(.sideBySide, .init(exit: .exited(0))))), ["forget sideBySide"],
                   "a worker that exits with status 0 after its tests leaves no failure")
    // Once the worker running tests one at a time holds nothing, its end is its own, and the
    // next test starts a fresh worker.
    XCTAssertEqual(said(machine.handle(.asked(tests[3]))), ["kill worker", "spawn worker"])
    XCTAssertEqual(said(machine.handle(.spawned(.worker))), ["send t3 #4", "begin t3 #4"])
    _ = machine.handle(.endedAlone(returned(tests[3]), .init()))
    XCTAssertEqual(said(machine.handle(.endedUnawaited(.worker, .init(exit: .exited(3))))),
                   ["report end worker: exit status 3", "forget worker"])
    XCTAssertEqual(said(machine.handle(.asked(tests[1]))), ["spawn worker"])
  }

  func testARetiredWorkerThatEndedByItselfWithAFailingStatusAfterItsTestsIsReported() throws {
    var machine = machine(try tests(1))
    XCTAssertEqual(said(machine.handle(.retired(.worker, .init(exit: .exited(2))))), ["report end worker: exit status 2"])
    XCTAssertEqual(said(machine.handle(.retired(.worker, .init(exit: .exited(0))))), [], "it exited as told")
    XCTAssertEqual(said(machine.handle(.retired(.worker, .init(exit: .signaled(SIGKILL), stopped: true)))), [],
                   "stopped past its grace period: the harness ended it")
    XCTAssertEqual(said(machine.handle(.retired(.spare, .init(exit: .exited(1), ranTests: false)))), [],
                   "no test ran in it to leave work behind")
  }

  func testAWorkerStoppedOrLeftWithWorkIsRetiredAndNeverRunsAnotherTest() throws {
    let tests = try tests(3)
    for ended in [Machine.EndedAlone(workerStopped: true), Machine.EndedAlone(workerLeftWork: true, paused: true)] {
      var machine = machine(tests)
      _ = machine.handle(.asked(tests[0]))
      _ = machine.handle(.spawned(.worker))
      XCTAssertEqual(said(machine.handle(.endedAlone(returned(tests[0]), ended))), ["deliver t0", "retire worker"], "\(ended)")
      XCTAssertEqual(said(machine.handle(.asked(tests[1]))), ["spawn worker"], "\(ended)")
    }
  }

  func testAFreshWorkerPerTestSendsNothingAheadAndStartsTheNextTestsWorkerWhileOneRuns() throws {
    let tests = try tests(3)
    var machine = machine(tests, freshWorkerPerTest: true)
    XCTAssertEqual(said(machine.handle(.asked(tests[0]))), ["spawn worker"])
    XCTAssertEqual(said(machine.handle(.spawned(.worker))), ["send t0 #1", "spawn spare"])
    XCTAssertEqual(said(machine.handle(.spawned(.spare))), ["begin t0 #1"])
    XCTAssertEqual(said(machine.handle(.endedAlone(returned(tests[0]), .init()))), ["deliver t0", "retire worker"],
                   "one worker, one test")
    XCTAssertEqual(said(machine.handle(.asked(tests[1]))), ["take spare", "send t1 #2", "spawn spare"])
    // A spare that cannot start now is started, or reported, when the next test needs it.
    XCTAssertEqual(said(machine.handle(.couldNotSpawn(.spare, reason: "no more processes"))), ["begin t1 #2"])
    _ = machine.handle(.endedAlone(returned(tests[1]), .init()))
    XCTAssertEqual(said(machine.handle(.asked(tests[2]))), ["spawn worker"])
  }

  func testTheRunsEndStopsAWorkerHoldingTestsNeverAskedForAndRetiresEveryWorker() throws {
    let tests = try tests(3)
    var machine = machine(tests)
    XCTAssertEqual(said(machine.handle(.finishing(besideRunning: false))),
                   ["retire worker", "retire spare", "retire sideBySide"])
    _ = machine.handle(.prepared(tests))
    _ = machine.handle(.asked(tests[0]))
    _ = machine.handle(.spawned(.worker))
    _ = machine.handle(.endedAlone(returned(tests[0]), .init()))
    XCTAssertEqual(said(machine.handle(.finishing(besideRunning: true))),
                   ["kill worker", "kill sideBySide", "retire worker", "retire spare", "retire sideBySide"])
    XCTAssertEqual(machine.sent, [])
    XCTAssertEqual(said(machine.handle(.asked(tests[0]))), ["spawn worker"], "the run's end forgot every worker")
    XCTAssertEqual(said(machine.handle(.spawned(.worker))), ["send t0 #4", "begin t0 #4"], "and what was prepared")
  }

  // MARK: Side by side

  private func attempt(_ planned: Runner.PlannedTest, kept: [Issue] = []) -> WorkerSupervision.Attempt {
    WorkerSupervision.Attempt(planned: planned, ref: nil, streams: false, sink: EventSink { _ in }, outputStart: 0,
                              outputSent: 0, deadline: nil, kept: kept)
  }

  private let note = Issue(kind: .warning, message: "ran again")

  func testEachTestSideBySideStartsUnderAReferenceUniqueOnTheLane() throws {
    let tests = try tests(3)
    var machine = machine(tests)
    _ = machine.handle(.asked(tests[0]))
    _ = machine.handle(.spawned(.worker))
    XCTAssertEqual(said(machine.handle(.askedBeside(tests[2], sink: EventSink { _ in }))), ["spawn sideBySide"])
    XCTAssertEqual(said(machine.handle(.spawned(.sideBySide))), ["start t2 #4"])
    XCTAssertEqual(said(machine.handle(.askedBeside(tests[1], sink: EventSink { _ in }))), ["start t1 #5"],
                   "in the worker started before")
    XCTAssertEqual(said(machine.handle(.awaitingBeside(running: 1))), ["wait"])
    XCTAssertEqual(said(machine.handle(.awaitingBeside(running: 0))), [], "none runs, none waits to run again")
  }

  func testAWorkerThatEndedSideBySideIsForgottenAndOneThatMustNotRunAnotherIsRetiredOnceItRunsNone() throws {
    let tests = try tests(2)
    var machine = machine(tests)
    let ended = WorkerSupervision.Finished.ended(attempt(tests[0]), .returned(duration: 0), note: nil)
    XCTAssertEqual(said(machine.handle(.waitedBeside(finished: [ended], workerEnded: true, workerStopped: false, workerLeftWork: false, running: 0))),
                   ["forget sideBySide", "deliver t0"])
    XCTAssertEqual(said(machine.handle(.waitedBeside(finished: [ended], workerEnded: false, workerStopped: false, workerLeftWork: true, running: 1))),
                   ["deliver t0"], "it still runs a test")
    XCTAssertEqual(said(machine.handle(.waitedBeside(finished: [ended], workerEnded: false, workerStopped: false, workerLeftWork: true, running: 0))),
                   ["retire sideBySide", "deliver t0"])
    XCTAssertEqual(said(machine.handle(.waitedBeside(finished: [ended], workerEnded: false, workerStopped: false, workerLeftWork: false, running: 0))),
                   ["deliver t0"])
  }

  func testAWorkerSentAStopSignalIsWatchedToItsEndBeforeWhatFollowsItsTestsIsDecided() throws {
    let tests = try tests(2)
    var machine = machine(tests)
    // Its reply came with the signal sent at t1's deadline: the worker starts nothing more.
    let replied = WorkerSupervision.Finished.ended(attempt(tests[0]), .returned(duration: 0), note: nil)
    XCTAssertEqual(said(machine.handle(.waitedBeside(finished: [replied], workerEnded: false, workerStopped: true,
                                                     workerLeftWork: false, running: 1))), ["wait"])
    let stopped = WorkerSupervision.Finished.ended(attempt(tests[1]), .stoppedAtLimit(.seconds(1), killed: false,
                                                                                        gracePeriod: .seconds(1), output: ""),
                                                   note: nil)
    XCTAssertEqual(said(machine.handle(.waitedBeside(finished: [stopped], workerEnded: true, workerStopped: true,
                                                     workerLeftWork: false, running: 0))),
                   ["forget sideBySide", "deliver t0", "deliver t1"], "both delivered once, in order")
    XCTAssertEqual(said(machine.handle(.waitedBeside(finished: [], workerEnded: false, workerStopped: false,
                                                     workerLeftWork: false, running: 0))), [], "and forgotten")
  }

  func testAttemptsTheCrashDidNotNameRunAgainAtOnceBesideTheOthersWhenTheCulpritIsKnown() throws {
    let tests = try tests(3)
    var machine = machine(tests)
    let leak = Issue(kind: .warning, message: "leaked")
    let finished: [WorkerSupervision.Finished] = [
      .ended(attempt(tests[0]), .processEnded(.signaled(11), output: ""), note: nil),
      .runAgain(attempt(tests[1]), note: note, company: .besideOthers),
      .runAgain(attempt(tests[2], kept: [leak]), note: note, company: .besideOthers),
    ]
    XCTAssertEqual(said(machine.handle(.waitedBeside(finished: finished, workerEnded: true, workerStopped: false, workerLeftWork: false, running: 0))),
                   ["forget sideBySide", "deliver t0", "tell t1 ran again", "tell t2 ran again, leaked", "spawn sideBySide"])
    XCTAssertEqual(said(machine.handle(.spawned(.sideBySide))), ["start t1 #1", "start t2 #2"], "in a fresh worker")
    XCTAssertTrue(machine.takesSideBySide(workerRetiring: false), "no half waits")
    XCTAssertFalse(machine.takesSideBySide(workerRetiring: true), "a retiring worker starts nothing new")
  }

  func testACrashThatNamedNoAttemptRunsThemAgainInHalvesEachBesideNothingElseWarnedOnce() throws {
    let tests = try tests(5)
    var machine = machine(tests)
    let all = (0..<5).map { WorkerSupervision.Finished.runAgain(attempt(tests[$0]), note: note, company: .inHalves) }
    _ = machine.handle(.waitedBeside(finished: all, workerEnded: true, workerStopped: false, workerLeftWork: false, running: 0))
    XCTAssertFalse(machine.takesSideBySide(workerRetiring: false), "halves run beside nothing else")
    XCTAssertEqual(said(machine.handle(.awaitingBeside(running: 0))), ["spawn sideBySide"])
    XCTAssertEqual(said(machine.handle(.spawned(.sideBySide))), ["start t0 #1", "start t1 #2", "start t2 #3"])
    XCTAssertEqual(said(machine.handle(.awaitingBeside(running: 3))), ["wait"])
    // The first half crashes again, naming none: it is halved, and goes before the second half.
    let again = (0..<3).map { WorkerSupervision.Finished.runAgain(attempt(tests[$0]), note: note, company: .inHalves) }
    XCTAssertEqual(said(machine.handle(.waitedBeside(finished: again, workerEnded: true, workerStopped: false, workerLeftWork: false, running: 0))),
                   ["forget sideBySide"], "each was told once why it runs again")
    XCTAssertEqual(said(machine.handle(.awaitingBeside(running: 0))), ["spawn sideBySide"])
    // The worker for that half cannot start: its attempts end so, and the lane does not wait for them.
    XCTAssertEqual(said(machine.handle(.couldNotSpawn(.sideBySide, reason: "no more processes"))),
                   ["could not start t0: no more processes", "could not start t1: no more processes"])
    XCTAssertEqual(said(machine.handle(.awaitingBeside(running: 0))), ["spawn sideBySide"])
    XCTAssertEqual(said(machine.handle(.spawned(.sideBySide))), ["start t2 #4"])
    _ = machine.handle(.waitedBeside(finished: [.ended(attempt(tests[2]), .returned(duration: 0), note: nil)],
                                     workerEnded: false, workerStopped: false, workerLeftWork: false, running: 0))
    XCTAssertEqual(said(machine.handle(.awaitingBeside(running: 0))), ["start t3 #5", "start t4 #6"], "in the same worker")
    XCTAssertFalse(machine.takesSideBySide(workerRetiring: false), "the last half runs")
    _ = machine.handle(.waitedBeside(finished: [3, 4].map { .ended(attempt(tests[$0]), .returned(duration: 0), note: nil) },
                                     workerEnded: false, workerStopped: false, workerLeftWork: false, running: 0))
    XCTAssertTrue(machine.takesSideBySide(workerRetiring: false))
    XCTAssertEqual(said(machine.handle(.awaitingBeside(running: 0))), [])
  }
}
