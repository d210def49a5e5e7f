import AsyncHarness
import AsyncHarnessNimble
import Dispatch
import Nimble
import XCTest

/// Nimble inside harness tests: its failures become the test's issues at their own lines.
///
/// Each test runs a harness suite in-process, with an `AssertionRecorder` as Nimble's handler
/// around it, standing for the handler a run would otherwise have: what reaches it was lost
/// to the harness.
final class NimbleFailureTests: XCTestCase {
  func testAFailingExpectIsAFailureOfTheHarnessTestAtItsLine() throws {
    let expectLine = #line + 3
    let run = try runHarness(Test("compares") { t in
      t.recordNimbleFailures()
      expect(1).to(equal(2))
    })
    XCTAssertEqual(run.results.map(\.verdict), [.failed])
    XCTAssertEqual(run.results.first?.issues.map(\.message), ["expected to equal <2>, got <1>"])
    XCTAssertEqual(run.results.first?.issues.map(\.sourceLocation?.filePath), [#filePath])
    XCTAssertEqual(run.results.first?.issues.map(\.sourceLocation?.line), [expectLine])
    XCTAssertEqual(run.lost, [], "nothing reached the previous handler")
  }

  func testPassingExpectationsRecordNothing() throws {
    let run = try runHarness(Test("compares") { t in
      t.recordNimbleFailures()
      expect(2).to(equal(2))
    })
    XCTAssertEqual(run.results.map(\.verdict), [.passed])
    XCTAssertEqual(run.results.first?.issues, [])
  }

  /// Without the adapter the failure goes to the handler Nimble had, and the harness test
  /// passes: what the adapter fixes.
  func testWithoutTheAdapterTheFailureIsLostToTheHarness() throws {
    let run = try runHarness(Test("compares") { _ in expect(1).to(equal(2)) })
    XCTAssertEqual(run.results.map(\.verdict), [.passed])
    XCTAssertEqual(run.lost, ["expected to equal <2>, got <1>"])
  }

  func testAFailingExpectInACallbackEndsTheWaitAtOnce() throws {
    let expectLine = #line + 6
    let start = ContinuousClock.now
    let run = try runHarness(Test("waits") { t in
      t.recordNimbleFailures()
      let done = t.expectation("done")
      DispatchQueue.global().async {
        expect("loaded").to(equal("saved"))
      }
      try t.wait(for: done, timeout: .seconds(60))
    })
    XCTAssertLessThan(ContinuousClock.now - start, .seconds(10), "the wait's 60 s timeout did not run out")
    XCTAssertEqual(run.results.first?.issues.map(\.message), [#"expected to equal <saved>, got <loaded>"#])
    XCTAssertEqual(run.results.first?.issues.map(\.sourceLocation?.line), [expectLine])
  }

  /// The handler is the test's only while it runs: the next test, without the adapter,
  /// reports to the previous handler again.
  func testThePreviousHandlerIsBackWhenTheTestEnds() throws {
    let run = try runHarness(
      Test("adapted") { t in t.recordNimbleFailures() },
      Test("not adapted") { _ in expect(1).to(equal(2)) }
    )
    XCTAssertEqual(run.results.map(\.verdict), [.passed, .passed])
    XCTAssertEqual(run.lost, ["expected to equal <2>, got <1>"])
  }

  /// Runs the tests as a suite under its default waiter, with a recorder as Nimble's
  /// handler; returns their results and the failures that reached the recorder.
  private func runHarness(_ tests: Test...) throws -> (results: [TestResult], lost: [String]) {
    let recorder = AssertionRecorder()
    let events = EventRecorder()
    var thrown: (any Error)?
    withAssertionHandler(recorder) {
      do {
        try Runner(suites: [Suite("Nimble") { tests }], reporters: [events]).run()
      } catch {
        thrown = error
      }
    }
    if let thrown { throw thrown }
    return (events.results.map(\.result), recorder.assertions.filter { !$0.success }.map(\.message.stringValue))
  }
}
