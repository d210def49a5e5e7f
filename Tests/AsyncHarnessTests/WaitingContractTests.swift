@testable import AsyncHarness
import Foundation
import Synchronization
import XCTest

/// The promises of the waiting contract, each under every built-in strategy, with the
/// exact message a user reads and the line it points at.
final class WaitingContractTests: XCTestCase {
  // MARK: Fail fast is scoped to the wait

  func testACallbackFailureThenFulfillmentStopsTheTestAtTheWait() throws {
    let expectLine = #line + 5
    let results = try everyStrategy(Suite("FailFast") {
      Test("fails then fulfills") { t in
        let done = t.expectation("done")
        t.background.async {
          t.expect(false, "the callback saw a wrong value")
          done.fulfill()
        }
        try t.wait(for: done)
        t.fail("ran after the wait")
      }
    })
    for (waiter, result) in results {
      XCTAssertEqual(result.verdict, .failed, waiter)
      XCTAssertEqual(failures(result), ["Expectation failed: the callback saw a wrong value (Tests/AsyncHarnessTests/WaitingContractTests.swift:\(expectLine))"], waiter)
    }
  }

  func testASoftFailureRecordedByTheBodyLetsTheNextWaitWait() throws {
    let firstLine = #line + 3
    let results = try everyStrategy(Suite("FailFast") {
      Test("soft failure, then a wait") { t in
        t.expect(false, "soft")
        let done = t.expectation("done")
        t.background.async { done.fulfill() }
        try t.wait(for: done)
        t.expect(false, "after the wait")
      }
    })
    for (waiter, result) in results {
      XCTAssertEqual(failures(result), ["Expectation failed: soft (Tests/AsyncHarnessTests/WaitingContractTests.swift:\(firstLine))",
                                        "Expectation failed: after the wait (Tests/AsyncHarnessTests/WaitingContractTests.swift:\(firstLine + 4))"], waiter)
    }
  }

  func testAFailureInATaskTheBodyStartedEndsTheNextWaitAtOnce() throws {
    let line = #line + 4
    let results = try everyStrategy(Suite("FailFast") {
      Test("async body") { t async throws in
        let never = t.expectation("never fulfilled")
        _ = await Task { t.expect(false, "the task saw a wrong value") }.value
        try await t.wait(for: never, timeout: .seconds(5))
        t.fail("ran after the wait")
      }
      Test("blocking body") { t in
        let never = t.expectation("never fulfilled")
        let done = DispatchSemaphore(value: 0)
        Task {
          t.expect(false, "the task saw a wrong value")
          done.signal()
        }
        done.wait()
        try t.wait(for: never, timeout: .seconds(5))
        t.fail("ran after the wait")
      }
    })
    for (waiter, result) in results {
      let taskLine = result.issues.first?.sourceLocation?.line == line ? line : line + 8
      XCTAssertEqual(failures(result), [
        "Expectation failed: the task saw a wrong value (Tests/AsyncHarnessTests/WaitingContractTests.swift:\(taskLine))",
      ], waiter)
    }
  }

  // MARK: Unwaited expectations

  func testAnExpectationNoWaitCoveredFailsTheTestAtItsCreation() throws {
    let createdLine = #line + 3
    let results = try everyStrategy(Suite("Unwaited") {
      Test("forgets to wait") { t in
        let first = t.expectation("saved")
        _ = t.expectation("shown")
        let covered = t.expectation("covered")
        first.fulfill()
        covered.fulfill()
        try t.wait(for: covered)
      }
    })
    for (waiter, result) in results {
      XCTAssertEqual(result.verdict, .failed, waiter)
      XCTAssertEqual(failures(result), [
        "Failed due to unwaited expectations \"saved\" created at Tests/AsyncHarnessTests/WaitingContractTests.swift:\(createdLine), \"shown\" created at Tests/AsyncHarnessTests/WaitingContractTests.swift:\(createdLine + 1) (Tests/AsyncHarnessTests/WaitingContractTests.swift:\(createdLine))",
      ], waiter)
    }
  }

  func testOptedOutStoppedAndResultCoveredExpectationsAreNotUnwaited() throws {
    let results = try everyStrategy(Suite("Unwaited") {
      Test("opts out") { t in _ = t.expectation("only counted", requiresWait: false) }
      Test("covered by a result wait") { t in
        let maybe = t.expectation("maybe")
        _ = t.result(waitingFor: [maybe], timeout: .milliseconds(5))
      }
      Test("stopped before its wait") { t in
        _ = t.expectation("never reached")
        try t.require(false, "stops here")
      }
    })
    for (waiter, result) in results {
      XCTAssertTrue(failures(result).allSatisfy { !$0.contains("unwaited") }, "\(waiter): \(result.issues)")
    }
    XCTAssertEqual(Set(results.filter { $0.1.verdict == .passed }.map(\.0)).count, WaiterRegistry.builtIn.names.count)
  }

  func testSingularWordingAndAsyncBodies() throws {
    let createdLine = #line + 3
    let results = try everyStrategy(Suite("Unwaited") {
      Test("async, one forgotten") { t async throws in
        _ = t.expectation("loaded")
      }
    })
    for (waiter, result) in results {
      XCTAssertEqual(failures(result), [
        "Failed due to unwaited expectation \"loaded\" created at Tests/AsyncHarnessTests/WaitingContractTests.swift:\(createdLine) (Tests/AsyncHarnessTests/WaitingContractTests.swift:\(createdLine))",
      ], waiter)
    }
  }

  // MARK: Order and inverted failures point at the fulfill() call

  func testInvertedFailurePointsAtTheFulfillmentAndNamesTheWait() throws {
    let line = #line + 3
    let results = try everyStrategy(Suite("Attribution") {
      Test("inverted") { t in
        let never = t.expectation("must not happen", isInverted: true)
        never.fulfill()
        try t.wait(for: never, timeout: .seconds(5))
      }
    })
    for (waiter, result) in results {
      XCTAssertEqual(failures(result), [
        "Fulfilled inverted expectation \"must not happen\" created at Tests/AsyncHarnessTests/WaitingContractTests.swift:\(line) (the wait at Tests/AsyncHarnessTests/WaitingContractTests.swift:\(line + 2)) (Tests/AsyncHarnessTests/WaitingContractTests.swift:\(line + 1))",
      ], waiter)
    }
  }

  func testOrderFailurePointsAtTheEarlyFulfillmentAndNamesTheWait() throws {
    let line = #line + 5
    let results = try everyStrategy(Suite("Attribution") {
      Test("order") { t in
        let first = t.expectation("first")
        let second = t.expectation("second")
        t.background.async { second.fulfill() }
        t.background.async { first.fulfill() }
        try t.wait(for: [first, second], enforceOrder: true)
      }
    })
    for (waiter, result) in results {
      XCTAssertEqual(failures(result), [
        "Failed due to expectation fulfilled in incorrect order: requires \"first\", actually fulfilled \"second\" (the wait at Tests/AsyncHarnessTests/WaitingContractTests.swift:\(line + 2)) (Tests/AsyncHarnessTests/WaitingContractTests.swift:\(line))",
      ], waiter)
    }
  }

  /// One block fulfils two expectations in order while the test waits for both with the
  /// order enforced: a wait must never read the later fulfilment without the earlier one
  /// that happened first. Each strategy makes thousands of such waits, blocking and async,
  /// and the whole run is repeated; before the order check took a consistent view, this
  /// failed under every real-time strategy.
  func testExpectationsFulfilledInOrderByOneBlockAreNeverJudgedOutOfOrder() throws {
    let waitsPerTest = 4_000
    let rounds = 3
    for round in 1...rounds {
      let results = try everyStrategy(Suite("InOrder") {
        Test("blocking") { t in
          for _ in 0..<waitsPerTest {
            let first = t.expectation("expectation1")
            let second = t.expectation("expectation2")
            t.background.async { first.fulfill(); second.fulfill() }
            try t.wait(for: [first, second], enforceOrder: true)
          }
        }
        Test("async") { t async throws in
          for _ in 0..<waitsPerTest {
            let first = t.expectation("expectation1")
            let second = t.expectation("expectation2")
            t.background.async { first.fulfill(); second.fulfill() }
            try await t.wait(for: [first, second], enforceOrder: true)
          }
        }
      })
      XCTAssertEqual(results.count, 2 * WaiterRegistry.builtIn.names.count)
      for (waiter, result) in results {
        XCTAssertEqual(failures(result), [], "\(waiter), round \(round) of \(rounds)")
      }
    }
  }

  // MARK: Notification expectations

  func testNotificationExpectationHoldsItsObjectAndMatchesItByIdentity() throws {
    let name = Notification.Name("WaitingContractTests.identity")
    let line = #line + 4
    let results = try everyStrategy(Suite("Notifications") {
      Test("identity") { t in
        let released = WeakBox()
        let saved = t.expectation(forNotification: name, object: released.make("the store"))
        XCTAssertNotNil(released.object, "the expectation must hold its object")
        NotificationCenter.default.post(name: name, object: NamedObject("the store"))
        NotificationCenter.default.post(name: name, object: nil)
        try t.wait(for: saved, timeout: .milliseconds(30))
      }
    })
    for (waiter, result) in results {
      XCTAssertEqual(failures(result), [
        "Exceeded timeout of 0.03 seconds, with unfulfilled expectations: \"Expect notification 'WaitingContractTests.identity' from the store\" created at Tests/AsyncHarnessTests/WaitingContractTests.swift:\(line) (Tests/AsyncHarnessTests/WaitingContractTests.swift:\(line + 4))",
      ], waiter)
    }
  }

  func testNotificationObserverStopsWithItsWaitAndExtraPostsAreNoIssue() throws {
    let name = Notification.Name("WaitingContractTests.stops")
    let afterWait = Mutex<[String: Int]>([:])
    let results = try everyStrategy(Suite("Notifications") {
      Test("stops") { t in
        let store = NamedObject("store")
        let seenAfterWait = Atomic<Int>(0)
        let waitEnded = Atomic<Bool>(false)
        let saved = t.expectation(forNotification: name, object: store, count: 2, where: { _ in
          if waitEnded.load(ordering: .acquiring) { seenAfterWait.add(1, ordering: .relaxed) }
          return true
        })
        for _ in 0..<3 { NotificationCenter.default.post(name: name, object: store) }
        try t.wait(for: saved)
        waitEnded.store(true, ordering: .releasing)
        NotificationCenter.default.post(name: name, object: store)
        afterWait.withLock { $0[t.waiter.name] = seenAfterWait.load(ordering: .relaxed) }
      }
    })
    for (waiter, result) in results {
      XCTAssertEqual(result.verdict, .passed, waiter)
      XCTAssertEqual(failures(result), [], waiter)
      XCTAssertEqual(afterWait.withLock { $0[waiter] }, 0, "\(waiter): the handler ran for a post after its wait")
    }
  }

  // MARK: Probes

  func testAProbeThatHeldAndChangedBackHasBeenMet() throws {
    let results = try everyStrategy(Suite("Probes") {
      Test("flips back") { t in
        let evaluations = Atomic<Int>(0)
        try t.wait(until: { evaluations.add(1, ordering: .relaxed).newValue == 2 })
      }
    })
    for (waiter, result) in results {
      XCTAssertEqual(result.verdict, .passed, "\(waiter): \(result.issues)")
    }
  }

  func testProbeTimeoutsSayWhatWasAwaited() throws {
    let line = #line + 3
    let results = try everyStrategy(Suite("Probes") {
      Test("described") { t in
        try t.wait(until: "model loaded", timeout: .milliseconds(20)) { false }
      }
      Test("described async") { t async throws in
        try await t.wait(until: "model loaded", timeout: .milliseconds(20)) { false }
      }
    })
    for (waiter, result) in results {
      let line = result.issues.first?.sourceLocation?.line == line ? line : line + 3
      XCTAssertEqual(failures(result), [
        "Exceeded timeout of 0.02 seconds waiting until \"model loaded\" (Tests/AsyncHarnessTests/WaitingContractTests.swift:\(line))",
      ], waiter)
    }
  }

  // MARK: Decided waits

  func testDecidedWaitsSucceedInsideAMainQueueCallout() throws {
    let results = try everyStrategy(Suite("Decided") {
      Test("in a callout") { t in
        let outer = t.expectation("outer")
        DispatchQueue.main.async {
          let never = t.expectation("must not happen", isInverted: true)
          let done = t.expectation("done")
          done.fulfill()
          do {
            try t.wait(for: never, timeout: .zero)
            try t.wait(for: done)
          } catch {
            return
          }
          outer.fulfill()
        }
        try t.wait(for: outer)
      }
    })
    for (waiter, result) in results {
      XCTAssertEqual(result.verdict, .passed, "\(waiter): \(result.issues)")
    }
  }

  // MARK: Time limits

  func testATimeLimitNeverTurnsIntoAPass() throws {
    let recorder = try runSuites([Suite("Limits") {
      Test("cut") { t async throws in
        let never = t.expectation("never fulfilled")
        try await t.wait(for: never, timeout: .seconds(60))
      }
    }]) {
      $0.waiters = .all
      $0.repetitions = 200
      $0.timeLimit = .milliseconds(5)
    }
    XCTAssertEqual(recorder.results.count, 200 * WaiterRegistry.builtIn.names.count)
    let passed = recorder.results.filter { $0.result.verdict != .errored }
    XCTAssertEqual(passed.map { "\($0.test): \($0.result.verdict)" }, [])
    for (test, result, _) in recorder.results {
      XCTAssertEqual(result.issues.filter(\.isFailure).map(\.kind), [.timeLimitExceeded], "\(test)")
      XCTAssertTrue(result.issues.first(where: \.isFailure)?.message.hasPrefix("Test exceeded its time limit of 0.005 seconds ") == true, "\(test)")
      XCTAssertEqual(recorder.lateIssues(of: test), [], "\(test)")
    }
  }

  // MARK: Issues from queues with no owner

  func testADispatchCycleOnUserMadeQueuesFailsTheRunningTest() throws {
    let results = try everyStrategy(Suite("Cycles") {
      Test("A → B → C → A") { t in
        let a = AsyncQueue(DispatchQueue(label: "cycle.A"), label: "A")
        let b = AsyncQueue(DispatchQueue(label: "cycle.B"), label: "B")
        let c = AsyncQueue(DispatchQueue(label: "cycle.C"), label: "C")
        let done = t.expectation("done")
        a.async {
          b.sync { c.sync { a.sync {} } }
          done.fulfill()
        }
        try t.wait(for: done)
      }
    })
    for (waiter, result) in results {
      XCTAssertEqual(result.verdict, .errored, waiter)
      XCTAssertEqual(result.issues.filter(\.isFailure).map(\.description), [
        "Deadlock: synchronous dispatch onto \"A\" from \"C\" while \"A\" is waiting for it (A → B → C → A)",
      ], waiter)
    }
  }

  // MARK: Blocking waits on Swift concurrency threads

  func testABlockingWaitOnACooperativeThreadSaysToAwait() throws {
    let results = try everyStrategy(Suite("Pool") {
      Test("blocks the pool") { t async throws in
        let done = t.expectation("done")
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { done.fulfill() }
        try blockingWait(t, done)
      }
    })
    for (waiter, result) in results {
      XCTAssertEqual(result.verdict, .errored, waiter)
      XCTAssertEqual(failures(result), [
        "A blocking wait cannot run on a Swift concurrency thread: it would hold a thread of the cooperative pool that the awaited work may need. Use `try await t.wait(...)` instead (Tests/AsyncHarnessTests/WaitingContractTests.swift:\(blockingWaitLine))",
      ], waiter)
    }
  }

  // MARK: Teardown blocks

  func testTeardownBlocksRunInReverseBeforeTheSuiteTearDownWithTheirOwnLines() throws {
    let log = Mutex<[String]>([])
    let line = #line + 3
    let results = try everyStrategy(Suite("Teardown", tearDown: { _ in log.withLock { $0.append("suite") } }) {
      Test("blocking") { t in
        t.addTeardown { log.withLock { $0.append("first") } }
        t.addTeardown { throw Broken() }
        t.addTeardown { t.expect(false, "checked in teardown") }
        t.addTeardown { () async throws in log.withLock { $0.append("async") } }
        try t.require(false, "the body stops")
      }
    })
    for (waiter, result) in results {
      XCTAssertEqual(result.verdict, .errored, waiter)
      XCTAssertEqual(result.issues.map(\.description), [
        "Expectation failed: the body stops (Tests/AsyncHarnessTests/WaitingContractTests.swift:\(line + 4))",
        "Expectation failed: checked in teardown (Tests/AsyncHarnessTests/WaitingContractTests.swift:\(line + 2))",
        "Caught error: the server did not stop (Tests/AsyncHarnessTests/WaitingContractTests.swift:\(line + 1))",
      ], waiter)
    }
    XCTAssertEqual(log.withLock { $0 },
                   Array(repeating: ["async", "first", "suite"], count: results.count).flatMap { $0 })
  }

  func testTeardownBlocksRunAfterAnAsyncBody() throws {
    let log = Mutex<[String]>([])
    _ = try everyStrategy(Suite("Teardown") {
      Test("async") { t async throws in
        t.addTeardown { log.withLock { $0.append("blocking") } }
        t.addTeardown { () async throws in
          // Suspends, so the blocking block after it must wait for it to resume and finish.
          await Task.yield()
          log.withLock { $0.append("async") }
        }
        log.withLock { $0.append("body") }
      }
    })
    XCTAssertEqual(log.withLock { $0 },
                   Array(repeating: ["body", "async", "blocking"], count: WaiterRegistry.builtIn.names.count).flatMap { $0 })
  }

  // MARK: Waits that report

  func testResultWaitsReportEachOutcomeAndRecordNothing() throws {
    let outcomes = Mutex<[String: [WaitResult]]>([:])
    let results = try everyStrategy(Suite("Results") {
      Test("outcomes") { t in
        var seen: [WaitResult] = []
        let done = t.expectation("done")
        t.background.async { done.fulfill() }
        seen.append(t.result(waitingFor: [done]))
        seen.append(t.result(waitingFor: [t.expectation("never")], timeout: .milliseconds(5)))
        let first = t.expectation("first")
        let second = t.expectation("second")
        second.fulfill()
        first.fulfill()
        seen.append(t.result(waitingFor: [first, second], enforceOrder: true))
        let inverted = t.expectation("inverted", isInverted: true)
        inverted.fulfill()
        seen.append(t.result(waitingFor: [inverted], timeout: .seconds(5)))
        outcomes.withLock { $0[t.waiter.name] = seen }
      }
      Test("async outcomes") { t async throws in
        let never = t.expectation("never")
        let seen = await t.result(waitingFor: [never], timeout: .milliseconds(5))
        t.expect(seen == .timedOut, "got \(seen)")
      }
    })
    for (waiter, result) in results {
      XCTAssertEqual(result.verdict, .passed, waiter)
      XCTAssertEqual(result.issues.filter(\.isFailure), [], waiter)
    }
    for waiter in WaiterRegistry.builtIn.names {
      XCTAssertEqual(outcomes.withLock { $0[waiter] }, [.completed, .timedOut, .incorrectOrder, .invertedFulfillment], waiter)
    }
  }

  func testAResultWaitMisusedIsInterruptedAndRecorded() throws {
    let line = #line + 7
    let seen = Mutex<WaitResult?>(nil)
    let result = try onlyResult(of: [Suite("Results") {
      Test("twice") { t in
        let done = t.expectation("done")
        done.fulfill()
        try t.wait(for: done)
        seen.withLock { $0 = t.result(waitingFor: [done]) }
      }
    }])
    XCTAssertEqual(seen.withLock { $0 }, .interrupted)
    XCTAssertEqual(result.verdict, .errored)
    XCTAssertEqual(result.issues.first?.sourceLocation?.line, line)
  }

  // MARK: Helpers

  /// Runs the suite under every built-in strategy and returns each test's result with its
  /// waiter's name.
  private func everyStrategy(_ suite: Suite) throws -> [(String, TestResult)] {
    try runSuites([suite]) { $0.waiters = .all }.results.map { ($0.test.host, $0.result) }
  }

  /// The failing issues, as `message (File.swift:LINE)`.
  private func failures(_ result: TestResult) -> [String] {
    result.issues.filter(\.isFailure).map(\.description)
  }
}

/// Where ``blockingWait(_:_:)`` makes its wait.
private let blockingWaitLine = #line + 4

/// Makes a blocking wait from synchronous code, as a closure inside `async` code would.
private func blockingWait(_ t: TestContext, _ expectation: Expectation) throws {
  try t.wait(for: expectation)
}

private struct Broken: Error, CustomStringConvertible {
  var description: String { "the server did not stop" }
}

/// An object whose description names it.
private final class NamedObject: Sendable, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

/// Makes an object that only its receiver keeps alive, and watches it weakly.
private final class WeakBox: @unchecked Sendable {
  weak var object: NamedObject?
  func make(_ name: String) -> NamedObject {
    let made = NamedObject(name)
    object = made
    return made
  }
}
