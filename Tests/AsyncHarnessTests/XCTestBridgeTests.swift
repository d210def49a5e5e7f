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
    XCTAssertEqual(recorder.results.map(\.test.host), WaiterRegistry.builtIn.names)
  }

  /// XCTest names the method in each failure, so `harnessTest` records the message alone.
  func testHarnessTestFailuresAreTheMessageAtTheIssueLine() {
    let failingLine = #line + 3
    let failures = recordedFailures {
      $0.harnessTest(waiter: .expectation) { t in
        t.expect(false, "inside the harness")
      }
    }
    XCTAssertEqual(failures.map(\.description), ["Expectation failed: inside the harness"])
    XCTAssertEqual(failures.map(\.file), [#filePath])
    XCTAssertEqual(failures.map(\.line), [failingLine])
  }

  func testAThrownErrorIsAttributedToTheHarnessTestLine() {
    let testLine = #line + 2
    let failures = recordedFailures {
      $0.harnessTest(waiter: .expectation) { _ in throw Broken() }
    }
    XCTAssertEqual(failures.map(\.description), ["Caught error: Broken()"])
    XCTAssertEqual(failures.map(\.file), [#filePath])
    XCTAssertEqual(failures.map(\.line), [testLine])
  }

  /// `runHarness` runs many harness tests in one method: each failure names its own.
  func testRunHarnessNamesTheHarnessTestOfEachFailure() {
    let failingLine = #line + 2
    let failures = recordedFailures {
      $0.runHarness([Suite("Bridge") { Test("fails") { t in t.fail("no") } }], waiters: .named("semaphore"))
    }
    XCTAssertEqual(failures.map(\.description), ["Bridge/fails [semaphore]: no"])
    XCTAssertEqual(failures.map(\.file), [#filePath])
    XCTAssertEqual(failures.map(\.line), [failingLine])
  }

  /// Runs `work` against a probe test case and returns the failures it recorded instead of
  /// failing this test.
  private func recordedFailures(_ work: (XCTestCase) -> Void) -> [Failure] {
    let probe = FailureProbe(name: "probe", testClosure: { _ in })
    work(probe)
    return probe.failures
  }
}

/// A failure recorded on a probe test case.
struct Failure: Equatable {
  var description: String
  var file: String
  var line: Int
}

/// A test case that keeps the failures recorded on it.
private final class FailureProbe: XCTestCase {
  var failures: [Failure] = []

  override func recordFailure(withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool) {
    failures.append(Failure(description: description, file: filePath, line: lineNumber))
  }
}

private struct Broken: Error {}
