import Dispatch
import Foundation
import XCTest

/// Tests that keep a thread longer than a schedule's quiet period. Each passes in every order.
final class SlowXCTests: XCTestCase {
  /// A synchronous body: XCTest runs it on its main thread, outside any Swift concurrency job,
  /// so the schedule has nothing to run while it works. It is running, not stuck.
  func testASynchronousBodyLongerThanTheQuietPeriodPasses() {
    Thread.sleep(forTimeInterval: 0.5)  // deliberate: a body that keeps its thread past the quiet period
    XCTAssertTrue(true)
  }

  /// An async body that blocks its thread until a task it started runs: on Swift's own
  /// executors another thread runs the task; a schedule running one job at a time hands the
  /// jobs back to them, and says so.
  func testAJobBlockingOnAnotherJobPasses() async {
    let semaphore = DispatchSemaphore(value: 0)
    Task { semaphore.signal() }
    waitBlocking(for: semaphore)
    XCTAssertTrue(true)
  }
}

/// Blocks the calling thread until `semaphore` is signalled.
private func waitBlocking(for semaphore: DispatchSemaphore) {
  semaphore.wait()
}
