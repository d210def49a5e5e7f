import AsyncHarness
import AsyncHarnessXCTest
import XCTest

/// The XCTest bridge: harness tests inside XCTest methods, failures at their own lines.
final class XCTestBridgeTests: XCTestCase {
  func testHarnessTestPassesUnderASemaphore() {
    harnessTest(waiter: .semaphore) { t in
      let done = t.expectation("done")
      t.background.async { t.main.async { done.fulfill() } }
      try t.wait(for: done)
    }
  }

  func testRunHarnessReportsEveryStrategy() {
    let recorder = runHarness([Suite("Bridge") { Test("passes") { t in t.expect(true) } }])
    XCTAssertEqual(recorder.results.map(\.test.waiter), WaiterRegistry.builtIn.names)
  }

  func testFailuresAreRecordedAtTheIssueLine() {
    let failingLine = #line + 3
    let failures = recordedFailures {
      $0.harnessTest(waiter: .expectation) { t in
        t.expect(false, "inside the harness")
      }
    }
    XCTAssertEqual(failures.map(\.line), [failingLine])
    XCTAssertEqual(failures.map(\.description), ["FailureProbe/testFailuresAreRecordedAtTheIssueLine() [expectation]: Expectation failed: inside the harness"])
  }

  /// Runs `work` against a probe test case and returns the failures it recorded instead of
  /// failing this test.
  private func recordedFailures(_ work: (XCTestCase) -> Void) -> [(description: String, line: Int)] {
    let probe = FailureProbe(name: "probe", testClosure: { _ in })
    work(probe)
    return probe.failures
  }
}

/// A test case that keeps the failures recorded on it.
private final class FailureProbe: XCTestCase {
  var failures: [(description: String, line: Int)] = []

  override func recordFailure(withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool) {
    failures.append((description, lineNumber))
  }
}
