@testable import AsyncHarness
import Foundation
import Synchronization
import XCTest

/// Swift concurrency under the scheduled strategy: the `async` body runs as a task of the
/// schedule, on the driver's thread; the tasks, actors, main-actor jobs, yields and sleeps
/// it reaches join the schedule; sleeps run on virtual time.
final class ConcurrencyScheduleTests: XCTestCase {
  private let file = "Tests/AsyncHarnessTests/ConcurrencyScheduleTests.swift"

  override func setUpWithError() throws {
    try XCTSkipUnless(ConcurrencyCapture.isAvailable, "this toolchain cannot install the harness's executors")
  }

  func testATaskThatSleepsLongerThanTheQuietPeriodThenFulfilsPassesAtItsVirtualDeadline() throws {
    let woke = Log()
    let start = ContinuousClock().now
    let result = try scheduled(Test("sleeps, then fulfils") { t async throws in
      let done = t.expectation("done", expectedFulfillmentCount: 2)
      Task {
        try await Task.sleep(for: .seconds(1))  // virtual time under test: no real sleep
        woke.append("\(t.virtualNow)")
        done.fulfill()
      }
      Task {
        try await ContinuousClock().sleep(for: .seconds(60))
        woke.append("\(t.virtualNow)")
        done.fulfill()
      }
      try await t.wait(for: done, timeout: .seconds(120))
    })
    XCTAssertEqual(result.verdict, .passed, "\(result.issues)")
    XCTAssertEqual(result.issues, [])
    XCTAssertEqual(woke.all, ["1.0 seconds", "60.0 seconds"], "each sleep ends at its virtual deadline")
    // Not a speed target: real sleeps would take a minute.
    XCTAssertLessThan(start.duration(to: ContinuousClock().now), .seconds(10))
  }

  func testEveryKindOfJobRunsInTheSchedule() throws {
    let seen = Log()
    let result = try scheduled(Test("every path") { t async throws in
      @Sendable func note(_ path: String) {
        seen.append("\(path): \(t.isOnTheDriver)")
      }
      note("body")
      await Task { note("task") }.value
      await Task.detached { note("detached") }.value
      await withTaskGroup(of: Void.self) { group in group.addTask { note("child") } }
      async let bound: Void = note("async let")
      await bound
      await Tally().add(note)
      await Task.yield()
      note("after a yield")
      try await Task.sleep(for: .milliseconds(5))
      note("after a sleep")
      await withCheckedContinuation { continuation in
        Task { note("resumer"); continuation.resume() }
      }
      note("after a continuation")
      await MainActor.run {
        seen.append("main actor: \(Thread.isMainThread)")
      }
    })
    XCTAssertEqual(result.verdict, .passed, "\(result.issues)")
    XCTAssertEqual(result.issues, [])
    let paths = ["body", "task", "detached", "child", "async let", "actor", "after a yield", "after a sleep",
                 "resumer", "after a continuation", "main actor"]
    XCTAssertEqual(seen.all, paths.map { "\($0): true" },
                   "each ran on the driver's thread (the main actor's jobs on the main thread)")
  }

  func testOutsideTheScheduledStrategyJobsRunOnSwiftsOwnExecutors() throws {
    let onDriver = Log()
    let result = try onlyResult(of: [Suite("Elsewhere") {
      Test("a task") { t async throws in
        await Task { onDriver.append("\(t.isOnTheDriver)") }.value
      }
    }]) { $0.waiters = .named("expectation") }
    XCTAssertEqual(result.verdict, .passed, "\(result.issues)")
    XCTAssertEqual(onDriver.all, ["false"])
  }

  func testTheSameScheduleGivesTheSameInterleavingAndSeedsGiveDifferentOnes() throws {
    let orders = Log()
    let recorder = try runSuites([Suite("Interleaving") {
      Test("three tasks") { t async throws in
        let key = t.id.schedule ?? ""
        let tasks = (0..<3).map { number in
          Task {
            for step in 0..<3 {
              orders.append("\(key) \(number).\(step)")
              await Task.yield()
            }
          }
        }
        for task in tasks { await task.value }
      }
    }]) {
      $0.waiters = .named("scheduled")
      $0.explorations = 12
      $0.repetitions = 3
    }
    XCTAssertEqual(recorder.results.count, 36)
    XCTAssertEqual(recorder.results.filter { $0.result.verdict != .passed }.count, 0)
    let byToken = Dictionary(grouping: orders.all, by: { String($0.split(separator: " ")[0]) })
      .mapValues { $0.map { String($0.split(separator: " ")[1]) } }
    XCTAssertEqual(byToken.count, 12)
    for (token, order) in byToken {
      XCTAssertEqual(order.count, 27, "three runs of nine steps under \(token)")
      XCTAssertEqual(Array(order[0..<9]), Array(order[9..<18]), token)
      XCTAssertEqual(Array(order[0..<9]), Array(order[18..<27]), token)
    }
    XCTAssertGreaterThan(Set(byToken.values.map { Array($0[0..<9]) }).count, 3, "seeds choose different orders")
  }

  func testACancelledSleepEndsAtOnceInVirtualTime() throws {
    let ended = Log()
    let result = try scheduled(Test("cancels a sleeping task") { t async throws in
      let sleeper = Task {
        do {
          try await Task.sleep(for: .seconds(60))
          ended.append("woke at \(t.virtualNow)")
        } catch {
          ended.append("\(type(of: error)) at \(t.virtualNow)")
        }
      }
      await Task.yield()
      sleeper.cancel()
      await sleeper.value
    })
    XCTAssertEqual(result.verdict, .passed, "\(result.issues)")
    XCTAssertEqual(ended.all, ["CancellationError at 0.0 seconds"])
    XCTAssertEqual(result.issues, [], "nothing is left pending")
  }

  func testATimeoutRacedAgainstWorkEndsAtTheFirstAndLeavesNothingBehindInEverySchedule() throws {
    struct TimedOut: Error {}
    /// Runs `work`, or throws at `timeout`: the race most code writes with a task group.
    @Sendable func withTimeout(_ timeout: Duration, _ work: @escaping @Sendable () async throws -> String) async throws -> String {
      try await withThrowingTaskGroup(of: String.self) { group in
        group.addTask { try await work() }
        group.addTask {
          try await Task.sleep(for: timeout)
          throw TimedOut()
        }
        defer { group.cancelAll() }
        return try await group.next()!
      }
    }
    let outcomes = Log()
    let recorder = try runSuites([Suite("Timeouts") {
      Test("work within, then work past the timeout") { t async throws in
        let quick = try await withTimeout(.seconds(5)) {
          try await Task.sleep(for: .seconds(1))
          return "done"
        }
        outcomes.append("\(quick) at \(t.virtualNow)")
        do {
          _ = try await withTimeout(.seconds(5)) {
            try await Task.sleep(for: .seconds(30))
            return "too late"
          }
        } catch {
          outcomes.append("\(type(of: error)) at \(t.virtualNow)")
        }
      }
    }]) {
      $0.waiters = .named("scheduled")
      $0.explorations = 20
    }
    XCTAssertEqual(recorder.results.count, 20)
    XCTAssertEqual(recorder.results.filter { !$0.result.issues.isEmpty }.map { "\($0.test): \($0.result.issues)" }, [],
                   "no cancelled sleep is left pending")
    XCTAssertEqual(Set(outcomes.all), ["done at 1.0 seconds", "TimedOut at 6.0 seconds"])
  }

  func testABodySuspendedOnWhatNothingCanResumeFailsSayingSo() throws {
    let line = #line + 2
    let start = ContinuousClock().now
    let result = try scheduled(Test("awaits a stream nobody finishes") { t async throws in
      try await Task.sleep(for: .seconds(3_660))
      let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
      for await _ in stream {}  // ends when the harness cancels the body
      continuation.finish()
    })
    XCTAssertEqual(result.verdict, .errored)
    XCTAssertEqual(result.issues.map(\.description), [
      "The async code is suspended and nothing can resume it: no job of the schedule is runnable or due, no harness wait is pending, and no work arrived from outside the schedule in a quiet period of 0.2 seconds; it awaits something nobody will do (a continuation never resumed, a stream never finished, a task that is never cancelled); stopped at 3660 seconds of virtual time (\(file):\(line))",
    ])
    XCTAssertEqual(result.issues.first?.kind, .deadlock)
    XCTAssertLessThan(start.duration(to: ContinuousClock().now), .seconds(10))
  }

  func testJobsStillPendingWhenTheBodyEndsGoBackToSwiftsExecutorsWithAWarning() throws {
    let ranLater = DispatchSemaphore(value: 0)
    let result = try scheduled(Test("leaves a task behind") { _ async throws in
      Task {
        try await Task.sleep(for: .milliseconds(10))
        ranLater.signal()
      }
    })
    XCTAssertEqual(result.verdict, .passed, "\(result.issues)")
    XCTAssertEqual(result.issues.map(\.description), [
      "scheduled waiter: 1 Swift concurrency job was still pending when the test's async code ended (a task it started and did not await, or a sleep not yet due); they went back to Swift's own executors and run outside the schedule",
    ])
    XCTAssertEqual(ranLater.wait(timeout: .now() + 30), .success, "the task ran on after the test")
  }

  func testAJobThatBlocksTheDriverGivesSwiftConcurrencyBackAndTheTestRunsOn() throws {
    let result = try scheduled(Test("waits on a semaphore for a task") { t async throws in
      let signalled = DispatchSemaphore(value: 0)
      let done = t.expectation("done")
      Task {
        signalled.signal()
        done.fulfill()
      }
      signalled.wait()
      try await t.wait(for: done)
    })
    XCTAssertEqual(result.verdict, .passed, "\(result.issues)")
    XCTAssertEqual(result.issues.count, 1, "\(result.issues)")
    let message = try XCTUnwrap(result.issues.first?.message)
    XCTAssertTrue(message.hasPrefix("scheduled waiter: a job of Swift concurrency task #1 (numbered in the order the schedule first saw them; #1 is the test's async code) kept the schedule's thread for "), message)
    XCTAssertTrue(message.hasSuffix(" seconds, longer than the quiet period (it blocks its thread: a semaphore, a lock, a synchronous wait for work of another task); the schedule gave Swift concurrency back to Swift's own executors (1 pending job), so the rest of the test runs in real time, neither ordered nor replayed"), message)
  }

  /// As above, with the task fulfilling a moment after it lets the body go, so that the body
  /// is suspended in its wait by then, 100 times: once the schedule gave Swift concurrency
  /// back, the wait ends and the body ends on Swift's executors, where nothing arrives in the
  /// schedule, so the body's end itself must wake the driver. A lost wake-up parks the drive
  /// until the time limit: the test then lasts its whole limit, though it passed long before.
  func testABodyThatEndsAfterSwiftConcurrencyWasGivenBackEndsTheDriveEveryTime() throws {
    let limit = 1.0  // seconds
    let suite = Suite("Blocks", waiter: ScheduledWaiter(quietPeriod: .milliseconds(20))) {
      for index in 1...100 {
        Test("blocks the driver, round \(index)") { t async throws in
          let signalled = DispatchSemaphore(value: 0)
          let done = t.expectation("done")
          Task {
            signalled.signal()
            // Deliberate: lets the body reach its wait first, the order this test repeats (a round
            // where it does not is only a plain pass).
            try await Task.sleep(for: .milliseconds(2))
            done.fulfill()
          }
          signalled.wait()
          try await t.wait(for: done)
        }
      }
    }
    let results = try runSuites([suite]) { $0.timeLimit = .seconds(limit) }.results
    XCTAssertEqual(results.count, 100)
    XCTAssertEqual(results.filter { $0.result.verdict != .passed }.map { "\($0.test): \($0.result.issues)" }, [])
    let sleptToTheLimit = results.filter { $0.duration >= limit }.map(\.test.name)
    XCTAssertEqual(sleptToTheLimit, [], "the drive went on until the time limit after the body had ended")
  }

  func testTheTimeLimitEndsABodyThatKeepsYielding() throws {
    let result = try onlyResult(of: [Suite("Limits") {
      Test("yields until cancelled") { _ async throws in
        while !Task.isCancelled { await Task.yield() }
      }
    }]) {
      $0.waiters = .named("scheduled")
      $0.timeLimit = .milliseconds(300)
    }
    XCTAssertEqual(result.verdict, .errored)
    XCTAssertEqual(result.issues.map(\.kind), [.warning, .timeLimitExceeded])
    XCTAssertEqual(result.issues.first?.message.hasPrefix("scheduled waiter: 1 Swift concurrency job was still pending"), true,
                   "the yielding task's next job goes back to Swift's executors")
  }

  /// Once work from outside the schedule took part, the driver can no longer tell a stuck
  /// body from one waiting for that work: a body that then awaits what nothing resumes ends
  /// at its time limit, cancelled, instead of never.
  func testABodyWaitingOnNothingAfterOutsideWorkEndsAtItsTimeLimit() throws {
    let result = try onlyResult(of: [Suite("Limits") {
      Test("waits forever after outside work") { _ async throws in
        await withCheckedContinuation { continuation in
          DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { continuation.resume() }
        }
        let never = AsyncStream<Int> { _ in }
        for await _ in never {}
      }
    }]) {
      $0.waiters = .named("scheduled")
      $0.timeLimit = .milliseconds(300)
    }
    XCTAssertEqual(result.verdict, .errored)
    XCTAssertEqual(result.issues.filter(\.isFailure).map(\.kind), [.timeLimitExceeded])
  }

  func testWorkFromOutsideTheScheduleIsNamedWithTheStepItArrivedBefore() throws {
    let line = #line + 1
    let result = try scheduled(resumedFromOutside(afterYields: 0))
    XCTAssertEqual(result.verdict, .passed, "\(result.issues)")
    XCTAssertEqual(result.issues.map(\.description), [
      "scheduled waiter: the async test body at \(file):\(line) depended on work from outside the test's queues (a real DispatchQueue, a thread, a continuation resumed from them), so it fell back to waiting in real time; the schedule neither orders nor replays that work; it first arrived before step 2 of the schedule, so a replay follows this run exactly only up to there (\(file):\(line))",
    ], "step 1 runs the body up to its suspension")
    let later = try scheduled(resumedFromOutside(afterYields: 2))
    let step = later.issues.first.flatMap { $0.message.components(separatedBy: "before step ").last?.prefix { $0.isNumber } }
    XCTAssertGreaterThan(Int(step ?? "") ?? 0, 2, "two yields are steps of their own: \(later.issues)")
  }

  /// A test whose body yields, then awaits a continuation a real queue resumes 20 ms later
  /// (after the body suspended, so the resume enqueues its next job from outside).
  private func resumedFromOutside(afterYields yields: Int, line: Int = #line) -> Test {
    Test("resumed by a real queue after \(yields) yields", line: line, column: 1) { t async throws in
      for _ in 0..<yields { await Task.yield() }
      let value = await withCheckedContinuation { continuation in
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { continuation.resume(returning: 7) }
      }
      t.expectEqual(value, 7)
    }
  }

  func testThousandsOfTasksAllRunAsStepsOfTheSchedule() throws {
    let counted = Log()
    let result = try scheduled(Test("2,000 tasks") { t async throws in
      let total = await withTaskGroup(of: Int.self) { group in
        for number in 1...2_000 {
          group.addTask {
            await Task.yield()
            return number
          }
        }
        return await group.reduce(0, +)
      }
      counted.append("\(total)")
    })
    XCTAssertEqual(result.verdict, .passed, "\(result.issues)")
    XCTAssertEqual(counted.all, ["2001000"])
    XCTAssertGreaterThanOrEqual(result.scheduleTrace?.steps ?? 0, 4_000, "each task's start and its yield are steps")
  }

  // MARK: Races

  func testAResumeFromOutsideTheScheduleIsNeverLost() throws {
    let recorder = try runSuites([Suite("Races") {
      Test("resumed by a real queue") { t async throws in
        let value = await withCheckedContinuation { continuation in
          DispatchQueue.global().async { continuation.resume(returning: 7) }
        }
        t.expectEqual(value, 7)
      }
      Test("a task's job from a real queue") { t async throws in
        let done = t.expectation("done")
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        Task {
          for await _ in stream { done.fulfill() }
        }
        DispatchQueue.global().async { continuation.yield(1) }
        try await t.wait(for: done, timeout: .seconds(30))
        continuation.finish()
      }
    }]) {
      $0.waiters = .named("scheduled")
      $0.repetitions = 300
    }
    XCTAssertEqual(recorder.results.count, 600)
    XCTAssertEqual(recorder.results.filter { $0.result.verdict != .passed }.map { "\($0.test): \($0.result.issues)" }, [])
    let slowest = recorder.results.map(\.duration).max() ?? 0
    XCTAssertLessThan(slowest, 5, "a wake-up was lost and the drive sat out its quiet period or a timeout")
  }

  // MARK: Helpers

  private func scheduled(_ test: Test, file: StaticString = #filePath, line: UInt = #line) throws -> TestResult {
    try onlyResult(of: [Suite("Concurrency") { test }], file: file, line: line) { $0.waiters = .named("scheduled") }
  }
}

/// An actor whose method notes that it ran.
private actor Tally {
  func add(_ note: @Sendable (String) -> Void) { note("actor") }
}

extension TestContext {
  /// Whether the caller runs on the thread driving the test's schedule.
  var isOnTheDriver: Bool { (queues as? ScheduledQueues)?.scheduler.isCallerTheDriver ?? false }
}
