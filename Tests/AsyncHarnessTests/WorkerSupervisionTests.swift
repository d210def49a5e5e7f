@testable @_spi(ForToolsIntegrationOnly) import AsyncHarness
import Foundation
import Synchronization
import XCTest

/// The state machine of a worker process's watch (`WorkerSupervision`), and a harness worker's
/// decoder feeding it, driven directly, without processes, through the orders of inputs
/// that are hard to produce with real ones.
final class WorkerSupervisionTests: XCTestCase {
  private let clock = ContinuousClock()

  /// The steps of a suite of `count` tests, each under a time limit of 1 s.
  private func steps(_ count: Int) throws -> [Runner.PlannedTest] {
    var configuration = Configuration()
    configuration.timeLimit = .seconds(1)
    let suite = Suite("Supervised") { for number in 0..<count { Test("test \(number)") { _ async in } } }
    let plan = try Runner.Plan(suites: [suite], configuration: configuration, registry: .builtIn)
    return Array(plan.plannedTests(of: plan.entries[0], repetition: 1))
  }

  /// Collects what a sink is sent.
  private final class Collected: Sendable {
    private let events = Mutex<[Event]>([])
    var sink: EventSink { EventSink { [self] event in events.withLock { $0.append(event) } } }
    /// What the attempt said after the fact of its start (``testEachAttemptSaysFirstWhenItStarted``).
    var kinds: [Event.Kind] { events.withLock { $0.said } }
    var all: [Event] { events.withLock { $0 } }
  }

  private func ended(_ finished: WorkerSupervision.Finished?) -> (id: TestID, end: AttemptEnd)? {
    guard case .ended(let attempt, let end, _) = finished else { return nil }
    return (attempt.planned.id, end)
  }

  /// An attempt's first event is the fact of its start (a `testStarted`, stamped when the
  /// worker said it started, else when it began here), streamed or held like the rest, which
  /// the test's owner keeps as ``TestAttempt/started``.
  func testEachAttemptSaysFirstWhenItStarted() throws {
    let tests = try steps(2)
    let streamed = Collected()
    let then = Date(timeIntervalSince1970: 1_000_000)
    var supervision = WorkerSupervision(gracePeriod: .seconds(1))
    let before = Date()
    supervision.start(tests[0], sink: streamed.sink, streams: true, deadline: nil)
    supervision.start(tests[1], sink: nil, streams: false, deadline: nil, at: then)
    supervision.record(Event(.issueRecorded(tests[1].id, Issue(kind: .warning, message: "noted"))), of: tests[1].id)
    XCTAssertEqual(streamed.all.map(\.kind), [.testStarted(tests[0].id)])
    XCTAssertTrue(try XCTUnwrap(streamed.all.first).timestamp >= before)
    guard case .ended(let held, _, _) = supervision.end(tests[1].id, as: .returned(duration: 0)) else {
      return XCTFail("\(tests[1].id) did not end")
    }
    XCTAssertEqual(held.held.map(\.kind), [.testStarted(tests[1].id), .issueRecorded(tests[1].id, Issue(kind: .warning, message: "noted"))])
    XCTAssertEqual(held.held.first?.timestamp, then)
  }

  func testAReplyAndADeadlineAtTheSameInstantEndTheAttemptAsItReturnedWhicheverComesFirst() throws {
    let step = try XCTUnwrap(steps(1).first)
    let start = clock.now
    let deadline = start + .seconds(1)
    // The reply first: nothing is left to stop.
    var replyFirst = WorkerSupervision(gracePeriod: .seconds(1))
    replyFirst.start(step, sink: nil, streams: false, deadline: deadline)
    XCTAssertEqual(ended(replyFirst.end(step.id, as: .returned(duration: 1)))?.end, .returned(duration: 1))
    XCTAssertNil(replyFirst.tick(at: deadline))
    XCTAssertNil(replyFirst.stopping)
    XCTAssertEqual(replyFirst.timeout(at: deadline), -1)
    // The deadline first: the worker gets SIGTERM, but the reply read next says the test
    // returned, and that is its end; the worker's end then ends nothing.
    var deadlineFirst = WorkerSupervision(gracePeriod: .seconds(1))
    deadlineFirst.start(step, sink: nil, streams: false, deadline: deadline)
    XCTAssertEqual(deadlineFirst.timeout(at: start), 1001)
    XCTAssertEqual(deadlineFirst.tick(at: deadline), SIGTERM)
    XCTAssertEqual(ended(deadlineFirst.end(step.id, as: .returned(duration: 1)))?.end, .returned(duration: 1))
    XCTAssertEqual(deadlineFirst.timeout(at: deadline), 1001, "the grace period runs on")
    deadlineFirst.sawExit()
    XCTAssertTrue(deadlineFirst.exited(.signaled(SIGTERM)).isEmpty)
  }

  func testOutputReadAfterTheExitIsInTheEndingOfTheAttempt() throws {
    let step = try XCTUnwrap(steps(1).first)
    let collected = Collected()
    var supervision = WorkerSupervision(gracePeriod: .seconds(1))
    supervision.start(step, sink: collected.sink, streams: true, deadline: nil)
    supervision.printed(Array("working\n".utf8)[...])
    supervision.sawExit()
    // The worker's last words reach the pipe before its exit is seen, and are read after it.
    supervision.printed(Array("Fatal error: gone\npartial".utf8)[...])
    let finished = supervision.exited(.signaled(SIGILL))
    XCTAssertEqual(ended(finished.first)?.end, .processEnded(.signaled(SIGILL), output: "working\nFatal error: gone\npartial"))
    XCTAssertEqual(collected.kinds.compactMap { if case .outputCaptured(_, let text) = $0 { text } else { nil } }.joined(),
                   "working\nFatal error: gone\npartial")
    XCTAssertEqual(collected.kinds.last, .workerReplaced(step.id, reason: "crashed"))
  }

  /// Issue 52: what a worker prints while attempts run side by side is stored once. Each
  /// attempt is sent, as it ends, the pieces printed during its run (one `outputShared`
  /// event, the same strings, not copies), each line marked while several ran, and the
  /// events it held in the order they happened; one that starts later gets none of what came
  /// before it; the line being printed goes to those that end before it is finished.
  func testOutputOfAttemptsSideBySideIsStoredOnceAndEachGetsItsRun() throws {
    let tests = try steps(3)
    let collected = tests.map { _ in Collected() }
    var supervision = WorkerSupervision(gracePeriod: .seconds(1))
    supervision.start(tests[0], sink: collected[0].sink, streams: false, deadline: nil)
    supervision.printed(Array("alone\n".utf8)[...])
    supervision.start(tests[1], sink: collected[1].sink, streams: false, deadline: nil)
    supervision.printed(Array("both one\nboth ".utf8)[...])
    supervision.record(Event(.issueRecorded(tests[1].id, Issue(kind: .warning, message: "noted"))), of: tests[1].id)
    supervision.printed(Array("two\nunfin".utf8)[...])
    supervision.start(tests[2], sink: collected[2].sink, streams: false, deadline: nil)
    supervision.printed(Array("ished\n".utf8)[...])
    for test in tests {
      guard case .ended(let attempt, _, _) = supervision.end(test.id, as: .returned(duration: 0)) else {
        return XCTFail("\(test.id) did not end")
      }
      attempt.held.forEach { attempt.sink?.send($0) }
    }
    func output(_ index: Int) -> [String] {
      collected[index].kinds.compactMap { kind in kind.printedOutput.map { $0.pieces.joined() } }
    }
    XCTAssertEqual(output(0), ["alone\n[shared] both one\n[shared] both two\n[shared] unfinished\n"])
    XCTAssertEqual(output(1), ["[shared] both one\n", "[shared] both two\n[shared] unfinished\n"])
    XCTAssertEqual(collected[1].kinds.count, 3, "output, the issue, output: in the order they came")
    guard case .issueRecorded = collected[1].kinds[1] else { return XCTFail("\(collected[1].kinds)") }
    // It started in the middle of a line: it gets that line whole, and nothing before it.
    XCTAssertEqual(output(2), ["[shared] unfinished\n"])
    guard case .outputShared(_, let first) = collected[0].kinds.first, case .outputShared(_, let second) = collected[1].kinds.last else {
      return XCTFail("several pieces are sent as one outputShared event")
    }
    XCTAssertEqual(first.pieces.suffix(2), second.pieces[...], "the same pieces, not a copy for each attempt")
  }

  /// The line being printed when an attempt ends is its own too (unmarked when it ran
  /// alone), and the next attempt does not get it again.
  func testALineUnfinishedAtAnAttemptsEndIsItsOwn() throws {
    let tests = try steps(2)
    let collected = tests.map { _ in Collected() }
    var supervision = WorkerSupervision(gracePeriod: .seconds(1))
    supervision.start(tests[0], sink: collected[0].sink, streams: true, deadline: nil)
    supervision.printed(Array("first\nno newline".utf8)[...])
    _ = supervision.end(tests[0].id, as: .returned(duration: 0))
    supervision.start(tests[1], sink: collected[1].sink, streams: true, deadline: nil)
    supervision.printed(Array("second\n".utf8)[...])
    _ = supervision.end(tests[1].id, as: .returned(duration: 0))
    func text(_ index: Int) -> String {
      collected[index].kinds.compactMap { $0.printedOutput?.pieces.joined() }.joined()
    }
    XCTAssertEqual(text(0), "first\nno newline")
    XCTAssertEqual(text(1), "second\n")
  }

  func testAnInterruptWhileTheExitedWorkerIsDrainedLeavesTheCrashItsEnd() throws {
    let step = try XCTUnwrap(steps(1).first)
    var supervision = WorkerSupervision(gracePeriod: .seconds(1))
    supervision.start(step, sink: nil, streams: false, deadline: clock.now + .seconds(1))
    supervision.sawExit()
    XCTAssertNil(supervision.interrupt(SIGINT, at: clock.now), "no signal for a worker that exited")
    XCTAssertNil(supervision.tick(at: clock.now + .seconds(2)), "nor at a deadline")
    XCTAssertEqual(supervision.timeout(at: clock.now), -1)
    XCTAssertEqual(ended(supervision.exited(.exited(3)).first)?.end, .processEnded(.exited(3), output: ""))
    // Before the exit, the same interrupt stops the worker and ends the attempt as interrupted.
    var running = WorkerSupervision(gracePeriod: .seconds(1))
    running.start(step, sink: nil, streams: false, deadline: nil)
    XCTAssertEqual(running.interrupt(SIGINT, at: clock.now), SIGTERM)
    XCTAssertEqual(running.tick(at: clock.now + .seconds(2)), SIGKILL, "after the grace period")
    XCTAssertNil(running.tick(at: clock.now + .seconds(3)))
    running.sawExit()
    XCTAssertEqual(ended(running.exited(.signaled(SIGKILL)).first)?.end, .interrupted(signal: SIGINT, output: ""))
  }

  func testTwoRepliesInOneReadEndBothAttemptsRunningSideBySide() throws {
    let steps = try steps(3)
    var supervision = WorkerSupervision(gracePeriod: .seconds(1))
    var messages = WorkerMessages(marker: nil)
    for (ref, step) in steps.enumerated() { supervision.start(step, ref: ref + 1, sink: nil, streams: false, deadline: nil) }
    supervision.printed(Array("both\n".utf8)[...])
    let replies = [steps[2], steps[0]].flatMap {
      WorkerReply.returned($0.id, duration: 0.5, trace: nil, paused: false, retire: nil).line
    }
    XCTAssertTrue(messages.channel(replies[...], into: &supervision))
    let ends = messages.takeReplies().compactMap { ended($0.finished) }
    XCTAssertEqual(ends.map(\.id), [steps[2].id, steps[0].id])
    XCTAssertEqual(supervision.running.map(\.planned.id), [steps[1].id])
    // What was printed while three ran is each one's, marked as shared.
    guard case .ended(let third, _, _) = supervision.end(steps[1].id, as: .returned(duration: 1)) else {
      return XCTFail("the third did not end")
    }
    XCTAssertEqual(third.held.said, [.outputCaptured(steps[1].id, "[shared] both\n")])
  }

  func testLinesAfterTheReplyOfTheOnlyAttemptWaitForTheNextAttempt() throws {
    let steps = try steps(2)
    let first = Collected()
    let second = Collected()
    var supervision = WorkerSupervision(gracePeriod: .seconds(1))
    var messages = WorkerMessages(marker: nil)
    supervision.start(steps[0], ref: 1, sink: first.sink, streams: true, deadline: nil)
    let issue = Issue(kind: .expectationFailed, message: "second's", sourceLocation: nil)
    let bytes = WorkerReply.returned(steps[0].id, duration: 0.5, trace: nil, paused: false, retire: nil).line
      + Event(.issueRecorded(steps[1].id, issue)).jsonLineBytes
    XCTAssertTrue(messages.channel(bytes[...], into: &supervision))
    XCTAssertEqual(messages.takeReplies().count, 1)
    supervision.start(steps[1], ref: 2, sink: second.sink, streams: true, deadline: nil)
    XCTAssertFalse(messages.channel([], into: &supervision))
    XCTAssertEqual(first.kinds, [])
    XCTAssertEqual(second.kinds, [.issueRecorded(steps[1].id, issue)])
  }

  func testACrashNamedByTheWorkerEndsItsTestAndRunsTheOthersAgainSideBySide() throws {
    let steps = try steps(3)
    var supervision = WorkerSupervision(gracePeriod: .seconds(1))
    for (ref, step) in steps.enumerated() { supervision.start(step, ref: ref + 1, sink: nil, streams: false, deadline: nil) }
    supervision.crashed(ref: 2)
    supervision.sawExit()
    let finished = supervision.exited(.signaled(SIGILL))
    var again: [TestID] = []
    for outcome in finished {
      switch outcome {
      case .ended(let attempt, let end, let note):
        let step = attempt.planned
        XCTAssertEqual(step.id, steps[1].id)
        XCTAssertEqual(end, .processEnded(.signaled(SIGILL), output: ""))
        XCTAssertEqual(note?.message, "Side by side with this test ran Supervised/test 0, Supervised/test 2, which ran again "
          + "without it")
      case .runAgain(let attempt, let note, let company):
        let step = attempt.planned
        XCTAssertEqual(company, .besideOthers)
        XCTAssertTrue(note?.message.hasSuffix("crashed in Supervised/test 1 (signal SIGILL (illegal instruction)), so this "
          + "test ran again without it") == true, note?.message ?? "no note")
        again.append(step.id)
      }
    }
    XCTAssertEqual(again, [steps[0].id, steps[2].id])
  }

  /// Issue 49: a test's deadline passes (the worker is sent SIGTERM) in the same read as its
  /// reply. Whichever of the two the loop feeds first, the test keeps the end its reply says;
  /// a worker that was sent the signal starts no other attempt, so the next test goes to a
  /// fresh worker and is not blamed for the stop.
  func testAnEndAndItsDeadlineInOneReadKeepTheEndAndTheNextTestGetsAFreshWorker() throws {
    let steps = try steps(2)
    let start = clock.now
    let deadline = start + .seconds(1)
    let reply = WorkerReply.returned(steps[0].id, duration: 0.9, trace: nil, paused: false, retire: nil).line
    // The deadline first, as the loop feeds a read that came after it: the signal, then the reply.
    let collected = Collected()
    var signalled = WorkerSupervision(gracePeriod: .seconds(1))
    var messages = WorkerMessages(marker: nil)
    signalled.start(steps[0], ref: 1, sink: collected.sink, streams: true, deadline: deadline)
    XCTAssertEqual(signalled.tick(at: deadline), SIGTERM)
    XCTAssertTrue(messages.channel(reply[...], into: &signalled))
    XCTAssertEqual(messages.takeReplies().compactMap { ended($0.finished)?.end }, [.returned(duration: 0.9)])
    XCTAssertEqual(collected.kinds, [.workerReplaced(steps[0].id, reason: "stoppedAtTimeLimit")])
    XCTAssertFalse(signalled.takesAttempts)
    XCTAssertTrue(signalled.stoppedForEndedAttempts, "the stop was for no test still to come")
    XCTAssertFalse(signalled.start(steps[1], ref: 2, sink: nil, streams: true, deadline: clock.now + .seconds(1)),
                   "a worker sent a stop signal starts no other attempt")
    XCTAssertTrue(signalled.running.isEmpty)
    // The worker's end, the signal's doing, ends nothing: the next test was never its.
    signalled.sawExit()
    XCTAssertTrue(signalled.exited(.signaled(SIGTERM)).isEmpty)
    XCTAssertEqual(collected.kinds.count, 1, "the replacement is said once")
    // The next test, in the fresh worker its executor starts, runs and ends as it returned.
    var fresh = WorkerSupervision(gracePeriod: .seconds(1))
    XCTAssertTrue(fresh.takesAttempts)
    XCTAssertTrue(fresh.start(steps[1], ref: 1, sink: nil, streams: true, deadline: clock.now + .seconds(1)))
    XCTAssertEqual(ended(fresh.end(steps[1].id, as: .returned(duration: 0.1)))?.end, .returned(duration: 0.1))
    // The reply first: the attempt ended before the deadline was looked at, nothing is left
    // to stop, and the same worker takes the next test.
    var replied = WorkerSupervision(gracePeriod: .seconds(1))
    var repliedMessages = WorkerMessages(marker: nil)
    replied.start(steps[0], ref: 1, sink: nil, streams: true, deadline: deadline)
    XCTAssertTrue(repliedMessages.channel(reply[...], into: &replied))
    XCTAssertEqual(repliedMessages.takeReplies().compactMap { ended($0.finished)?.end }, [.returned(duration: 0.9)])
    XCTAssertNil(replied.tick(at: deadline))
    XCTAssertTrue(replied.takesAttempts)
    XCTAssertFalse(replied.stoppedForEndedAttempts)
    XCTAssertTrue(replied.start(steps[1], ref: 2, sink: nil, streams: true, deadline: deadline + .seconds(1)))
  }

  /// A reply that retires the worker at its deadline's signal says the replacement once, with
  /// the worker's own reason.
  func testAReplyThatRetiresTheWorkerAsItIsSignalledSaysOneReplacement() throws {
    let step = try XCTUnwrap(steps(1).first)
    let deadline = clock.now + .seconds(1)
    let collected = Collected()
    var supervision = WorkerSupervision(gracePeriod: .seconds(1))
    var messages = WorkerMessages(marker: nil)
    supervision.start(step, ref: 1, sink: collected.sink, streams: true, deadline: deadline)
    XCTAssertEqual(supervision.tick(at: deadline), SIGTERM)
    let reply = WorkerReply.returned(step.id, duration: 1.5, trace: nil, paused: true, retire: .exceededTimeLimit).line
    XCTAssertTrue(messages.channel(reply[...], into: &supervision))
    XCTAssertEqual(messages.takeReplies().compactMap { ended($0.finished)?.end }, [.returned(duration: 1.5)])
    XCTAssertEqual(collected.kinds, [.workerReplaced(step.id, reason: "exceededTimeLimit")])
    XCTAssertFalse(supervision.takesAttempts)
  }

  /// Side by side in a test bundle (which cannot be asked to leave a test running): the
  /// bundle is stopped at one test's deadline and that test's reply comes with the signal.
  /// The test that ran beside it is not blamed: it runs again, alone; and a test left alone
  /// in the stopped bundle does not take its stop either.
  func testATestBesideOneWhoseEndCameWithTheSignalRunsAgainWithoutIt() throws {
    let steps = try steps(3)
    let start = clock.now
    for alone in [false, true] {
      var supervision = WorkerSupervision(gracePeriod: .seconds(1), kind: .testBundle)
      supervision.start(steps[0], ref: 1, sink: nil, streams: false, deadline: start + .seconds(1))
      supervision.start(steps[1], ref: 2, sink: nil, streams: false, deadline: start + .seconds(5))
      if !alone { supervision.start(steps[2], ref: 3, sink: nil, streams: false, deadline: start + .seconds(5)) }
      XCTAssertEqual(supervision.tick(at: start + .seconds(1)), SIGTERM)
      XCTAssertFalse(supervision.stoppedForEndedAttempts, "the test it was stopped for runs")
      guard case .ended(let first, let end, nil) = supervision.end(steps[0].id, as: .returned(duration: 1)) else {
        return XCTFail("the first test did not end")
      }
      XCTAssertEqual(end, .returned(duration: 1), "the first test keeps its end")
      XCTAssertTrue(supervision.stoppedForEndedAttempts)
      XCTAssertEqual(first.held.said, [.workerReplaced(steps[0].id, reason: "stoppedAtTimeLimit")])
      supervision.sawExit()
      let finished = supervision.exited(.signaled(SIGTERM))
      let beside = alone ? [steps[1]] : [steps[1], steps[2]]
      XCTAssertEqual(finished.count, beside.count)
      for (outcome, step) in zip(finished, beside) {
        guard case .runAgain(let attempt, let note, let company) = outcome else {
          return XCTFail("\(step.id.path) was blamed: \(outcome)")
        }
        XCTAssertEqual(attempt.planned.id, step.id)
        XCTAssertEqual(company, .alone)
        XCTAssertNil(note)
        XCTAssertEqual(attempt.held.said, [], "the replacement was said by the test it was stopped for")
      }
    }
  }

  /// Issue 52: side by side in a harness worker, a test past its deadline beside tests still
  /// within theirs is told apart from them. It ends at once, left running (no signal), saying
  /// its worker is replaced; the others go on and end as they end, and the worker takes no
  /// other test. When one of them then passes its own deadline, it may have waited for the
  /// hang: the worker is stopped and that test runs again, beside others, told why.
  func testAHangBesideTestsWithinTheirLimitsEndsAloneAndTheyGoOn() throws {
    let steps = try steps(3)
    let start = clock.now
    var supervision = WorkerSupervision(gracePeriod: .seconds(1))
    supervision.start(steps[0], ref: 1, sink: nil, streams: false, deadline: start + .seconds(1))
    supervision.start(steps[1], ref: 2, sink: nil, streams: false, deadline: start + .seconds(5))
    supervision.start(steps[2], ref: 3, sink: nil, streams: false, deadline: start + .seconds(9))
    supervision.printed(Array("spinning\n".utf8)[...])
    XCTAssertNil(supervision.tick(at: start + .seconds(1)), "no signal")
    XCTAssertEqual(supervision.leftRunning, [steps[0].id])
    let overdue = supervision.takeOverdue()
    guard case .ended(let hang, let end, nil)? = overdue.first, overdue.count == 1 else { return XCTFail("\(overdue)") }
    XCTAssertEqual(end, .leftRunningAtLimit(.seconds(1), output: "spinning"))
    XCTAssertEqual(hang.held.said, [.outputCaptured(steps[0].id, "[shared] spinning\n"),
                                         .workerReplaced(steps[0].id, reason: "exceededTimeLimit")])
    XCTAssertTrue(supervision.takeOverdue().isEmpty, "handed over once")
    XCTAssertFalse(supervision.runs(steps[0].id))
    XCTAssertNil(supervision.end(steps[0].id, as: .returned(duration: 3)), "a reply after it was handed over ends nothing")
    // The others go on: one ends as it ends.
    guard case .ended(_, let second, nil)? = supervision.end(steps[1].id, as: .returned(duration: 2)) else {
      return XCTFail("the second test did not end")
    }
    XCTAssertEqual(second, .returned(duration: 2))
    // The last passes its deadline: the hang may have held it, so it is not blamed.
    XCTAssertEqual(supervision.tick(at: start + .seconds(9)), SIGTERM)
    supervision.sawExit()
    let finished = supervision.exited(.signaled(SIGTERM))
    guard case .runAgain(let last, let note, .besideOthers)? = finished.first, finished.count == 1 else {
      return XCTFail("\(finished)")
    }
    XCTAssertEqual(last.planned.id, steps[2].id)
    XCTAssertEqual(note?.message, "The worker process running this test side by side with Supervised/test 0 was stopped "
      + "because Supervised/test 0 ran past its time limit, so this test ran again without it")
  }

  /// A reply read with the deadline it came at keeps its own end: the test was not left
  /// running, and the worker goes on.
  func testAnEndReadWithItsDeadlineKeepsItsEndBesideTestsWithinTheirLimits() throws {
    let steps = try steps(2)
    let start = clock.now
    var supervision = WorkerSupervision(gracePeriod: .seconds(1))
    supervision.start(steps[0], ref: 1, sink: nil, streams: false, deadline: start + .seconds(1))
    supervision.start(steps[1], ref: 2, sink: nil, streams: false, deadline: start + .seconds(5))
    XCTAssertNil(supervision.tick(at: start + .seconds(1)))
    guard case .ended(let attempt, let end, nil)? = supervision.end(steps[0].id, as: .returned(duration: 1)) else {
      return XCTFail("the first test did not end")
    }
    XCTAssertEqual(end, .returned(duration: 1))
    XCTAssertEqual(attempt.held.said, [], "no replacement said")
    XCTAssertEqual(supervision.leftRunning, [])
    XCTAssertTrue(supervision.takeOverdue().isEmpty)
    XCTAssertTrue(supervision.takesAttempts)
  }

  /// Issue 49: output a process the tests started held past the worker's exit is a `leaked`
  /// warning of each test running then: among the events of one that ends, and kept by one
  /// that runs again (its held events are dropped), never dropped with them.
  func testOutputHeldPastTheExitIsAWarningOfEachTestRunningThenWhetherItEndsOrRunsAgain() throws {
    let steps = try steps(3)
    let leak = Issue(kind: .leaked, message: "Leaked work: a process the tests started still held the worker process's output "
      + "open after it exited; it was stopped with the worker process's process group")
    XCTAssertEqual(WorkerSupervision.outputHeld(by: "the worker process"), leak)
    // Three side by side; the worker names the second as crashing it.
    var supervision = WorkerSupervision(gracePeriod: .seconds(1))
    for (ref, step) in steps.enumerated() { supervision.start(step, ref: ref + 1, sink: nil, streams: false, deadline: nil) }
    supervision.crashed(ref: 2)
    supervision.sawExit()
    var again: [TestID: [Issue]] = [:]
    for outcome in supervision.exited(.signaled(SIGILL), outputHeldBy: "the worker process") {
      switch outcome {
      case .ended(let attempt, _, _):
        XCTAssertEqual(attempt.planned.id, steps[1].id)
        XCTAssertEqual(attempt.held.said, [.workerReplaced(steps[1].id, reason: "crashed"),
                                                  .issueRecorded(steps[1].id, leak)])
        XCTAssertEqual(attempt.kept, [])
      case .runAgain(let attempt, _, _):
        again[attempt.planned.id] = attempt.kept
      }
    }
    XCTAssertEqual(again, [steps[0].id: [leak], steps[2].id: [leak]])
    // A crash that names no test: every test runs again, each keeping the warning.
    var unnamed = WorkerSupervision(gracePeriod: .seconds(1))
    for step in steps.prefix(2) { unnamed.start(step, sink: nil, streams: false, deadline: nil) }
    unnamed.sawExit()
    let kept = unnamed.exited(.exited(1), outputHeldBy: "the test bundle").map { outcome -> [Issue] in
      guard case .runAgain(let attempt, _, .inHalves) = outcome else { return [] }
      return attempt.kept
    }
    XCTAssertEqual(kept.map { $0.map(\.message) }, Array(repeating: [WorkerSupervision.outputHeld(by: "the test bundle").message], count: 2))
    // A test running alone has it streamed, after its output and before its end.
    let collected = Collected()
    var alone = WorkerSupervision(gracePeriod: .seconds(1))
    alone.start(steps[0], sink: collected.sink, streams: true, deadline: nil)
    alone.printed(Array("forked".utf8)[...])
    alone.sawExit()
    XCTAssertEqual(ended(alone.exited(.signaled(SIGILL), outputHeldBy: "the worker process").first)?.end,
                   .processEnded(.signaled(SIGILL), output: "forked"))
    XCTAssertEqual(collected.kinds, [.outputCaptured(steps[0].id, "forked"), .workerReplaced(steps[0].id, reason: "crashed"),
                                     .issueRecorded(steps[0].id, leak)])
    // Without held output, no warning.
    var clean = WorkerSupervision(gracePeriod: .seconds(1))
    clean.start(steps[0], sink: nil, streams: false, deadline: nil)
    clean.sawExit()
    guard case .ended(let attempt, _, _) = clean.exited(.exited(0)).first else { return XCTFail("the test did not end") }
    XCTAssertFalse(attempt.held.contains { if case .issueRecorded = $0.kind { true } else { false } })
  }

  /// A test bundle's worker (`AttemptFollowUp.WorkerKind.testBundle`): a crash while its
  /// first test runs alone is that test's; one after a test ended in it, or among tests side
  /// by side, blames none of those running: each runs again alone, told nothing (`swift test`
  /// says nothing), keeping the warning of output held past the exit.
  func testATestBundlesCrashAfterATestEndedInItRunsTheTestsRunningAgainAlone() throws {
    let steps = try steps(3)
    let leak = WorkerSupervision.outputHeld(by: "the test bundle")
    var first = WorkerSupervision(gracePeriod: .seconds(1), kind: .testBundle)
    first.start(steps[0], sink: nil, streams: false, deadline: nil)
    first.sawExit()
    XCTAssertEqual(ended(first.exited(.signaled(SIGILL)).first)?.end, .processEnded(.signaled(SIGILL), output: ""))
    var after = WorkerSupervision(gracePeriod: .seconds(1), kind: .testBundle)
    after.start(steps[0], sink: nil, streams: false, deadline: nil)
    XCTAssertNotNil(ended(after.end(steps[0].id, as: .returned(duration: 1))))
    after.start(steps[1], sink: nil, streams: false, deadline: nil)
    after.sawExit()
    let finished = after.exited(.signaled(SIGILL), outputHeldBy: "the test bundle")
    guard finished.count == 1, case .runAgain(let attempt, let note, let company) = finished[0] else {
      return XCTFail("the test running was blamed: \(finished)")
    }
    XCTAssertEqual(attempt.planned.id, steps[1].id)
    XCTAssertNil(note)
    XCTAssertEqual(company, .alone)
    XCTAssertEqual(attempt.kept, [leak])
    // Side by side in its first tests: each runs again alone.
    var beside = WorkerSupervision(gracePeriod: .seconds(1), kind: .testBundle)
    for step in steps.prefix(2) { beside.start(step, sink: nil, streams: false, deadline: nil) }
    beside.sawExit()
    let again = beside.exited(.exited(1)).map { outcome -> TestID? in
      guard case .runAgain(let attempt, nil, .alone) = outcome else { return nil }
      return attempt.planned.id
    }
    XCTAssertEqual(again, [steps[0].id, steps[1].id])
  }

  /// A stopped worker takes no attempt, nor one seen to exit.
  func testAWorkerTakesNoAttemptOnceStoppedOrSeenToExit() throws {
    let steps = try steps(2)
    var stopped = WorkerSupervision(gracePeriod: .seconds(1))
    XCTAssertTrue(stopped.takesAttempts)
    XCTAssertEqual(stopped.interrupt(SIGINT, at: clock.now), SIGTERM)
    XCTAssertFalse(stopped.takesAttempts)
    XCTAssertFalse(stopped.start(steps[0], sink: nil, streams: false, deadline: nil))
    var exiting = WorkerSupervision(gracePeriod: .seconds(1))
    exiting.sawExit()
    XCTAssertFalse(exiting.takesAttempts)
    XCTAssertFalse(exiting.start(steps[1], sink: nil, streams: false, deadline: nil))
  }
}

extension [Event] {
  /// What an attempt said after the fact of its start, its first event.
  var said: [Event.Kind] {
    guard case .testStarted = first?.kind else { return map(\.kind) }
    return dropFirst().map(\.kind)
  }
}
