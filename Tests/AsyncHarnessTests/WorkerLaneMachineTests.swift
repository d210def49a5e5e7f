@testable @_spi(ForToolsIntegrationOnly) import AsyncHarness
import XCTest

/// What a lane of harness workers decides (`WorkerLaneMachine`), told what happened and read
/// back as the commands it gives, without processes: every transition of the tests it sends
/// ahead, of its workers after each attempt, and of the attempts that run again side by side.
/// What a worker says reaches the machine as the lane's loop hands it over: its reply lines,
/// fed to the machine's state of that worker.
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
      case .start(let planned, let ref): "start \(name(planned)) #\(ref)"
      case .waitBeside: "wait"
      case .deliver(let attempt, let end, _): "deliver \(name(attempt.planned)) \(ending(end))"
      case .tell(let attempt, let issues): "tell \(name(attempt.planned)) " + issues.map { "\($0.kind)" }.joined(separator: ", ")
      case .couldNotStart(let id, let reason): "could not start \(id.name): \(reason)"
      case .kill(let slot): "kill \(slot)"
      case .retire(let slot): "retire \(slot)"
      case .forget(let slot): "forget \(slot)"
      case .report(let failure, _): "report: \(failure.issue.message)"
      case .signal(let slot, let signal): "signal \(slot) \(ProcessEnding.name(of: signal).prefix { $0 != " " })"
      }
    }
  }

  /// How an attempt ended, in a word or two.
  private func ending(_ end: AttemptEnd) -> String {
    switch end {
    case .returned: "returned"
    case .processEnded(let exit, _): "ended with \(exit)"
    case .stoppedAtLimit: "stopped at its limit"
    case .leftRunningAtLimit: "left running"
    case .interrupted: "interrupted"
    case .skipped: "skipped"
    case .couldNotStart: "could not start"
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

  private let sink = EventSink { _ in }

  /// The worker in `slot` replies that `planned`'s attempt returned, as the lane's loop reads it.
  private func reply(_ machine: inout Machine, _ planned: Runner.PlannedTest, in slot: Machine.Slot = .worker,
                     paused: Bool = false, retire: WorkerRetirement? = nil) {
    let line = WorkerReply.returned(planned.id, duration: 0, trace: nil, paused: paused, retire: retire).line
    machine.reading(slot) { messages, supervision in _ = messages.channel(line[...], into: &supervision) }
  }

  /// The wait for the worker in `slot` is over: it `exit`ed so, or not.
  private func waited(_ slot: Machine.Slot, exit: ProcessEnding? = nil, outputHeld: Bool = false) -> Machine.Event {
    .waited(slot, exit: exit, outputHeld: outputHeld)
  }

  /// A machine told of `tests` whose worker ran `tests[0]`, which returned as said (`paused`,
  /// `retire`).
  private func afterTheFirst(of tests: Runner.Plan.PlannedTests, paused: Bool = false) -> Machine {
    var machine = machine(tests)
    _ = machine.handle(.asked(tests[0], sink: sink))
    _ = machine.handle(.spawned(.worker))
    reply(&machine, tests[0], paused: paused)
    _ = machine.handle(waited(.worker))
    return machine
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
    XCTAssertEqual(said(machine.handle(.asked(tests[0], sink: sink))), ["spawn worker"])
    XCTAssertEqual(said(machine.handle(.spawned(.worker))), ["send t0 #1", "send t1 #2", "send t2 #3", "begin t0 #1"])
    reply(&machine, tests[0])
    XCTAssertEqual(said(machine.handle(waited(.worker))), ["deliver t0 returned"], "the worker is kept, and runs t1 next")
    // The test held first runs; one more is sent to keep three.
    XCTAssertEqual(said(machine.handle(.asked(tests[1], sink: sink))), ["send t3 #4", "begin t1 #2"])
    XCTAssertEqual(machine.sent.map(\.id), [tests[1].id, tests[2].id, tests[3].id])
  }

  func testASkippedTestIsNeverSentAhead() throws {
    let tests = try tests(4, skipped: 1)
    var machine = machine(tests)
    _ = machine.handle(.asked(tests[0], sink: sink))
    XCTAssertEqual(said(machine.handle(.spawned(.worker))), ["send t0 #1", "send t2 #2", "send t3 #3", "begin t0 #1"])
  }

  func testAWorkerHoldingOtherTestsThanTheOneAskedForIsStoppedAndTheTestsGoToAnother() throws {
    let tests = try tests(6)
    var machine = afterTheFirst(of: tests)
    // The runner asks for t4, not t1: the worker cannot be told to forget what it was sent.
    XCTAssertEqual(said(machine.handle(.asked(tests[4], sink: sink))), ["kill worker", "spawn worker"])
    XCTAssertEqual(said(machine.handle(.spawned(.worker))), ["send t4 #4", "send t5 #5", "begin t4 #4"])
  }

  func testAFailureWhoseWorkerPausedResumesItAndSendsAgainWhatItDropped() throws {
    let tests = try tests(4)
    var machine = machine(tests)
    _ = machine.handle(.asked(tests[0], sink: sink))
    _ = machine.handle(.spawned(.worker))
    reply(&machine, tests[0], paused: true)
    XCTAssertEqual(said(machine.handle(waited(.worker))), ["deliver t0 returned", "resume"])
    XCTAssertEqual(machine.sent, [], "it dropped t1 and t2")
    // A retry was never prepared: it goes first, then what was dropped, again.
    let again = try retry(tests[0])
    XCTAssertEqual(said(machine.handle(.asked(again, sink: sink))), ["send t0 attempt 2 #4 answered"])
    XCTAssertEqual(said(machine.handle(.taken)), ["send t1 #5", "send t2 #6", "begin t0 attempt 2 #4"])
  }

  func testAWorkerThatNoLongerReadsIsStoppedAndTheTestAskedForGoesToAFreshOne() throws {
    let tests = try tests(3)
    var machine = afterTheFirst(of: tests, paused: true)
    XCTAssertEqual(said(machine.handle(.asked(try retry(tests[0]), sink: sink))), ["send t0 attempt 2 #4 answered"])
    XCTAssertEqual(said(machine.handle(.refused)), ["kill worker", "spawn worker"])
    // A fresh worker that dies before reading its test is reported by the wait: not answered.
    XCTAssertEqual(said(machine.handle(.spawned(.worker))), ["send t0 attempt 2 #5", "send t1 #6", "send t2 #7",
                                                             "begin t0 attempt 2 #5"])
  }

  func testAWorkerThatCannotStartEndsTheAttemptAndTheNextTestTriesAgain() throws {
    let tests = try tests(3)
    var machine = machine(tests)
    _ = machine.handle(.asked(tests[0], sink: sink))
    XCTAssertEqual(said(machine.handle(.couldNotSpawn(.worker, reason: "no such file"))),
                   ["could not start t0: no such file"])
    XCTAssertEqual(machine.sent, [])
    XCTAssertEqual(said(machine.handle(.asked(tests[1], sink: sink))), ["spawn worker"])
    XCTAssertEqual(said(machine.handle(.spawned(.worker))), ["send t1 #1", "send t2 #2", "begin t1 #1"])
  }

  func testAWorkerThatEndedEndsItsAttemptIsForgottenAndWhatItHeldIsSentAgainToTheNext() throws {
    let tests = try tests(5)
    var machine = machine(tests)
    _ = machine.handle(.asked(tests[0], sink: sink))
    _ = machine.handle(.spawned(.worker))
    XCTAssertEqual(said(machine.handle(waited(.worker, exit: .signaled(SIGSEGV)))),
                   ["deliver t0 ended with signal SIGSEGV (segmentation fault)", "forget worker"])
    XCTAssertEqual(said(machine.handle(.asked(tests[1], sink: sink))), ["spawn worker"])
    XCTAssertEqual(said(machine.handle(.spawned(.worker))), ["send t1 #4", "send t2 #5", "send t3 #6", "begin t1 #4"])
  }

  func testAWorkerNotWaitedForThatEndedHoldingWorkKeepsItsEndForTheTestThatRunsInItNext() throws {
    let tests = try tests(4)
    var machine = afterTheFirst(of: tests)
    // It holds t1 and t2, sent ahead: the test that runs in it next hears its end.
    XCTAssertEqual(said(machine.handle(.endedUnawaited(.worker, .exited(1)))), [])
    XCTAssertEqual(said(machine.handle(.asked(tests[1], sink: sink))), ["send t3 #4", "begin t1 #2"])
    XCTAssertEqual(said(machine.handle(waited(.worker, exit: .exited(1)))), ["deliver t1 ended with exit status 1", "forget worker"])
    // An attempt still runs in the worker side by side; a spare ran no test yet.
    _ = machine.handle(.askedBeside(tests[3], sink: sink))
    _ = machine.handle(.spawned(.sideBySide))
    XCTAssertEqual(said(machine.handle(.endedUnawaited(.sideBySide, .exited(1)))), [], "an attempt still runs in it")
    var fresh = self.machine(tests, freshWorkerPerTest: true)
    _ = fresh.handle(.asked(tests[0], sink: sink))
    XCTAssertEqual(said(fresh.handle(.spawned(.worker))), ["send t0 #1", "spawn spare"])
    XCTAssertEqual(said(fresh.handle(.spawned(.spare))), ["begin t0 #1"])
    XCTAssertEqual(said(fresh.handle(.endedUnawaited(.spare, .exited(1)))), [], "it ran no test yet")
  }

  func testAWorkerNotWaitedForThatEndedByItselfAfterItsTestsIsReportedAndForgotten() throws {
    let tests = try tests(3)
    var machine = machine(tests)
    _ = machine.handle(.askedBeside(tests[2], sink: sink))
    _ = machine.handle(.spawned(.sideBySide))
    reply(&machine, tests[2], in: .sideBySide)
    XCTAssertEqual(said(machine.handle(waited(.sideBySide))), ["deliver t2 returned"])
    XCTAssertEqual(said(machine.handle(.endedUnawaited(.sideBySide, .signaled(SIGSEGV)))), [
      "report: The worker process ended with signal SIGSEGV (segmentation fault) while none of its tests ran, after "
        + "\(tests[2].id.path) returned: work a test left behind ended it; it printed nothing",
      "forget sideBySide",
    ])
    // The next one exits with status 0 after its tests: no failure.
    XCTAssertEqual(said(machine.handle(.askedBeside(tests[1], sink: sink))), ["spawn sideBySide"])
    _ = machine.handle(.spawned(.sideBySide))
    reply(&machine, tests[1], in: .sideBySide)
    _ = machine.handle(waited(.sideBySide))
    XCTAssertEqual(said(machine.handle(.endedUnawaited(.sideBySide, .exited(0)))), ["forget sideBySide"])
    // Once the worker running tests one at a time holds nothing, its end is its own, and the
    // next test starts a fresh worker.
    var one = self.machine(try self.tests(1))
    let only = try self.tests(1)[0]
    _ = one.handle(.asked(only, sink: sink))
    _ = one.handle(.spawned(.worker))
    reply(&one, only)
    _ = one.handle(waited(.worker))
    XCTAssertEqual(said(one.handle(.endedUnawaited(.worker, .exited(3)))), [
      "report: The worker process ended with exit status 3 while none of its tests ran, after \(only.id.path) returned: "
        + "work a test left behind ended it; it printed nothing",
      "forget worker",
    ])
    XCTAssertEqual(said(one.handle(.asked(only, sink: sink))), ["spawn worker"])
  }

  func testARetiredWorkerIsWatchedToItsExitAndOneThatEndedByItselfWithAFailingStatusAfterItsTestsIsReported() throws {
    let tests = try tests(3)
    var machine = machine(tests, freshWorkerPerTest: true)
    _ = machine.handle(.asked(tests[0], sink: sink))
    _ = machine.handle(.spawned(.worker))
    _ = machine.handle(.spawned(.spare))
    reply(&machine, tests[0])
    XCTAssertEqual(said(machine.handle(waited(.worker))), ["deliver t0 returned", "retire worker"], "one worker, one test")
    reply(&machine, tests[0])
    XCTAssertEqual(said(machine.handle(waited(.worker))), [], "what a retiring worker says is dropped")
    XCTAssertEqual(said(machine.handle(waited(.worker, exit: .exited(2)))), [
      "report: The worker process ended with exit status 2 while none of its tests ran, after \(tests[0].id.path) "
        + "returned: work a test left behind ended it; it printed nothing",
      "forget worker",
    ])
    // The next exits as told.
    XCTAssertEqual(said(machine.handle(.asked(tests[1], sink: sink))), ["take spare", "send t1 #2", "spawn spare"])
    _ = machine.handle(.spawned(.spare))
    reply(&machine, tests[1])
    _ = machine.handle(waited(.worker))
    XCTAssertEqual(said(machine.handle(waited(.worker, exit: .exited(0)))), ["forget worker"], "it exited as told")
    // The next is stopped past its grace period: the harness ended it.
    _ = machine.handle(.asked(tests[2], sink: sink))
    _ = machine.handle(.spawned(.spare))
    reply(&machine, tests[2])
    _ = machine.handle(waited(.worker))
    let signal = machine.reading(.worker) { _, supervision in supervision.tick(at: .now + .seconds(2)) }
    XCTAssertEqual(signal, SIGTERM, "stopped as at a deadline once the grace period passed")
    XCTAssertEqual(said(machine.handle(waited(.worker, exit: .signaled(SIGTERM)))), ["forget worker"])
    // The spare left at the run's end ran no test to leave work behind.
    XCTAssertEqual(said(machine.handle(.finishing)), ["retire spare"])
    XCTAssertEqual(said(machine.handle(waited(.spare, exit: .exited(1)))), ["forget spare"])
  }

  func testAWorkerStoppedOrLeftWithWorkIsRetiredAndNeverRunsAnotherTest() throws {
    let tests = try tests(3)
    for leftWork in [false, true] {
      var machine = machine(tests)
      _ = machine.handle(.asked(tests[0], sink: sink))
      _ = machine.handle(.spawned(.worker))
      if leftWork {
        reply(&machine, tests[0], paused: true, retire: .leakedWork)
      } else {
        // Its reply came as it was sent a stop signal.
        reply(&machine, tests[0])
        XCTAssertEqual(machine.reading(.worker) { _, supervision in supervision.interrupt(SIGINT, at: .now) }, SIGTERM)
      }
      XCTAssertEqual(said(machine.handle(waited(.worker))), ["deliver t0 returned", "retire worker"], "left work: \(leftWork)")
      XCTAssertEqual(said(machine.handle(.asked(tests[1], sink: sink))), ["spawn worker"], "left work: \(leftWork)")
    }
  }

  func testTimePassingAndTheInterruptSignalTheWorkerTheyConcernAndItsAttemptEndsInterrupted() throws {
    let tests = try tests(2)
    var machine = machine(tests)
    _ = machine.handle(.asked(tests[0], sink: sink))
    _ = machine.handle(.spawned(.worker))
    XCTAssertEqual(said(machine.handle(.timePassed(.worker, to: .now, interrupt: nil))), [], "no deadline passed")
    XCTAssertEqual(said(machine.handle(.timePassed(.sideBySide, to: .now, interrupt: SIGINT))), [], "no worker there")
    XCTAssertEqual(said(machine.handle(.timePassed(.worker, to: .now, interrupt: SIGINT))), ["signal worker SIGTERM"])
    XCTAssertEqual(said(machine.handle(.timePassed(.worker, to: .now + .milliseconds(500), interrupt: nil))), [],
                   "within the grace period")
    XCTAssertEqual(said(machine.handle(.timePassed(.worker, to: .now + .seconds(2), interrupt: nil))), ["signal worker SIGKILL"])
    XCTAssertEqual(said(machine.handle(.timePassed(.worker, to: .now + .seconds(4), interrupt: SIGINT))), [], "once")
    XCTAssertEqual(said(machine.handle(waited(.worker, exit: .signaled(SIGKILL)))), ["deliver t0 interrupted", "forget worker"])
  }

  func testAFreshWorkerPerTestSendsNothingAheadAndStartsTheNextTestsWorkerWhileOneRuns() throws {
    let tests = try tests(3)
    var machine = machine(tests, freshWorkerPerTest: true)
    XCTAssertEqual(said(machine.handle(.asked(tests[0], sink: sink))), ["spawn worker"])
    XCTAssertEqual(said(machine.handle(.spawned(.worker))), ["send t0 #1", "spawn spare"])
    XCTAssertEqual(said(machine.handle(.spawned(.spare))), ["begin t0 #1"])
    reply(&machine, tests[0])
    XCTAssertEqual(said(machine.handle(waited(.worker))), ["deliver t0 returned", "retire worker"], "one worker, one test")
    _ = machine.handle(waited(.worker, exit: .exited(0)))
    XCTAssertEqual(said(machine.handle(.asked(tests[1], sink: sink))), ["take spare", "send t1 #2", "spawn spare"])
    // A spare that cannot start now is started, or reported, when the next test needs it.
    XCTAssertEqual(said(machine.handle(.couldNotSpawn(.spare, reason: "no more processes"))), ["begin t1 #2"])
    reply(&machine, tests[1])
    _ = machine.handle(waited(.worker))
    _ = machine.handle(waited(.worker, exit: .exited(0)))
    XCTAssertEqual(said(machine.handle(.asked(tests[2], sink: sink))), ["spawn worker"])
  }

  func testTheRunsEndStopsAWorkerHoldingTestsNeverAskedForAndRetiresEveryOther() throws {
    let tests = try tests(3)
    var machine = machine(tests)
    XCTAssertEqual(said(machine.handle(.finishing)), [], "no worker")
    _ = machine.handle(.prepared(tests))
    var idle = afterTheFirst(of: try self.tests(1))
    XCTAssertEqual(said(idle.handle(.finishing)), ["retire worker"], "it holds nothing")
    _ = machine.handle(.asked(tests[0], sink: sink))
    _ = machine.handle(.spawned(.worker))
    reply(&machine, tests[0])
    _ = machine.handle(waited(.worker))
    _ = machine.handle(.askedBeside(tests[2], sink: sink))
    _ = machine.handle(.spawned(.sideBySide))
    XCTAssertEqual(said(machine.handle(.finishing)), ["kill worker", "kill sideBySide"], "both hold tests")
    XCTAssertEqual(machine.sent, [])
    XCTAssertEqual(said(machine.handle(.asked(tests[0], sink: sink))), ["spawn worker"], "the run's end forgot every worker")
    XCTAssertEqual(said(machine.handle(.spawned(.worker))), ["send t0 #5", "begin t0 #5"], "and what was prepared")
  }

  // MARK: Side by side

  /// The runner asks for `tests` side by side, one after another, the worker started for the
  /// first starting; what the machine said.
  @discardableResult
  private func startedBeside(_ tests: some Collection<Runner.PlannedTest>, in machine: inout Machine) -> [String] {
    tests.flatMap { planned in
      let commands = said(machine.handle(.askedBeside(planned, sink: sink)))
      return commands == ["spawn sideBySide"] ? commands + said(machine.handle(.spawned(.sideBySide))) : commands
    }
  }

  func testEachTestSideBySideStartsUnderAReferenceUniqueOnTheLane() throws {
    let tests = try tests(3)
    var machine = machine(tests)
    _ = machine.handle(.asked(tests[0], sink: sink))
    _ = machine.handle(.spawned(.worker))
    XCTAssertEqual(said(machine.handle(.askedBeside(tests[2], sink: sink))), ["spawn sideBySide"])
    XCTAssertEqual(said(machine.handle(.spawned(.sideBySide))), ["start t2 #4"])
    XCTAssertEqual(said(machine.handle(.askedBeside(tests[1], sink: sink))), ["start t1 #5"], "in the worker started before")
    XCTAssertEqual(said(machine.handle(.awaitingBeside)), ["wait"])
    reply(&machine, tests[1], in: .sideBySide)
    reply(&machine, tests[2], in: .sideBySide)
    XCTAssertEqual(said(machine.handle(waited(.sideBySide))), ["deliver t1 returned", "deliver t2 returned"])
    XCTAssertEqual(said(machine.handle(.awaitingBeside)), [], "none runs, none waits to run again")
  }

  func testAWorkerThatEndedSideBySideIsForgottenAndOneThatMustNotRunAnotherIsRetiredOnceItRunsNone() throws {
    let tests = try tests(2)
    var machine = machine(tests)
    startedBeside(tests[0...0], in: &machine)
    reply(&machine, tests[0], in: .sideBySide)
    XCTAssertEqual(said(machine.handle(waited(.sideBySide, exit: .exited(0)))), ["forget sideBySide", "deliver t0 returned"])
    XCTAssertEqual(startedBeside(tests, in: &machine), ["spawn sideBySide", "start t0 #2", "start t1 #3"])
    reply(&machine, tests[0], in: .sideBySide, retire: .leakedWork)
    XCTAssertEqual(said(machine.handle(waited(.sideBySide))), ["deliver t0 returned"], "it still runs a test")
    XCTAssertFalse(machine.takesSideBySide, "a worker that must retire starts nothing new")
    reply(&machine, tests[1], in: .sideBySide)
    XCTAssertEqual(said(machine.handle(waited(.sideBySide))), ["retire sideBySide", "deliver t1 returned"])
  }

  func testAWorkerSentAStopSignalIsWatchedToItsEndBeforeWhatFollowsItsTestsIsDecided() throws {
    let tests = try tests(2)
    var machine = machine(tests)
    startedBeside(tests, in: &machine)
    // Its reply came with the signal: the worker starts nothing more.
    reply(&machine, tests[0], in: .sideBySide)
    XCTAssertEqual(machine.reading(.sideBySide) { _, supervision in supervision.interrupt(SIGINT, at: .now) }, SIGTERM)
    XCTAssertEqual(said(machine.handle(waited(.sideBySide))), ["wait"])
    XCTAssertEqual(said(machine.handle(waited(.sideBySide, exit: .signaled(SIGTERM)))),
                   ["forget sideBySide", "deliver t0 returned", "deliver t1 interrupted"], "both delivered once, in order")
    XCTAssertEqual(said(machine.handle(.awaitingBeside)), [], "and forgotten")
  }

  func testAttemptsTheCrashDidNotNameRunAgainAtOnceBesideTheOthersWhenTheCulpritIsKnown() throws {
    let tests = try tests(3)
    var machine = machine(tests)
    XCTAssertEqual(startedBeside(tests, in: &machine), ["spawn sideBySide", "start t0 #1", "start t1 #2", "start t2 #3"])
    machine.reading(.sideBySide) { messages, supervision in
      _ = messages.channel(WorkerReply.crashing(ref: 1).line[...], into: &supervision)
    }
    // A process the tests started held the worker's output past its exit: each keeps that warning.
    XCTAssertEqual(said(machine.handle(waited(.sideBySide, exit: .signaled(SIGSEGV), outputHeld: true))), [
      "forget sideBySide", "tell t1 warning, leaked", "tell t2 warning, leaked",
      "deliver t0 ended with signal SIGSEGV (segmentation fault)", "spawn sideBySide",
    ])
    XCTAssertEqual(said(machine.handle(.spawned(.sideBySide))), ["start t1 #4", "start t2 #5"], "in a fresh worker")
    XCTAssertTrue(machine.takesSideBySide, "no half waits")
  }

  func testACrashThatNamedNoAttemptRunsThemAgainInHalvesEachBesideNothingElseWarnedOnce() throws {
    let tests = try tests(5)
    var machine = machine(tests)
    startedBeside(tests, in: &machine)
    XCTAssertEqual(said(machine.handle(waited(.sideBySide, exit: .signaled(SIGSEGV)))),
                   ["forget sideBySide"] + (0..<5).map { "tell t\($0) warning" })
    XCTAssertFalse(machine.takesSideBySide, "halves run beside nothing else")
    XCTAssertEqual(said(machine.handle(.awaitingBeside)), ["spawn sideBySide"])
    XCTAssertEqual(said(machine.handle(.spawned(.sideBySide))), ["start t0 #6", "start t1 #7", "start t2 #8"])
    XCTAssertEqual(said(machine.handle(.awaitingBeside)), ["wait"])
    // The first half crashes again, naming none: it is halved, and goes before the second half.
    XCTAssertEqual(said(machine.handle(waited(.sideBySide, exit: .signaled(SIGSEGV)))), ["forget sideBySide"],
                   "each was told once why it runs again")
    XCTAssertEqual(said(machine.handle(.awaitingBeside)), ["spawn sideBySide"])
    // The worker for that half cannot start: its attempts end so, and the lane does not wait for them.
    XCTAssertEqual(said(machine.handle(.couldNotSpawn(.sideBySide, reason: "no more processes"))),
                   ["could not start t0: no more processes", "could not start t1: no more processes"])
    XCTAssertEqual(said(machine.handle(.awaitingBeside)), ["spawn sideBySide"])
    XCTAssertEqual(said(machine.handle(.spawned(.sideBySide))), ["start t2 #9"])
    reply(&machine, tests[2], in: .sideBySide)
    _ = machine.handle(waited(.sideBySide))
    XCTAssertEqual(said(machine.handle(.awaitingBeside)), ["start t3 #10", "start t4 #11"], "in the same worker")
    XCTAssertFalse(machine.takesSideBySide, "the last half runs")
    reply(&machine, tests[3], in: .sideBySide)
    reply(&machine, tests[4], in: .sideBySide)
    XCTAssertEqual(said(machine.handle(waited(.sideBySide))), ["deliver t3 returned", "deliver t4 returned"])
    XCTAssertTrue(machine.takesSideBySide)
    XCTAssertEqual(said(machine.handle(.awaitingBeside)), [])
  }
}
