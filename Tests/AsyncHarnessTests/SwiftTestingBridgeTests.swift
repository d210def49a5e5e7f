import AsyncHarness
import AsyncHarnessTesting
import Dispatch
import Synchronization
import Testing

/// The Swift Testing bridge: the harness's waits inside `@Test` functions, issues recorded
/// as Swift Testing issues.
@Suite struct SwiftTestingBridgeTests {
  @Test(.waiter(.semaphore)) func traitChoosesTheWaiter() async {
    let result = await withHarness { t in
      #expect(t.waiter.name == "semaphore")
      let done = t.expectation("done")
      DispatchQueue.global().async { done.fulfill() }
      try await t.wait(for: done)
    }
    #expect(result.verdict == .passed)
    #expect(result.issues.isEmpty)
  }

  @Test func harnessFailuresBecomeSwiftTestingIssues() async {
    await withKnownIssue("the harness records its failure as a Swift Testing issue") {
      let result = await withHarness(waiter: .probePoller) { t in
        try await t.wait(until: { false }, timeout: .milliseconds(20))
      }
      #expect(result.verdict == .failed)
      #expect(result.issues.map(\.message) == ["Exceeded timeout of 0.02 seconds waiting until the condition held"])
    } matching: { issue in
      issue.comments.map(\.rawValue) == ["Exceeded timeout of 0.02 seconds waiting until the condition held"]
    }
  }

  /// Parallel cases on the cooperative pool: a blocking wait there is reported at once as
  /// misuse saying to `await`, instead of holding a pool thread until every case times out.
  @Test(arguments: 0..<8) func blockingWaitsOnThePoolSayToAwait(_ index: Int) async {
    let message = "A blocking wait cannot run on a Swift concurrency thread: it would hold a thread of the cooperative pool that the awaited work may need. Use `try await t.wait(...)` instead"
    await withKnownIssue("a blocking wait in async code is misuse") {
      let result = await withHarness(waiter: .semaphore, timeout: .seconds(30)) { t in
        let done = t.expectation("done \(index)")
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { done.fulfill() }
        try blockingWait(t, done)
      }
      #expect(result.verdict == .errored)
      #expect(result.issues.map(\.message) == [message])
    } matching: { issue in
      issue.comments.map(\.rawValue) == [message]
    }
  }

  @Test func teardownBlocksAndUnwaitedExpectationsInsideWithHarness() async {
    let log = Mutex<[String]>([])
    await withKnownIssue("the forgotten expectation fails the test") {
      let result = await withHarness { t in
        t.addTeardown { log.withLock { $0.append("blocking") } }
        t.addTeardown { () async throws in log.withLock { $0.append("async") } }
        _ = t.expectation("forgotten")
      }
      #expect(result.verdict == .failed)
      #expect(result.issues.map(\.message).first?.hasPrefix("Failed due to unwaited expectation \"forgotten\" created at Tests/AsyncHarnessTests/SwiftTestingBridgeTests.swift:") == true)
    } matching: { issue in
      issue.comments.first?.rawValue.hasPrefix("Failed due to unwaited expectation") == true
    }
    #expect(log.withLock { $0 } == ["async", "blocking"])
  }

  /// A time limit ends a wait that would outlast it, as under the runner: the test errors at
  /// the limit, long before the wait's own timeout.
  @Test func aWaitEndsAtTheTimeLimit() async {
    let message = "Test exceeded its time limit of 0.1 seconds during the wait for \"never\""
    await withKnownIssue("the time limit errors the test") {
      let start = ContinuousClock.now
      let result = await withHarness(waiter: .expectation, timeLimit: .milliseconds(100)) { t in
        let never = t.expectation("never")
        try await t.wait(for: never, timeout: .seconds(30))
      }
      #expect(result.verdict == .errored)
      #expect(result.issues.map(\.message) == [message])
      #expect(start.duration(to: .now) < .seconds(10))
    } matching: { issue in
      issue.comments.map(\.rawValue) == [message]
    }
  }

  /// A body that runs on past its limit without waiting errors when it returns.
  @Test func aBodyPastItsLimitErrors() async {
    let message = "Test exceeded its time limit of 0.05 seconds in its body, which ran on past it"
    await withKnownIssue("the time limit errors the test") {
      let result = await withHarness(timeLimit: .milliseconds(50)) { _ in
        let end = ContinuousClock.now.advanced(by: .milliseconds(80))
        while ContinuousClock.now < end {}
      }
      #expect(result.verdict == .errored)
      #expect(result.issues.map(\.message) == [message])
    } matching: { issue in
      issue.comments.map(\.rawValue) == [message]
    }
  }

  /// Within its limit, a test's result is untouched.
  @Test func aBodyWithinItsLimitPasses() async {
    let result = await withHarness(timeLimit: .seconds(30)) { t in
      let done = t.expectation("done")
      DispatchQueue.global().async { done.fulfill() }
      try await t.wait(for: done)
    }
    #expect(result.verdict == .passed)
    #expect(result.issues.isEmpty)
  }
}

/// Makes a blocking wait from synchronous code, as a closure inside `async` code would.
private func blockingWait(_ t: AsyncHarness.TestContext, _ expectation: AsyncHarness.Expectation) throws {
  try t.wait(for: expectation)
}

/// The trait on a suite chooses the waiter of every test in it, as the README shows; a
/// test's own trait chooses its own.
@Suite(.waiter(.probePoller)) struct SwiftTestingSuiteWaiterTests {
  @Test func everyTestRunsUnderTheSuitesWaiter() async {
    let result = await withHarness { t in
      #expect(t.waiter.name == "probePoller")
      let done = t.expectation("done")
      DispatchQueue.global().async { done.fulfill() }
      try await t.wait(for: done)
    }
    #expect(result.verdict == .passed)
  }

  @Test(.waiter(.semaphore)) func aTestsOwnTraitChoosesItsWaiter() async {
    await withHarness { t in #expect(t.waiter.name == "semaphore") }
  }
}
