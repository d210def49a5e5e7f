@testable import AsyncHarness
import XCTest

/// The pure outcome check, case by case, without threads or clocks.
final class ExpectationOutcomeTests: XCTestCase {
  private let here = SourceLocation(fileID: "App/LoaderTests.swift", filePath: "/src/LoaderTests.swift", line: 12, column: 5)

  private func snapshot(_ name: String, expected: Int = 1, fulfilled: Int = 0, inverted: Bool = false,
                        order: Int? = nil, takenAt: Int = .max) -> ExpectationSnapshot {
    ExpectationSnapshot(description: name, expectedFulfillmentCount: expected, fulfillmentCount: fulfilled,
                        isInverted: inverted, fulfillmentOrder: order, sequenceWhenTaken: takenAt,
                        sourceLocation: here)
  }

  func testPendingUntilFulfilled() {
    XCTAssertEqual(ExpectationOutcome.evaluate([snapshot("a")], enforceOrder: false, timedOut: false), .pending)
    XCTAssertEqual(ExpectationOutcome.evaluate([snapshot("a", fulfilled: 1, order: 1)], enforceOrder: false, timedOut: false), .completed)
  }

  func testCountMustBeReached() {
    let partial = snapshot("three", expected: 3, fulfilled: 2)
    XCTAssertEqual(ExpectationOutcome.evaluate([partial], enforceOrder: false, timedOut: false), .pending)
    XCTAssertEqual(ExpectationOutcome.evaluate([partial], enforceOrder: false, timedOut: true), .timedOut([partial]))
  }

  func testTimeoutNamesEachUnfulfilledExpectationWithItsLocation() {
    let outcome = ExpectationOutcome.evaluate(
      [snapshot("bar"), snapshot("done", fulfilled: 1, order: 1), snapshot("baz", expected: 2, fulfilled: 1)],
      enforceOrder: false, timedOut: true)
    XCTAssertEqual(outcome.failureMessage(timeout: .milliseconds(200)),
                   "Exceeded timeout of 0.2 seconds, with unfulfilled expectations: \"bar\" created at App/LoaderTests.swift:12, \"baz\" (1 of 2) created at App/LoaderTests.swift:12")
  }

  func testInvertedWaitsOutTheTimeoutThenCompletes() {
    let inverted = snapshot("never", inverted: true)
    XCTAssertEqual(ExpectationOutcome.evaluate([inverted], enforceOrder: false, timedOut: false), .pending)
    XCTAssertEqual(ExpectationOutcome.evaluate([inverted], enforceOrder: false, timedOut: true), .completed)
  }

  func testInvertedFulfilledFailsAtOnce() {
    let fulfilled = snapshot("never", fulfilled: 1, inverted: true)
    let outcome = ExpectationOutcome.evaluate([fulfilled], enforceOrder: false, timedOut: false)
    XCTAssertEqual(outcome, .invertedFulfillment([fulfilled]))
    XCTAssertEqual(outcome.failureMessage(timeout: .seconds(1)),
                   "Fulfilled inverted expectation \"never\" created at App/LoaderTests.swift:12")
  }

  func testEnforcedOrder() {
    let first = snapshot("first", fulfilled: 1, order: 8)
    let second = snapshot("second", fulfilled: 1, order: 7)
    let outcome = ExpectationOutcome.evaluate([first, second], enforceOrder: true, timedOut: false)
    XCTAssertEqual(outcome, .incorrectOrder(first, second))
    XCTAssertEqual(outcome.failureMessage(timeout: .seconds(1)),
                   "Failed due to expectation fulfilled in incorrect order: requires \"first\", actually fulfilled \"second\"")
    XCTAssertEqual(ExpectationOutcome.evaluate([first, second], enforceOrder: false, timedOut: false), .completed)
    XCTAssertEqual(ExpectationOutcome.evaluate([second, first], enforceOrder: true, timedOut: false), .completed)
  }

  func testLaterFulfilledBeforeEarlierIsOutOfOrder() {
    let first = snapshot("first")
    let second = snapshot("second", fulfilled: 1, order: 3)
    XCTAssertEqual(ExpectationOutcome.evaluate([first, second], enforceOrder: true, timedOut: false),
                   .incorrectOrder(first, second))
  }

  func testALaterFulfillmentAfterTheEarlierSnapshotIsNoEvidenceOfDisorder() {
    // The earlier expectation was read unfulfilled when the sequence stood at 5; the later
    // one reached its count at 6, after that read, so the earlier may have reached its own
    // in between: the wait looks again, and at its deadline the earlier is what is missing.
    let first = snapshot("first", takenAt: 5)
    let second = snapshot("second", fulfilled: 1, order: 6, takenAt: 6)
    XCTAssertEqual(ExpectationOutcome.evaluate([first, second], enforceOrder: true, timedOut: false), .pending)
    XCTAssertEqual(ExpectationOutcome.evaluate([first, second], enforceOrder: true, timedOut: true), .timedOut([first]))
    // Reached at 5, before the earlier one was read unfulfilled: out of order.
    let early = snapshot("second", fulfilled: 1, order: 5, takenAt: 6)
    XCTAssertEqual(ExpectationOutcome.evaluate([first, early], enforceOrder: true, timedOut: false),
                   .incorrectOrder(first, early))
  }

  func testTimeoutSecondsAreWrittenShort() {
    XCTAssertEqual(Duration.seconds(60).secondsDescription, "60")
    XCTAssertEqual(Duration.milliseconds(50).secondsDescription, "0.05")
    XCTAssertEqual(Duration.milliseconds(1500).secondsDescription, "1.5")
  }
}
