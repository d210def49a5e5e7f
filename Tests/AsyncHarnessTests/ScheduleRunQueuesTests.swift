@testable import AsyncHarness
import XCTest

/// The run queues of a schedule (``ScheduleRunQueues``), driven directly as a value, with no
/// thread and no real clock: which item runs next for a seed, FIFO within a queue, delayed
/// items on virtual time, what an idle schedule answers, Swift concurrency jobs, the trace of
/// the steps taken, and the end of the schedule.
final class ScheduleRunQueuesTests: XCTestCase {
  // MARK: Queues and picking

  func testQueuesAreNumberedAfterTheMainQueueInTheOrderTheyAreMade() {
    var queues = ScheduleRunQueues(schedule: Schedule(seed: 7, policy: .randomWalk))
    XCTAssertEqual(ScheduleRunQueues.mainQueue, 0)
    XCTAssertEqual(queues.addQueue(QueueIdentity(label: "background")), 1)
    XCTAssertEqual(queues.addQueue(QueueIdentity(label: "io")), 2)
    XCTAssertEqual(queues.queueNames, "main, background, io")
  }

  func testItemsOfOneQueueRunInTheOrderTheyWereSubmitted() {
    var queues = ScheduleRunQueues(schedule: Schedule(seed: 7, policy: .randomWalk))
    let io = queues.addQueue(QueueIdentity(label: "io"))
    let log = Log()
    for name in ["first", "second", "third", "fourth"] {
      XCTAssertTrue(queues.submit(to: io, fromOutside: false) { log.append(name) })
    }
    XCTAssertEqual(drain(&queues), ["io", "io", "io", "io"])
    XCTAssertEqual(log.all, ["first", "second", "third", "fourth"])
    XCTAssertEqual(queues.steps, 4)
    XCTAssertEqual(queues.submissions, 4)
  }

  func testTheSeedPicksWhichQueueRunsNextAndTheSameSeedPicksTheSameOrder() {
    // Pinned: a change to how the queues pick breaks the replay tokens earlier runs printed.
    XCTAssertEqual(threeQueuesOfThreeItems(.randomWalk, seed: 7),
                   ["main1", "main2", "main3", "b1", "a1", "b2", "a2", "a3", "b3"])
    XCTAssertEqual(threeQueuesOfThreeItems(.randomWalk, seed: 7), threeQueuesOfThreeItems(.randomWalk, seed: 7))
    XCTAssertEqual(threeQueuesOfThreeItems(.randomWalk, seed: 8),
                   ["a1", "b1", "a2", "a3", "main1", "main2", "b2", "main3", "b3"])
    // PCT, seed 2: change points after steps 1 and 2 drop b, then a, below main; b stays above a.
    XCTAssertEqual(threeQueuesOfThreeItems(.pct(depth: 3), seed: 2),
                   ["b1", "a1", "main1", "main2", "main3", "b2", "b3", "a2", "a3"])
    XCTAssertEqual(threeQueuesOfThreeItems(.pct(depth: 3), seed: 2), threeQueuesOfThreeItems(.pct(depth: 3), seed: 2))
  }

  // MARK: Virtual time

  func testADelayedItemWaitsForVirtualTimeWhileAnotherQueueRuns() {
    var queues = ScheduleRunQueues(schedule: Schedule(seed: 7, policy: .randomWalk))
    let io = queues.addQueue(QueueIdentity(label: "io"))
    let log = Log()
    XCTAssertTrue(queues.submit(to: io, after: .seconds(5), fromOutside: false) { log.append("late") })
    XCTAssertTrue(queues.submit(to: ScheduleRunQueues.mainQueue, fromOutside: false) { log.append("now") })
    XCTAssertEqual(runNext(&queues, upTo: .seconds(60)), "main")
    XCTAssertEqual(queues.now, .zero, "a runnable item runs without moving virtual time")
    XCTAssertEqual(runNext(&queues, upTo: .seconds(60)), "io")
    XCTAssertEqual(queues.now, .seconds(5), "with nothing runnable, time jumped to the delayed item")
    XCTAssertEqual(log.all, ["now", "late"])
  }

  func testVirtualTimeVisitsDelayedItemsByDueInstantThenSubmissionOrder() {
    var queues = ScheduleRunQueues(schedule: Schedule(seed: 7, policy: .randomWalk))
    let io = queues.addQueue(QueueIdentity(label: "io"))
    let log = Log()
    XCTAssertTrue(queues.submit(to: io, after: .seconds(2), fromOutside: false) { log.append("2s, first") })
    XCTAssertTrue(queues.submit(to: io, after: .seconds(1), fromOutside: false) { log.append("1s") })
    XCTAssertTrue(queues.submit(to: io, after: .seconds(2), fromOutside: false) { log.append("2s, second") })
    XCTAssertEqual(runNext(&queues, upTo: .seconds(60)), "io")
    XCTAssertEqual(queues.now, .seconds(1))
    XCTAssertEqual(runNext(&queues, upTo: .seconds(60)), "io")
    XCTAssertEqual(queues.now, .seconds(2))
    XCTAssertEqual(runNext(&queues, upTo: .seconds(60)), "io")
    XCTAssertEqual(queues.now, .seconds(2), "both 2 s items came due at once")
    XCTAssertEqual(log.all, ["1s", "2s, first", "2s, second"])
  }

  func testADueItemJoinsTheEndOfItsQueue() {
    var queues = ScheduleRunQueues(schedule: Schedule(seed: 7, policy: .randomWalk))
    let io = queues.addQueue(QueueIdentity(label: "io"))
    let log = Log()
    XCTAssertTrue(queues.submit(to: io, after: .seconds(1), fromOutside: false) { log.append("delayed") })
    queues.advance(to: .seconds(1))
    XCTAssertTrue(queues.submit(to: io, fromOutside: false) { log.append("at once") })
    XCTAssertEqual(drain(&queues), ["io", "io"])
    XCTAssertEqual(log.all, ["at once", "delayed"], "the delayed item came due only when the queue was next asked")
  }

  func testNothingDueBeforeTheDeadlineLeavesTimeWhereItIs() {
    var queues = ScheduleRunQueues(schedule: Schedule(seed: 7, policy: .randomWalk))
    XCTAssertTrue(queues.submit(to: ScheduleRunQueues.mainQueue, after: .seconds(5), fromOutside: false) {})
    guard case .idle(let nextDue, let submissions) = queues.next(upTo: .seconds(3)) else {
      return XCTFail("an item due after the deadline ran")
    }
    XCTAssertEqual(nextDue, .seconds(5))
    XCTAssertEqual(submissions, 1)
    XCTAssertEqual(queues.now, .zero)
    XCTAssertEqual(queues.steps, 0)
  }

  func testNothingRunnableOrDueIsIdleWithNoNextItem() {
    var queues = ScheduleRunQueues(schedule: Schedule(seed: 7, policy: .randomWalk))
    guard case .idle(let nextDue, let submissions) = queues.next(upTo: .seconds(3)) else {
      return XCTFail("an empty schedule ran an item")
    }
    XCTAssertNil(nextDue)
    XCTAssertEqual(submissions, 0)
    XCTAssertTrue(queues.submit(to: ScheduleRunQueues.mainQueue, fromOutside: false) {})
    XCTAssertEqual(drain(&queues), ["main"])
    guard case .idle(nil, 1) = queues.next(upTo: .seconds(3)) else {
      return XCTFail("a drained schedule is not idle with one submission seen")
    }
    XCTAssertEqual(queues.steps, 1, "asking an idle schedule takes no step")
  }

  func testAdvanceNeverMovesVirtualTimeBack() {
    var queues = ScheduleRunQueues(schedule: Schedule(seed: 7, policy: .randomWalk))
    queues.advance(to: .seconds(4))
    queues.advance(to: .seconds(2))
    XCTAssertEqual(queues.now, .seconds(4))
  }

  func testASleeperWakesWithItsKeyWhenVirtualTimeReachesIt() throws {
    var queues = ScheduleRunQueues(schedule: Schedule(seed: 7, policy: .randomWalk))
    let log = Log()
    let first = try XCTUnwrap(queues.addSleeper(until: .seconds(3), fromOutside: false) { log.append("woke \($0)") })
    let second = try XCTUnwrap(queues.addSleeper(until: .seconds(1), fromOutside: false) { log.append("woke \($0)") })
    XCTAssertEqual([first, second], [1, 2])
    queues.removeSleeper(second)
    XCTAssertEqual(drain(&queues), ["clock"])
    XCTAssertEqual(log.all, ["woke 1"], "the removed sleeper never ran")
    XCTAssertEqual(queues.now, .seconds(3))
    XCTAssertEqual(queues.queueNames, "main, clock")
  }

  func testTakingAQueuesReadyItemsTakesNoStep() {
    var queues = ScheduleRunQueues(schedule: Schedule(seed: 7, policy: .randomWalk))
    let io = queues.addQueue(QueueIdentity(label: "io"))
    XCTAssertTrue(queues.submit(to: io, fromOutside: false) {})
    XCTAssertTrue(queues.submit(to: io, fromOutside: false) {})
    XCTAssertTrue(queues.submit(to: io, after: .seconds(1), fromOutside: false) {})
    XCTAssertEqual(queues.takeReady(from: io).map(\.sequence), [1, 2])
    XCTAssertEqual(queues.steps, 0)
    guard case .idle(.seconds(1), 3) = queues.next(upTo: .zero) else {
      return XCTFail("the taken items are still runnable, or the delayed one was taken")
    }
  }

  // MARK: Swift concurrency jobs

  func testEachTasksJobsFormAQueueNumberedInTheOrderTheTasksWereSeen() {
    var queues = ScheduleRunQueues(schedule: Schedule(seed: 7, policy: .randomWalk))
    XCTAssertTrue(submitJob(&queues, task: 40))
    XCTAssertTrue(submitJob(&queues, task: 41))
    XCTAssertTrue(submitJob(&queues, task: 40))
    XCTAssertTrue(submitJob(&queues, task: nil))
    XCTAssertEqual(queues.queueNames, "main, 2 Swift concurrency tasks")
    XCTAssertEqual(drain(&queues), ["task #1", "task #1", "task #2", "an actor's job"])
  }

  func testAJobFromOutsideIsTakenOnlyForATaskTheScheduleAlreadyTook() {
    var queues = ScheduleRunQueues(schedule: Schedule(seed: 7, policy: .randomWalk))
    XCTAssertFalse(submitJob(&queues, task: 40, fromOutside: true))
    XCTAssertFalse(submitJob(&queues, task: nil, fromOutside: true))
    XCTAssertEqual(queues.submissions, 0)
    XCTAssertEqual(queues.outsideArrivals, 0)
    XCTAssertTrue(submitJob(&queues, task: 40))
    XCTAssertTrue(submitJob(&queues, task: 40, fromOutside: true))
    XCTAssertEqual(queues.outsideArrivals, 1)
    XCTAssertEqual(drain(&queues), ["task #1", "task #1"])
  }

  func testATaskRunningAgainMakesTheTimerOfItsSleepDueAtOnce() {
    var queues = ScheduleRunQueues(schedule: Schedule(seed: 7, policy: .randomWalk))
    XCTAssertTrue(submitJob(&queues, task: 40))
    XCTAssertEqual(runNext(&queues, upTo: .zero), "task #1")
    // The running job of task #1 (queue 1) sleeps: its timer is the task's next job.
    XCTAssertTrue(submitJob(&queues, task: 40, after: .seconds(10), runningQueue: 1))
    guard case .idle(.seconds(10), 2) = queues.next(upTo: .zero) else {
      return XCTFail("the sleep's timer is runnable before its time")
    }
    // The sleep is cancelled: the task runs again before the timer is due.
    XCTAssertTrue(submitJob(&queues, task: 40))
    guard case .run(let timer) = queues.next(upTo: .zero), case .run(let job) = queues.next(upTo: .zero) else {
      return XCTFail("the timer and the task's job are not both runnable at once")
    }
    XCTAssertEqual([timer.sequence, job.sequence], [2, 3])
    XCTAssertEqual([timer.isCancelledTimer, job.isCancelledTimer], [true, false])
    XCTAssertEqual(queues.now, .zero)
  }

  func testATimerFromOutsideIsNoSleepOfTheRunningTask() {
    var queues = ScheduleRunQueues(schedule: Schedule(seed: 7, policy: .randomWalk))
    XCTAssertTrue(submitJob(&queues, task: 40))
    XCTAssertEqual(runNext(&queues, upTo: .zero), "task #1")
    XCTAssertTrue(submitJob(&queues, task: 40, after: .seconds(10), fromOutside: true, runningQueue: 1))
    XCTAssertTrue(submitJob(&queues, task: 40))
    XCTAssertEqual(runNext(&queues, upTo: .zero), "task #1")
    guard case .idle(.seconds(10), 3) = queues.next(upTo: .zero) else {
      return XCTFail("a delayed job from outside was taken for the running task's sleep")
    }
  }

  func testTakingTheJobsLeavesTheTestsOwnItems() {
    var queues = ScheduleRunQueues(schedule: Schedule(seed: 7, policy: .randomWalk))
    XCTAssertTrue(queues.submit(to: ScheduleRunQueues.mainQueue, fromOutside: false) {})
    XCTAssertTrue(submitJob(&queues, task: 40))
    XCTAssertTrue(submitJob(&queues, task: 41, after: .seconds(1)))
    XCTAssertEqual(queues.takeJobs().map(\.sequence), [3, 2], "the delayed jobs first, then the runnable ones")
    XCTAssertEqual(drain(&queues), ["main"])
  }

  // MARK: The trace

  func testTheTraceCountsTheStepsAndFingerprintsTheQueuesTheyPicked() {
    var queues = ScheduleRunQueues(schedule: Schedule(seed: 7, policy: .randomWalk))
    XCTAssertEqual(queues.trace.description, "0-0d559b", "no step: the folded FNV-1a offset basis")
    let io = queues.addQueue(QueueIdentity(label: "io"))
    XCTAssertTrue(queues.submit(to: io, fromOutside: false) {})
    XCTAssertTrue(queues.submit(to: ScheduleRunQueues.mainQueue, fromOutside: false) {})
    XCTAssertEqual(drain(&queues), ["io", "main"])
    XCTAssertEqual(queues.trace, ScheduleTrace(steps: 2, fingerprint: 0x8a3fbf), "queue 1, then queue 0")
    XCTAssertNil(queues.trace.firstOutsideStep)
  }

  func testTheTraceSaysBeforeWhichStepOutsideWorkFirstArrived() {
    var queues = ScheduleRunQueues(schedule: Schedule(seed: 7, policy: .randomWalk))
    XCTAssertTrue(queues.submit(to: ScheduleRunQueues.mainQueue, fromOutside: false) {})
    XCTAssertTrue(queues.submit(to: ScheduleRunQueues.mainQueue, fromOutside: false) {})
    XCTAssertEqual(drain(&queues), ["main", "main"])
    XCTAssertTrue(queues.submit(to: ScheduleRunQueues.mainQueue, fromOutside: true) {})
    queues.noteOutsideWork()
    XCTAssertEqual(drain(&queues), ["main"])
    XCTAssertEqual(queues.outsideArrivals, 2)
    XCTAssertEqual(queues.firstOutsideStep, 2)
    XCTAssertEqual(queues.trace.firstOutsideStep, 3)
    XCTAssertEqual(queues.trace.steps, 3)
  }

  // MARK: The end

  func testAnEndedScheduleDropsItsItemsAndTakesNoMore() {
    var queues = ScheduleRunQueues(schedule: Schedule(seed: 7, policy: .randomWalk))
    XCTAssertTrue(queues.submit(to: ScheduleRunQueues.mainQueue, fromOutside: false) {})
    XCTAssertTrue(queues.submit(to: ScheduleRunQueues.mainQueue, after: .seconds(1), fromOutside: false) {})
    queues.end()
    XCTAssertTrue(queues.hasEnded)
    XCTAssertFalse(queues.submit(to: ScheduleRunQueues.mainQueue, fromOutside: false) {})
    XCTAssertFalse(submitJob(&queues, task: 40))
    XCTAssertNil(queues.addSleeper(until: .seconds(1), fromOutside: false) { _ in })
    guard case .idle(nil, 2) = queues.next(upTo: .seconds(60)) else {
      return XCTFail("an ended schedule still holds work, or counted a refused submission")
    }
    XCTAssertEqual(queues.now, .zero)
  }

  // MARK: Helpers

  /// The order in which three queues (main, `a`, `b`) of three items each ran, under
  /// `policy` and `seed`; each item is named after its queue and its place there.
  private func threeQueuesOfThreeItems(_ policy: SchedulePolicy, seed: UInt64) -> [String] {
    var queues = ScheduleRunQueues(schedule: Schedule(seed: seed, policy: policy))
    let indices = [ScheduleRunQueues.mainQueue, queues.addQueue(QueueIdentity(label: "a")),
                   queues.addQueue(QueueIdentity(label: "b"))]
    let log = Log()
    for place in 1...3 {
      for (index, name) in zip(indices, ["main", "a", "b"]) {
        XCTAssertTrue(queues.submit(to: index, fromOutside: false) { log.append("\(name)\(place)") })
      }
    }
    XCTAssertEqual(drain(&queues).count, 9)
    return log.all
  }

  /// Runs the next item, if one is runnable or due by `deadline`; returns its queue's label.
  private func runNext(_ queues: inout ScheduleRunQueues, upTo deadline: Duration) -> String? {
    guard case .run(let item) = queues.next(upTo: deadline) else { return nil }
    item.work()
    return item.identity.label
  }

  /// Runs items until none is runnable or due; returns their queues' labels, in order.
  private func drain(_ queues: inout ScheduleRunQueues) -> [String] {
    var ran: [String] = []
    while let label = runNext(&queues, upTo: .seconds(3600)) { ran.append(label) }
    return ran
  }

  /// Submits a Swift concurrency job that does nothing; returns whether the queues took it.
  private func submitJob(_ queues: inout ScheduleRunQueues, task: UInt64?, after delay: Duration = .zero,
                         fromOutside: Bool = false, runningQueue: Int? = nil) -> Bool {
    queues.submitJob(task: task, onMainThread: false, after: delay, fromOutside: fromOutside,
                     runningQueue: runningQueue, work: {}, returnToPlatform: {})
  }
}
