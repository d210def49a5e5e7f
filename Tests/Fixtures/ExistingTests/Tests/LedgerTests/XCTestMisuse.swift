import Foundation
import XCTest

// What swift-corelibs-xctest's own functional tests (Asynchronous/Misuse, SkippingTestCase)
// make XCTest say, each only when EXISTING_TESTS_MISUSE=1; without it every test here passes
// at once. With it, `swift test` (Swift 6.3.1) prints:
// - testA: `XCTestMisuse.swift:22: error: MisuseXCTests.testA_LeavesTwoExpectationsUnwaited :
//   Failed due to unwaited expectations 'the first', 'the second'` (a failure XCTest counts as
//   unexpected, at the line of the first expectation).
// - testB: `XCTestMisuse.swift:28: error: MisuseXCTests.testB_WaitsWithoutExpectations : API
//   violation - call made to wait without any expectations having been set.`
// - testC: `XCTestMisuse.swift:32: MisuseXCTests.testC_SkipsIfTheLedgerIsClosed : Test skipped:
//   required true value but got false - the ledger is closed`, and the test skipped.
// Keep these lines where they are: the harness's tests quote them.

/// Whether this run misuses XCTest (EXISTING_TESTS_MISUSE=1).
let misusesXCTest = ProcessInfo.processInfo.environment["EXISTING_TESTS_MISUSE"] == "1"

final class MisuseXCTests: XCTestCase {
  func testA_LeavesTwoExpectationsUnwaited() {
    guard misusesXCTest else { return }
    expectation(description: "the first")
    expectation(description: "the second")
  }

  @MainActor func testB_WaitsWithoutExpectations() {
    guard misusesXCTest else { return }
    waitForExpectations(timeout: 0.1)
  }

  func testC_SkipsIfTheLedgerIsClosed() throws {
    try XCTSkipIf(misusesXCTest, "the ledger is closed")
  }
}
