@testable import AsyncHarness
import Dispatch
import Synchronization
import XCTest

/// A waiter strategy decides the queues and the clock a test gets, and its waits find them
/// again; queues made with `t.queue(_:)` and delayed work behave alike under every kind.
final class TestQueuesTests: XCTestCase {
  func testAStrategySuppliesTheTestsQueuesAndItsWaitsFindThem() throws {
    let made = Log()
    let seenByWait = Log()
    let waiter = LabellingWaiter(made: made, seenByWait: seenByWait)
    let registry = try WaiterRegistry([waiter])
    let recorder = EventRecorder()
    let suite = Suite("Queues", waiter: waiter) {
      Test("uses every queue") { t in
        t.expectEqual(t.main.identity.label, "labelled main")
        t.expectEqual(t.background.identity.label, "labelled background")
        t.expectEqual(t.queue("io").identity.label, "labelled io")
        let done = t.expectation("done")
        t.queue("delivery").asyncAfter(.milliseconds(1)) { done.fulfill() }
        try t.wait(for: done)
      }
    }
    try Runner(suites: [suite], registry: registry, reporters: [recorder]).run()
    XCTAssertEqual(recorder.results.map(\.result.verdict), [.passed], "\(recorder.results.map(\.result.issues))")
    XCTAssertEqual(made.all, ["background", "io", "delivery"])
    XCTAssertEqual(seenByWait.all, ["labelled main"], "the wait found the queues the strategy made")
  }

  func testAQueueTheTestMakesIsNamedInADeadlockUnderEveryKindOfQueue() throws {
    for waiter in ["synchronous", "semaphore"] {
      let result = try onlyResult(of: [Suite("Deadlocks") {
        Test("io onto itself") { t in
          let io = t.queue("io")
          io.sync { t.background.sync { io.sync {} } }
        }
      }]) { $0.waiters = .named(waiter) }
      XCTAssertEqual(result.issues.filter { $0.kind == .deadlock }.map(\.message), [
        "Deadlock: synchronous dispatch onto \"io\" from \"background\" while \"io\" is waiting for it (main → io → background → io)",
      ], waiter)
    }
  }

  func testDelayedWorkRunsOnItsQueueAfterItsDelay() throws {
    let recorder = try runSuites([Suite("Delayed") {
      Test("after 30 ms") { t in
        let io = t.queue("io")
        let ran = t.expectation("ran")
        let start = ContinuousClock().now
        let waited = Mutex<Duration?>(nil)
        io.asyncAfter(.milliseconds(30)) {
          waited.withLock { $0 = start.duration(to: ContinuousClock().now) }
          t.expect(io.isCurrent, "delayed work runs on its queue")
          ran.fulfill()
        }
        try t.wait(for: ran)
        let delay = try t.require(waited.withLock { $0 })
        t.expect(delay >= .milliseconds(30), "ran after \(delay)")
      }
    }]) { $0.waiters = .named("semaphore") }
    XCTAssertEqual(recorder.results.map(\.result.verdict), [.passed], "\(recorder.results.map(\.result.issues))")
  }

  func testDelayedWorkOnInlineQueuesWaitsInRealTimeAndTheWaitSaysItFellBack() throws {
    let result = try onlyResult(of: [Suite("Delayed") {
      Test("inline") { t in
        let ran = t.expectation("ran")
        let start = ContinuousClock().now
        t.main.asyncAfter(.milliseconds(30)) {
          t.expect(start.duration(to: ContinuousClock().now) >= .milliseconds(30), "ran before its delay")
          t.expect(t.main.isCurrent, "delayed work runs on its queue")
          ran.fulfill()
        }
        try t.wait(for: ran)
      }
    }]) { $0.waiters = .named("synchronous") }
    XCTAssertEqual(result.verdict, .passed, "\(result.issues)")
    XCTAssertEqual(result.issues.map(\.kind), [.warning])
  }

  func testAQueueFromOutsideTheHarnessGetsDelayedWorkThroughItsAsync() {
    let queue = ForeignQueue()
    let ran = expectation(description: "ran")
    let start = ContinuousClock().now
    queue.asyncAfter(.milliseconds(20)) {
      XCTAssertGreaterThanOrEqual(start.duration(to: ContinuousClock().now), .milliseconds(20))
      ran.fulfill()
    }
    wait(for: [ran], timeout: 5)
    XCTAssertEqual(queue.calls.value, 1, "the work went through async(_:)")
  }

  func testTheClockIsTheContinuousClockUnderRealAndInlineQueues() throws {
    let recorder = try runSuites([Suite("Clock") {
      Test("real") { t in t.expect(t.clock is ContinuousClock, "\(type(of: t.clock))") }
    }]) { $0.waiters = .named("expectation") }
    let inline = try runSuites([Suite("Clock") {
      Test("inline") { t in t.expect(t.clock is ContinuousClock, "\(type(of: t.clock))") }
    }]) { $0.waiters = .named("synchronous") }
    XCTAssertEqual((recorder.results + inline.results).map(\.result.verdict), [.passed, .passed])
  }
}

/// A strategy whose queues run work inline and are labelled `labelled …`; it records the
/// labels it was asked for and what its waits found.
private struct LabellingWaiter: Waiter {
  let name = "labelling"
  let made: Log
  let seenByWait: Log

  func makeQueues(for test: QueueSetup) -> any TestQueues {
    LabelledQueues(made: made)
  }

  func block(on condition: WaitCondition, until deadline: ContinuousClock.Instant) {
    if let queues = condition.queues { seenByWait.append(queues.main.identity.label) }
    ExpectationWaiter().block(on: condition, until: deadline)
  }
}

private struct LabelledQueues: TestQueues {
  let made: Log
  var main: any Dispatching { SyncQueue(label: "labelled main") }
  var clock: any Clock<Duration> { ContinuousClock() }

  func makeQueue(label: String) -> any Dispatching {
    made.append(label)
    return SyncQueue(label: "labelled \(label)")
  }
}

/// A `Dispatching` queue from outside the harness: it implements only `async` and `sync`.
private struct ForeignQueue: Dispatching {
  let identity = QueueIdentity(label: "foreign")
  let calls = Shared()

  final class Shared: Sendable {
    private let count = Atomic<Int>(0)
    func add() { count.add(1, ordering: .releasing) }
    var value: Int { count.load(ordering: .acquiring) }
  }

  func async(_ work: @escaping @Sendable () -> Void) {
    calls.add()
    DispatchQueue.global().async(execute: work)
  }

  func sync<T>(_ work: () throws -> T) rethrows -> T { try work() }
}
