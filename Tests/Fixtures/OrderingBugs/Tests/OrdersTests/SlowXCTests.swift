import Foundation
import XCTest

/// A synchronous test body that takes longer than a schedule's quiet period: XCTest runs it on
/// its main thread, outside any Swift concurrency job, so the schedule has nothing to run while
/// it works. It is running, not stuck, and passes in every order.
final class SlowXCTests: XCTestCase {
  func testASynchronousBodyLongerThanTheQuietPeriodPasses() {
    Thread.sleep(forTimeInterval: 0.5)
    XCTAssertTrue(true)
  }
}
