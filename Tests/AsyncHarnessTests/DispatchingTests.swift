import AsyncHarness
import Dispatch
import XCTest

/// Synchronous dispatch cycles are reported as issues naming the queues, never hang.
final class DispatchingTests: XCTestCase {
  private func deadlockMessages(waiter: String, _ body: @escaping @Sendable (TestContext) throws -> Void) throws -> [String] {
    let result = try onlyResult(of: [Suite("Deadlocks") { Test("cycle", body: body) }]) {
      $0.waiters = .named(waiter)
    }
    XCTAssertEqual(result.verdict, .errored)
    return result.issues.filter { $0.kind == .deadlock }.map(\.message)
  }

  func testMainToBackgroundToMainInlineAndOnRealQueues() throws {
    for waiter in ["synchronous", "semaphore"] {
      let messages = try deadlockMessages(waiter: waiter) { t in
        t.background.sync { t.main.sync {} }
      }
      XCTAssertEqual(messages, [
        "Deadlock: synchronous dispatch onto \"main\" from \"background\" while \"main\" is waiting for it (main → background → main)",
      ], waiter)
    }
  }

  func testSyncOntoItself() throws {
    let messages = try deadlockMessages(waiter: "synchronous") { t in
      t.background.async { t.background.sync {} }
    }
    XCTAssertEqual(messages, [
      "Deadlock: synchronous dispatch onto \"background\" from \"background\" while \"background\" is waiting for it (background → background)",
    ])
  }

  func testWorkStillRunsAfterACycleIsReported() throws {
    let result = try onlyResult(of: [Suite("Deadlocks") {
      Test("cycle") { t in
        let value = t.background.sync { t.main.sync { 42 } }
        t.expect(value == 42)
      }
    }])
    XCTAssertEqual(result.issues.map(\.kind), [.deadlock])
  }

  func testNoCycleNoIssue() throws {
    let recorder = try runSuites([Suite("Deadlocks") {
      Test("background then main, asynchronously") { t in
        let done = t.expectation("delivered")
        t.background.async { t.main.async { done.fulfill() } }
        try t.wait(for: done)
        t.expect(t.background.sync { 1 } == 1)
      }
    }], configure: { $0.waiters = .all })
    XCTAssertEqual(recorder.results.map(\.result.verdict), Array(repeating: .passed, count: WaiterRegistry.builtIn.names.count))
    XCTAssertEqual(recorder.results.flatMap(\.result.issues), [])
  }

  func testSyncQueueRunsWorkInline() {
    let queue = SyncQueue(label: "inline")
    var log: [Int] = []
    queue.sync { log.append(1) }
    XCTAssertEqual(log, [1])
    XCTAssertEqual(queue.identity.label, "inline")
  }

  func testIsCurrentTellsWhichQueueRunsTheWork() throws {
    let recorder = try runSuites([Suite("Current") {
      Test("queues know themselves") { t in
        let done = t.expectation("checked")
        t.expect(t.main.isCurrent, "the test body runs on the main queue")
        t.expect(!t.background.isCurrent, "the test body is not on the background queue")
        t.background.async {
          t.expect(t.background.isCurrent, "background work runs on the background queue")
          t.expect(!t.main.isCurrent, "background work is not on the main queue")
          t.main.async {
            t.expect(t.main.isCurrent, "main work runs on the main queue")
            done.fulfill()
          }
        }
        try t.wait(for: done)
      }
    }]) { $0.waiters = .all }
    XCTAssertEqual(recorder.results.map(\.result.verdict), Array(repeating: .passed, count: WaiterRegistry.builtIn.names.count))
    XCTAssertEqual(recorder.results.flatMap(\.result.issues).filter(\.isFailure), [])
  }
}
