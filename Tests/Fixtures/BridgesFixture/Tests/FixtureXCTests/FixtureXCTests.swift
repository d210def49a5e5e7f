import AsyncHarness
import AsyncHarnessXCTest
import XCTest

// BridgeReportTests asserts the lines of the failures below: keep them where they are.

struct FixtureError: Error {}

final class PlainTests: XCTestCase {
  func testPasses() {
    XCTAssertEqual(1 + 1, 2)
  }

  func testFails() {
    XCTAssertEqual(1 + 1, 3, "one and one")
  }

  func testThrows() throws {
    throw FixtureError()
  }

  func testSkips() throws {
    throw XCTSkip("not on this machine")
  }
}

final class WaitingTests: HarnessTestCase {
  override class var waiter: any Waiter { .semaphore }

  func testWaits() throws {
    let done = t.expectation("done")
    t.background.async { done.fulfill() }
    try t.wait(for: done)
  }

  func testTimesOut() throws {
    let never = t.expectation("never fulfilled")
    try t.wait(for: never, timeout: .milliseconds(50))
  }
}
