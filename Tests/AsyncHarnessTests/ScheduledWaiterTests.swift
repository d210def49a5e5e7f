@testable import AsyncHarness
import Foundation
import Synchronization
import XCTest

/// The scheduled strategy: pending work runs only inside waits, one item at a time, on
/// virtual time; a wait nothing can satisfy ends at once; work from outside the schedule
/// falls back to real time with a warning.
final class ScheduledWaiterTests: XCTestCase {
  private let file = "Tests/AsyncHarnessTests/ScheduledWaiterTests.swift"

  func testWorkRunsOnlyWhileTheTestWaitsAndInOrderOnEachQueue() throws {
    let log = Log()
    let result = try scheduled(Test("pending until the wait") { t in
      let done = t.expectation("done", expectedFulfillmentCount: 2)
      t.background.async { log.append("bg1") }
      t.background.async { log.append("bg2"); done.fulfill() }
      t.main.async { log.append("m1"); done.fulfill() }
      log.append("before the wait")
      try t.wait(for: done)
      log.append("after the wait")
    })
    XCTAssertEqual(result.verdict, .passed, "\(result.issues)")
    XCTAssertEqual(result.issues, [])
    let lines = log.all
    XCTAssertEqual(lines.first, "before the wait")
    XCTAssertEqual(lines.last, "after the wait")
    XCTAssertEqual(lines.filter { $0.hasPrefix("bg") }, ["bg1", "bg2"], "a serial queue runs its items in order")
    XCTAssertEqual(Set(lines), ["before the wait", "bg1", "bg2", "m1", "after the wait"])
  }

  func testAThirtySecondBackOffTakesNoRealTime() throws {
    let virtualElapsed = Mutex<Duration?>(nil)
    let start = ContinuousClock().now
    let result = try scheduled(Test("retries after 30 s") { t in
      let retried = t.expectation("retried")
      let began = t.virtualNow
      t.queue("retry").asyncAfter(.seconds(30)) { retried.fulfill() }
      try t.wait(for: retried, timeout: .seconds(60))
      virtualElapsed.withLock { $0 = t.virtualNow - began }
    })
    XCTAssertEqual(result.verdict, .passed, "\(result.issues)")
    XCTAssertEqual(virtualElapsed.withLock { $0 }, .seconds(30), "virtual time moved to the delayed item")
    // Not a speed target: a sleep on real time would take the full 60 s.
    XCTAssertLessThan(start.duration(to: ContinuousClock().now), .seconds(5))
  }

  func testDelayedItemsRunInTheOrderOfTheirTimes() throws {
    let log = Log()
    let result = try scheduled(Test("timers") { t in
      let done = t.expectation("done", expectedFulfillmentCount: 3)
      for (label, seconds) in [("c", 3), ("a", 1), ("b", 2)] {
        t.queue(label).asyncAfter(.seconds(Int64(seconds))) {
          log.append("\(label) at \(t.virtualNow)")
          done.fulfill()
        }
      }
      try t.wait(for: done, timeout: .seconds(10))
    })
    XCTAssertEqual(result.verdict, .passed, "\(result.issues)")
    XCTAssertEqual(log.all, ["a at 1.0 seconds", "b at 2.0 seconds", "c at 3.0 seconds"])
  }

  func testAWaitNoPendingWorkCanSatisfyEndsAtOnceNamingTheQueues() throws {
    let line = #line + 3
    let start = ContinuousClock().now
    let result = try scheduled(Test("never answered") { t in
      let never = t.expectation("never fulfilled")
      let io = t.queue("io")
      io.async { t.background.async {} }
      try t.wait(for: never, timeout: .seconds(30))
    })
    XCTAssertLessThan(start.duration(to: ContinuousClock().now), .seconds(5), "a 30 s timeout was sat out")
    XCTAssertEqual(result.verdict, .failed)
    XCTAssertEqual(result.issues.map(\.description), [
      "Exceeded timeout of 30 seconds, with unfulfilled expectations: \"never fulfilled\" created at \(file):\(line); no work left on the test's queues (main, background, io) could satisfy the wait, so the scheduled waiter ended it at once instead of sitting out its timeout (\(file):\(line + 3))",
    ])
  }

  func testDelayedWorkPastTheTimeoutIsNamedAndTheWaitEndsAtItsVirtualTimeout() throws {
    let line = #line + 3
    let after = Mutex<Duration?>(nil)
    let result = try scheduled(Test("too late") { t in
      let late = t.expectation("answered")
      t.main.asyncAfter(.seconds(45)) { late.fulfill() }
      defer { after.withLock { $0 = t.virtualNow } }
      try t.wait(until: "answered") { late.isFulfilled }
    })
    XCTAssertEqual(result.issues.filter(\.isFailure).map(\.description), [
      "Exceeded timeout of 1 seconds waiting until \"answered\"; no work left on the test's queues (main, background) could satisfy the wait (the next delayed work was due 44 seconds after the timeout), so the scheduled waiter ended it at once instead of sitting out its timeout (\(file):\(line + 3))",
    ])
    XCTAssertEqual(after.withLock { $0 }, .seconds(1), "virtual time stopped at the timeout")
  }

  func testAResultWaitThatTimesOutInVirtualTimeRecordsNothing() throws {
    let seen = Mutex<[WaitResult]>([])
    let elapsed = Mutex<[Duration]>([])
    let result = try scheduled(Test("did it happen within 5 s, or 20 ms?") { t in
      for timeout in [Duration.seconds(5), .milliseconds(20)] {
        let maybe = t.expectation("maybe")
        let before = t.virtualNow
        let outcome = t.result(waitingFor: [maybe], timeout: timeout)
        seen.withLock { $0.append(outcome) }
        elapsed.withLock { $0.append(t.virtualNow - before) }
      }
    })
    XCTAssertEqual(seen.withLock { $0 }, [.timedOut, .timedOut])
    XCTAssertEqual(elapsed.withLock { $0 }, [.seconds(5), .milliseconds(20)],
                   "virtual time passed the timeout, whether the wait ended at once or sat out a short one")
    XCTAssertEqual(result.verdict, .passed)
    XCTAssertEqual(result.issues, [])
  }

  func testAnInvertedExpectationPassesWhenNothingPendingFulfillsIt() throws {
    let start = ContinuousClock().now
    let result = try scheduled(Test("must not happen") { t in
      let never = t.expectation("must not happen", isInverted: true)
      t.background.async {}
      try t.wait(for: never, timeout: .seconds(30))
    })
    XCTAssertEqual(result.verdict, .passed, "\(result.issues)")
    XCTAssertLessThan(start.duration(to: ContinuousClock().now), .seconds(5))
  }

  func testWorkFromOutsideTheScheduleFallsBackToRealTimeWithAWarningNamingTheWait() throws {
    let line = #line + 4
    let result = try scheduled(Test("a real queue") { t in
      let done = t.expectation("done")
      DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { t.main.async { done.fulfill() } }
      try t.wait(for: done)
    })
    XCTAssertEqual(result.verdict, .passed, "\(result.issues)")
    XCTAssertEqual(result.issues.map(\.description), [
      "scheduled waiter: the wait for \"done\" at \(file):\(line) depended on work from outside the test's queues (a real DispatchQueue, a thread, a continuation resumed from them), so it fell back to waiting in real time; the schedule neither orders nor replays that work; it first arrived before step 1 of the schedule, so a replay follows this run exactly only up to there (\(file):\(line))",
    ])
  }

  func testAfterOutsideWorkWasSeenLaterWaitsWaitInRealTime() throws {
    let result = try scheduled(Test("a real queue, then a slow one") { t in
      let first = t.expectation("first")
      DispatchQueue.global().async { t.main.async { first.fulfill() } }
      try t.wait(for: first)
      let second = t.expectation("second")
      // Longer than the quiet period: only a wait that falls back to real time sees it.
      DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(300)) { second.fulfill() }
      try t.wait(for: second, timeout: .seconds(5))
    })
    XCTAssertEqual(result.verdict, .passed, "\(result.issues)")
    XCTAssertEqual(result.issues.map(\.kind), [.warning, .warning])
  }

  func testMainQueueItemsRunOnTheMainThreadAndOthersOnTheWaitingOne() throws {
    let result = try scheduled(Test("threads") { t async throws in
      let done = t.expectation("done", expectedFulfillmentCount: 2)
      t.main.async {
        t.expect(Thread.isMainThread, "a main-queue item runs on the main thread")
        t.expect(t.main.isCurrent)
        done.fulfill()
      }
      t.background.async {
        t.expect(t.background.isCurrent)
        done.fulfill()
      }
      try await t.wait(for: done)
    })
    XCTAssertEqual(result.verdict, .passed, "\(result.issues)")
    XCTAssertEqual(result.issues, [])
  }

  func testSyncRunsTheItemsTheQueueHoldsFirst() throws {
    let log = Log()
    let result = try scheduled(Test("sync after async") { t in
      let io = t.queue("io")
      io.async { log.append("async") }
      io.sync { log.append("sync") }
      t.background.sync { t.main.sync {} }
    })
    XCTAssertEqual(log.all, ["async", "sync"])
    XCTAssertEqual(result.issues.map(\.kind), [.deadlock], "a cycle is reported as on every queue")
  }

  func testASleepOfTheTestsOwnCodeRunsTheWorkDueMeanwhile() throws {
    let log = Log()
    let start = ContinuousClock().now
    let result = try scheduled(Test("sleeps a minute") { t async throws in
      t.queue("ticker").asyncAfter(.seconds(20)) { log.append("tick at \(t.virtualNow)") }
      t.queue("ticker").asyncAfter(.seconds(90)) { log.append("never: after the sleep") }
      try await t.clock.sleep(for: .seconds(60))  // virtual time under test: no real sleep
      log.append("woke at \(t.virtualNow)")
    })
    XCTAssertEqual(result.verdict, .passed, "\(result.issues)")
    XCTAssertEqual(log.all, ["tick at 20.0 seconds", "woke at 60.0 seconds"])
    XCTAssertLessThan(start.duration(to: ContinuousClock().now), .seconds(5))
  }

  func testATaskSleepingOnTheVirtualClockIsResumedByTheSchedule() throws {
    let result = try scheduled(Test("a task sleeps 10 s") { t async throws in
      let done = t.expectation("done")
      let clock = t.clock
      Task {
        try await clock.sleep(for: .seconds(10))  // virtual time under test: no real sleep
        done.fulfill()
      }
      try await t.wait(for: done, timeout: .seconds(30))
      t.expectEqual(t.virtualNow, .seconds(10))
    })
    XCTAssertEqual(result.verdict, .passed, "\(result.issues)")
    XCTAssertEqual(result.issues, [], "the task is a task of the schedule")
  }

  func testPendingWorkIsDroppedWhenTheTestEndsAndLaterWorkRunsAtOnce() throws {
    let log = Log()
    let queue = Mutex<(any Dispatching)?>(nil)
    let result = try scheduled(Test("leaves work behind") { t in
      t.background.async { log.append("never ran") }
      queue.withLock { $0 = t.background }
    })
    XCTAssertEqual(result.verdict, .passed)
    queue.withLock { $0 }?.async { log.append("after the test") }
    XCTAssertEqual(log.all, ["after the test"])
  }

  // MARK: Races

  func testOutsideWorkArrivingAsAWaitGoesIdleIsNeverLost() throws {
    let recorder = try runSuites([Suite("Races") {
      Test("arrives from another thread") { t in
        let done = t.expectation("done")
        t.background.async {}
        DispatchQueue.global().async { t.main.async { done.fulfill() } }
        try t.wait(for: done, timeout: .seconds(30))
      }
      Test("arrives from another thread, async") { t async throws in
        let done = t.expectation("done")
        DispatchQueue.global().async { t.background.async { done.fulfill() } }
        try await t.wait(for: done, timeout: .seconds(30))
      }
    }]) {
      $0.waiters = .named("scheduled")
      $0.repetitions = 300
    }
    XCTAssertEqual(recorder.results.count, 600)
    XCTAssertEqual(recorder.results.filter { $0.result.verdict != .passed }.map { "\($0.test): \($0.result.issues)" }, [])
    let slowest = recorder.results.map(\.duration).max() ?? 0
    XCTAssertLessThan(slowest, 5, "a wake-up was lost and the wait sat out its quiet period or timeout")
  }

  func testASleepCancelledAtAnyMomentEndsWithCancellation() throws {
    let outcomes = Mutex<[String]>([])
    let recorder = try runSuites([Suite("Races") {
      Test("cancelled sleeper") { t async throws in
        let clock = t.clock
        let sleeper = Task { () -> String in
          do {
            try await clock.sleep(for: .seconds(10))  // virtual time under test: no real sleep
            return "woke"
          } catch is CancellationError {
            return "cancelled"
          } catch {
            return "\(error)"
          }
        }
        if Bool.random() { await Task.yield() }
        sleeper.cancel()
        let outcome = await sleeper.value
        outcomes.withLock { $0.append(outcome) }
      }
    }]) {
      $0.waiters = .named("scheduled")
      $0.repetitions = 300
      $0.timeLimit = .seconds(10)
    }
    XCTAssertEqual(recorder.results.filter { $0.result.verdict != .passed }.map { "\($0.test): \($0.result.issues)" }, [])
    XCTAssertEqual(outcomes.withLock { $0 }, Array(repeating: "cancelled", count: 300), "a sleep of 10 virtual seconds never wakes on its own")
  }

  // MARK: Helpers

  /// Runs one test under the scheduled strategy and returns its result.
  private func scheduled(_ test: Test, file: StaticString = #filePath, line: UInt = #line) throws -> TestResult {
    try onlyResult(of: [Suite("Scheduled") { test }], file: file, line: line) { $0.waiters = .named("scheduled") }
  }
}

/// Lines appended from any thread.
final class Log: Sendable {
  private let lines = Mutex<[String]>([])
  func append(_ line: String) { lines.withLock { $0.append(line) } }
  var all: [String] { lines.withLock { $0 } }
}

extension TestContext {
  /// The virtual time since the test began, under the scheduled strategy.
  var virtualNow: Duration { (clock as? VirtualClock)?.now.offset ?? .zero }
}
