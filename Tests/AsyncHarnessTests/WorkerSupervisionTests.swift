@testable @_spi(ForToolsIntegrationOnly) import AsyncHarness
import Foundation
import Synchronization
import XCTest

/// The lane supervisor's state machine (`WorkerSupervision`), and a harness worker's
/// transcript feeding it, driven directly, without processes, through the orders of inputs
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
    private let events = Mutex<[Event.Kind]>([])
    var sink: EventSink { EventSink { [self] event in events.withLock { $0.append(event.kind) } } }
    var kinds: [Event.Kind] { events.withLock { $0 } }
  }

  private func ended(_ finished: WorkerSupervision.Finished?) -> (id: TestID, end: AttemptEnd)? {
    guard case .ended(let attempt, let end, _) = finished else { return nil }
    return (attempt.planned.id, end)
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
    XCTAssertEqual(third.held.map(\.kind), [.outputCaptured(steps[1].id, "[shared] both\n")])
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
      case .runAgain(let attempt, let note, let culpritKnown):
        let step = attempt.planned
        XCTAssertTrue(culpritKnown)
        XCTAssertTrue(note.message.hasSuffix("crashed in Supervised/test 1 (signal SIGILL (illegal instruction)), so this "
          + "test ran again without it"), note.message)
        again.append(step.id)
      }
    }
    XCTAssertEqual(again, [steps[0].id, steps[2].id])
  }
}
