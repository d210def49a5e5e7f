import AsyncHarness
import AsyncHarnessConformance
import XCTest

/// Every built-in strategy keeps the waiter contract.
final class ConformanceTests: XCTestCase {
  func testExpectationWaiter() { assertConforms(.expectation) }
  func testSemaphoreWaiter() { assertConforms(.semaphore) }
  func testProbePollerWaiter() { assertConforms(.probePoller) }
  func testNotificationWaiter() { assertConforms(.notification) }
  func testSynchronousWaiter() { assertConforms(.synchronous) }
  func testScheduledWaiter() { assertConforms(.scheduled) }

  /// A waiter that returns at once breaks the contract, and the conformance run says how.
  func testABrokenWaiterIsCaught() {
    struct Impatient: Waiter {
      let name = "impatient"
      func block(on condition: WaitCondition, until deadline: ContinuousClock.Instant) {}
      func suspend(on condition: WaitCondition, until deadline: ContinuousClock.Instant) async {}
    }
    let report = WaiterConformance.run(Impatient())
    XCTAssertTrue(report.failures.contains(
      "unfulfilled expectation times out: ended errored, expected failed (issues: [\"Waiter \\\"impatient\\\" returned before the wait for \\\"never fulfilled\\\" was done and before its timeout of 0.05 seconds\"])"),
      report.description)
  }

  private func assertConforms(_ waiter: some Waiter, file: StaticString = #filePath, line: UInt = #line) {
    let report = WaiterConformance.run(waiter)
    XCTAssertEqual(report.failures, [], report.description, file: file, line: line)
    XCTAssertGreaterThan(report.checked.count, 20, file: file, line: line)
  }
}
