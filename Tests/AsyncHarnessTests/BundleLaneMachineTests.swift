@testable @_spi(ForToolsIntegrationOnly) import AsyncHarness
import AsyncHarnessShared
import XCTest

/// What a test bundle's lane knows and decides (`BundleLaneMachine`), told what happened and
/// read back as the commands it gives, without processes: its worker is fed the records a
/// bundle's preloaded library writes (`ChannelRecord`), and its exits, as the lane's loop
/// feeds them; each transition runs through the worker's real supervision and decoder. Which
/// tests a new worker is given is `BundleBatchTests`'.
final class BundleLaneMachineTests: XCTestCase {
  private typealias Machine = BundleLaneMachine

  private let sink = EventSink { _ in }

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
      case .wait: "wait"
      case .kill: "kill"
      case .signal(let signal): "signal \(signal == SIGTERM ? "SIGTERM" : signal == SIGKILL ? "SIGKILL" : "\(signal)")"
      case .deliver(let events, _): "deliver \(events.count)"
      case .report(let failure, _): "report \(failure.issue.message)"
      case .tell(let issues, let test, _): "tell \(test.name) " + issues.map(\.message).joined(separator: ", ")
      case .end(let end): "end \(Self.name(end))"
      }
    }
  }

  /// How an attempt ended, in a word or two.
  private static func name(_ end: AttemptEnd) -> String {
    switch end {
    case .returned: "returned"
    case .skipped: "skipped"
    case .processEnded(let ending, _): "with \(ending)"
    case .stoppedAtLimit: "stopped at its limit"
    case .leftRunningAtLimit: "left running"
    case .interrupted: "interrupted"
    case .couldNotStart(let reason): "could not start: \(reason)"
    }
  }

  private func machine(_ tests: Runner.Plan.PlannedTests) -> Machine {
    var machine = Machine(bundle: "/b/Tests.xctest")
    XCTAssertTrue(machine.handle(.prepared(tests)).isEmpty)
    return machine
  }

  /// Answers the spawn `commands` end with: the worker started, given the tests it names.
  private func spawned(_ machine: inout Machine, answering commands: [Machine.Command]) -> [Machine.Command] {
    guard case .spawn(let batch, let oneAtATime) = commands.last else {
      XCTFail("no spawn to answer in \(said(commands))")
      return []
    }
    return machine.handle(.spawned(Machine.WorkerState(bundle: "/b/Tests.xctest", batch: batch, oneAtATime: oneAtATime,
                                                       marker: "m", gracePeriod: .seconds(1))))
  }

  /// Asks for `planned` and answers the spawn it leads to; returns what the machine said then.
  private func askedInANewWorker(_ machine: inout Machine, _ planned: Runner.PlannedTest) -> [String] {
    said(spawned(&machine, answering: machine.handle(.asked(planned, sink: sink))))
  }

  /// The worker writes `records` on its channel, as the lane's loop reads them.
  private func write(_ machine: inout Machine, _ records: [ChannelRecord]) {
    let bytes = records.flatMap { $0.encoded() + [UInt8(ascii: "\n")] }
    _ = machine.reading { decoder, supervision in decoder.channel(bytes[...], into: &supervision) }
  }

  /// The wait the machine asked for is over, with `exit` when the worker exited: as the lane's
  /// loop does, the wait first read the lines a read before left (``WorkerWatch/begin(_:_:)``).
  private func waited(_ machine: inout Machine, exit: ProcessEnding? = nil, outputHeld: Bool = false) -> [String] {
    _ = machine.reading { decoder, supervision in decoder.channel([], into: &supervision) }
    return said(machine.handle(.waited(exit: exit, outputHeld: outputHeld)))
  }

  /// The records of XCTest running `planned` to its end, `passed` or not.
  private func ran(_ planned: Runner.PlannedTest, passed: Bool = true) -> [ChannelRecord] {
    let id = planned.existing!.id
    return [.started(test: id), .ended(test: id, outcome: passed ? .passed : .failed, duration: 0.01, failures: passed ? 0 : 1,
                                       unexpected: 0)]
  }

  func testTheFirstTestStartsAWorkerGivenItAndTheTestsAfterItAndEndsAsItEnded() throws {
    let tests = try tests(3)
    var machine = machine(tests)
    let asked = machine.handle(.asked(tests[0], sink: sink))
    XCTAssertEqual(said(asked), ["spawn t0 t1 t2"])
    XCTAssertEqual(said(spawned(&machine, answering: asked)), ["wait"])
    // The library ran t1 first: it is kept for when it is asked for.
    write(&machine, ran(tests[1]) + ran(tests[0]))
    XCTAssertEqual(waited(&machine), ["deliver 0", "end returned"])
    XCTAssertEqual(said(machine.handle(.asked(tests[1], sink: sink))), ["deliver 1", "end returned"],
                   "a test that ended before it was asked for ends at once, with what it held")
    XCTAssertEqual(said(machine.handle(.asked(tests[2], sink: sink))), ["wait"], "the worker holds t2")
    XCTAssertEqual(waited(&machine), ["wait"],
                   "a wait over while t2 has not ended waits again")
    write(&machine, ran(tests[2]))
    XCTAssertEqual(waited(&machine), ["wait"],
                   "holding no test, the worker is waited for to its exit")
    XCTAssertEqual(waited(&machine, exit: .exited(0)), ["kill", "deliver 0", "end returned"])
    XCTAssertFalse(machine.hasWorker)
  }

  func testATestTheWorkerDoesNotHoldStopsItAndGoesToANewWorkerWithTheTestsNotEndedAfterIt() throws {
    let tests = try tests(3)
    var machine = machine(tests)
    _ = askedInANewWorker(&machine, tests[0])
    write(&machine, ran(tests[2]) + ran(tests[0], passed: false))
    XCTAssertEqual(waited(&machine), ["deliver 0", "end returned"], "t0's failure was streamed as it came")
    // A retry of t0, which the worker was not given again: t1 goes with it, t2 ended.
    let retry = try XCTUnwrap(Self.retry(of: tests[0]))
    XCTAssertEqual(said(machine.handle(.asked(retry, sink: sink))), ["kill", "spawn t0 t1"])
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
    XCTAssertEqual(said(machine.handle(.asked(plan.plannedTests(of: plan.entries[0], repetition: 1)[0], sink: sink))),
                   ["end could not start: Harness/h is not a test of the test bundle /b/Tests.xctest"])
    let tests = try tests(1)
    _ = machine.handle(.asked(tests[0], sink: sink))
    XCTAssertEqual(said(machine.handle(.couldNotSpawn(reason: "no such file"))), ["end could not start: no such file"])
    XCTAssertEqual(said(machine.handle(.asked(tests[0], sink: sink))), ["spawn t0"], "nothing to stop")
  }

  /// A worker that runs no other test is retired, not only stopped: what it found outside
  /// every test (under `--explore`, an issue recorded once its test ended) is reported before
  /// the test ends, not lost with it.
  func testAStoppedWorkerOrOneThatRanAScheduleOrLeftAProcessIsRetiredAndNeverRunsAnotherTest() throws {
    let tests = try tests(3, timeLimit: .seconds(5))
    let late = ChannelRecord.issue(test: "M.C/t0", message: "recorded after t0", place: .file("/p/T.swift", line: 9))
    let cases: [(String, [ChannelRecord], ContinuousClock.Instant?)] = [
      ("stopped at t1's time limit as it ended", [], .now + .seconds(6)),
      ("left a process", [.children(["41 (sleep 30)"])], nil),
      ("ran a schedule that failed", [.schedule(steps: 3, hash: 7, jobs: 3, outside: 0, firstOutsideStep: nil, escapedAt: nil,
                                                hookedAt: nil)], nil),
    ]
    for (name, records, deadlinePassed) in cases {
      var machine = machine(tests)
      _ = askedInANewWorker(&machine, tests[0])
      write(&machine, ran(tests[0]))
      XCTAssertEqual(waited(&machine), ["deliver 0", "end returned"], name)
      XCTAssertEqual(said(machine.handle(.asked(tests[1], sink: sink))), ["wait"], name)
      // A thread t0 left records an issue of it while t1 runs.
      write(&machine, [late, .started(test: "M.C/t1")] + records)
      if let deadlinePassed {
        XCTAssertEqual(said(machine.handle(.timePassed(to: deadlinePassed, interrupt: nil))), ["signal SIGTERM"], name)
      }
      write(&machine, [.ended(test: "M.C/t1", outcome: .passed, duration: 0.01, failures: 0, unexpected: 0)])
      XCTAssertEqual(waited(&machine), ["kill", "report recorded after t0", "deliver 0", "end returned"], name)
      XCTAssertFalse(machine.hasWorker, name)
      XCTAssertEqual(said(machine.handle(.asked(tests[2], sink: sink))), ["spawn t2"], name)
    }
  }

  /// A schedule's bundle (one schedule, one test) is heard to its exit once its test passed, a
  /// moment: what runs after the test (a class tear-down, an exit handler) fails outside every
  /// test, as in a plain run; stopped then, it fails nothing.
  func testAWorkerThatRanAPassingScheduleIsGivenAMomentToExitSilently() throws {
    let tests = try tests(1)
    let schedule = ChannelRecord.schedule(steps: 3, hash: 7, jobs: 3, outside: 0, firstOutsideStep: nil, escapedAt: nil,
                                          hookedAt: nil)
    for (exit, said) in [(ProcessEnding.signaled(SIGABRT), ["kill", "report", "deliver 0", "end returned"]),
                         (.signaled(SIGTERM), ["kill", "deliver 0", "end returned"])] {
      var machine = machine(tests)
      _ = askedInANewWorker(&machine, tests[0])
      write(&machine, [.classStarted("M.C"), .started(test: "M.C/t0"), schedule,
                       .ended(test: "M.C/t0", outcome: .passed, duration: 0.01, failures: 0, unexpected: 0)])
      XCTAssertEqual(self.waited(&machine), ["wait"])
      XCTAssertEqual(self.said(machine.handle(.timePassed(to: .now + .milliseconds(900), interrupt: nil))), [])
      if exit == .signaled(SIGTERM) {
        XCTAssertEqual(self.said(machine.handle(.timePassed(to: .now + .milliseconds(1100), interrupt: nil))), ["signal SIGTERM"],
                       "stopped at BundleLaneMachine.scheduleExitLimit")
      }
      XCTAssertEqual(self.waited(&machine, exit: exit).map { $0.hasPrefix("report") ? "report" : $0 },
                     said, "\(exit)")
    }
  }

  func testAWorkerThatHoldsNoTestIsWatchedToItsExitWithinTheTimeLimitThenRetired() throws {
    for (limit, name) in [(Duration.seconds(5), "the time limit of the test asked for last"),
                          (BundleLaneMachine.exitLimit, "without one, BundleLaneMachine.exitLimit")] {
      let tests = try tests(1, timeLimit: limit == .seconds(5) ? limit : nil)
      var machine = machine(tests)
      _ = askedInANewWorker(&machine, tests[0])
      write(&machine, [.classStarted("M.C")] + ran(tests[0]) + [.classEnded("M.C")])
      XCTAssertEqual(waited(&machine), ["wait"], name)
      XCTAssertEqual(said(machine.handle(.timePassed(to: .now + limit - .milliseconds(100), interrupt: nil))), [], name)
      XCTAssertEqual(said(machine.handle(.timePassed(to: .now + limit + .milliseconds(100), interrupt: nil))), ["signal SIGTERM"],
                     name)
    }
    let tests = try tests(1)
    var machine = machine(tests)
    _ = askedInANewWorker(&machine, tests[0])
    write(&machine, [.classStarted("M.C")] + ran(tests[0]) + [.classEnded("M.C")])
    _ = waited(&machine)
    XCTAssertEqual(waited(&machine, exit: .signaled(SIGSEGV)), [
      "kill",
      "report The test bundle ended with signal SIGSEGV (segmentation fault) while none of its tests ran, after M.C/t0 returned; "
        + "it printed nothing",
      "deliver 0", "end returned",
    ], "a crash after its last test is a failure outside every test")
  }

  func testATestACrashInterruptedRunsAgainAloneKeepingItsWarningsAndTheCrashIsReportedWhenItDoesNotCrashAgain() throws {
    let tests = try tests(3)
    var machine = machine(tests)
    _ = askedInANewWorker(&machine, tests[0])
    write(&machine, [.classStarted("M.C")] + ran(tests[0]) + [.started(test: "M.C/t1")])
    // The bundle crashed in t1, after t0 ended in it: work t0 left may be what crashed it.
    XCTAssertEqual(waited(&machine), ["deliver 0", "end returned"])
    XCTAssertEqual(said(machine.handle(.asked(tests[1], sink: sink))), ["wait"])
    _ = machine.reading { decoder, supervision in decoder.channel([], into: &supervision) }
    let crashed = machine.handle(.waited(exit: .signaled(SIGSEGV), outputHeld: true))
    XCTAssertEqual(said(crashed), ["kill", "spawn t1 alone"])
    XCTAssertEqual(machine.alone, [tests[1].id])
    XCTAssertEqual(said(spawned(&machine, answering: crashed)), ["wait"])
    write(&machine, ran(tests[1]))
    XCTAssertEqual(waited(&machine), ["wait"])
    let ended = waited(&machine, exit: .exited(0))
    XCTAssertEqual(ended.count, 5, "\(ended)")
    XCTAssertEqual(Array(ended.prefix(2)), ["kill", "deliver 0"])
    XCTAssertEqual(ended[2], "report The test bundle ended with signal SIGSEGV (segmentation fault) while M.C/t1 ran, and it did "
                     + "not crash when run again alone, in a fresh process: the crash came from work that tests before it left behind")
    XCTAssertTrue(ended[3].hasPrefix("tell t1 "), "the warning t1 kept from the worker that crashed: \(ended[3])")
    XCTAssertEqual(ended[4], "end returned")
    XCTAssertEqual(machine.alone, [])
    // t2, which the crashed worker never started, runs in a worker of its own, not alone.
    XCTAssertEqual(said(machine.handle(.asked(tests[2], sink: sink))), ["spawn t2"])
  }

  func testTheInterruptSignalsTheWorkerOnceThenSIGKILLAfterTheGracePeriodAndTheTestEndsInterrupted() throws {
    let tests = try tests(1)
    var machine = machine(tests)
    XCTAssertEqual(said(machine.handle(.timePassed(to: .now, interrupt: SIGINT))), [], "no worker, nothing to signal")
    _ = askedInANewWorker(&machine, tests[0])
    write(&machine, [.started(test: "M.C/t0")])
    let interrupted = ContinuousClock.now
    XCTAssertEqual(said(machine.handle(.timePassed(to: interrupted, interrupt: SIGINT))), ["signal SIGTERM"])
    XCTAssertEqual(said(machine.handle(.timePassed(to: interrupted + .milliseconds(500), interrupt: nil))), [])
    XCTAssertEqual(said(machine.handle(.timePassed(to: interrupted + .milliseconds(1100), interrupt: nil))), ["signal SIGKILL"],
                   "past the grace period")
    XCTAssertEqual(waited(&machine, exit: .signaled(SIGKILL)),
                   ["kill", "deliver 0", "end interrupted"])
  }

  func testTheRunsEndStopsTheWorkerAndForgetsWhatWasPrepared() throws {
    let tests = try tests(2)
    var machine = machine(tests)
    _ = askedInANewWorker(&machine, tests[0])
    write(&machine, ran(tests[0]))
    _ = waited(&machine)
    XCTAssertEqual(said(machine.handle(.finishing)), ["kill"])
    XCTAssertFalse(machine.hasWorker)
    XCTAssertEqual(said(machine.handle(.asked(tests[1], sink: sink))), ["spawn t1"])
  }
}
