import AsyncHarness
import AsyncHarnessXCTest
import Synchronization
import XCTest

/// A class adopting the harness as a team would: XCTest runs its tests, each with `t`,
/// under the waiter the class chooses.
final class HarnessTestCaseTests: HarnessTestCase {
  override class var waiter: any Waiter { .semaphore }

  private var waiterInSetUp: String?

  override func setUp() {
    super.setUp()
    waiterInSetUp = t.waiter.name
  }

  func testTheClassChoosesTheWaiterOfEveryTest() throws {
    XCTAssertEqual(t.waiter.name, "semaphore")
    XCTAssertEqual(waiterInSetUp, "semaphore")
    XCTAssertEqual(t.defaultTimeout, .seconds(1))
  }

  /// XCTest runs the method on the main thread, where the wait turns the main run loop.
  func testABlockingWaitSeesWorkDeliveredOnTheMainQueue() throws {
    let delivered = t.expectation("delivered on the main queue")
    let main = t.main
    t.background.async { main.async { delivered.fulfill() } }
    try t.wait(for: delivered)
  }
}

/// What a ``HarnessTestCase`` reports to XCTest: each probe method below runs as XCTest
/// runs a test method, and the failures it records are kept instead of failing these tests.
final class HarnessTestCaseFailureTests: XCTestCase {
  func testAFailedWaitFailsTheTestWithItsMessageAtItsLine() {
    let probe = run(ProbeCase.failsAWait)
    XCTAssertEqual(probe.failures, [
      Failure(description: "Exceeded timeout of 0.01 seconds, with unfulfilled expectations: \"never\" created at Tests/AsyncHarnessTests/HarnessTestCaseTests.swift:\(ProbeCase.neverLine)",
              file: #filePath, line: ProbeCase.waitLine),
    ])
    XCTAssertEqual(probe.log.lines, [], "the wait stopped the method")
  }

  func testAFailureInACallbackEndsTheWaitAtOnce() {
    let start = ContinuousClock.now
    let probe = run(ProbeCase.failsInACallback)
    XCTAssertLessThan(ContinuousClock.now - start, .seconds(10), "the wait's 60 s timeout did not run out")
    XCTAssertEqual(probe.failures, [Failure(description: "the callback failed", file: #filePath, line: ProbeCase.callbackLine)])
    XCTAssertEqual(probe.log.lines, [], "the wait stopped the method")
  }

  func testAnUnwaitedExpectationFailsTheTestAtWhereItWasCreated() {
    let probe = run(ProbeCase.forgetsAnExpectation)
    XCTAssertEqual(probe.failures, [
      Failure(description: "Failed due to unwaited expectation \"forgotten\" created at Tests/AsyncHarnessTests/HarnessTestCaseTests.swift:\(ProbeCase.forgottenLine)",
              file: #filePath, line: ProbeCase.forgottenLine),
    ])
  }

  /// Only the harness's own stop is left out; any other error is XCTest's to report.
  func testAnErrorTheMethodThrowsIsReportedByXCTest() {
    let probe = run(ProbeCase.throwsAnError)
    XCTAssertEqual(probe.failures, [Failure(description: "threw error \"Unplugged()\"", file: "<EXPR>", line: 0)])
  }

  func testAPassingMethodRecordsNothingUnderTheDefaultWaiter() {
    let probe = run(ProbeCase.passes)
    XCTAssertEqual(probe.failures, [])
    XCTAssertEqual(probe.log.lines, ["expectation", "waited"])
  }

  func testSetUpTheMethodAndTearDownRunInsideTheHarnessTestThenItsTeardownBlocks() {
    let probe = run(OrderProbeCase.passes)
    XCTAssertEqual(probe.failures, [])
    XCTAssertEqual(probe.log.lines, ["setUp expectation", "expectation", "waited", "tearDown", "teardown block"])
  }

  /// Runs one method of a probe case the way XCTest runs a test method.
  private func run<Case: ProbeCase>(_ method: @escaping (Case) -> () throws -> Void) -> Case {
    let probe = Case(name: "probe") { try method($0 as! Case)() }
    probe.invokeTest()
    return probe
  }
}

/// A harness test case whose methods the failure tests run one at a time. They have no
/// `test` prefix, so XCTest never runs them on its own.
private class ProbeCase: HarnessTestCase {
  private lazy var capturing = CapturingRun(test: self)
  override var testRun: XCTestRun? { capturing }
  /// The failures recorded on this test case.
  var failures: [Failure] { capturing.failures }
  /// What the methods did.
  let log = Lines()

  static let neverLine = #line + 3
  static let waitLine = #line + 3
  func failsAWait() throws {
    let never = t.expectation("never")
    try t.wait(for: never, timeout: .milliseconds(10))
    log.append("after the wait")
  }

  static let callbackLine = #line + 3
  func failsInACallback() throws {
    let done = t.expectation("done")
    t.background.async { [t] in t.fail("the callback failed") }
    try t.wait(for: done, timeout: .seconds(60))
    log.append("after the wait")
  }

  static let forgottenLine = #line + 2
  func forgetsAnExpectation() {
    _ = t.expectation("forgotten")
  }

  func throwsAnError() throws {
    throw Unplugged()
  }

  func passes() throws {
    log.append(t.waiter.name)
    let done = t.expectation("done")
    t.background.async { done.fulfill() }
    try t.wait(for: done)
    log.append("waited")
  }
}

/// A probe case that also logs its set-up, its tear-down and a teardown block.
private final class OrderProbeCase: ProbeCase {
  override func setUp() {
    super.setUp()
    log.append("setUp \(t.waiter.name)")
    t.addTeardown { [log] in log.append("teardown block") }
  }

  override func tearDown() {
    log.append("tearDown")
    super.tearDown()
  }
}

/// A test run that keeps the failures recorded on its test case.
private final class CapturingRun: XCTestCaseRun {
  var failures: [Failure] = []

  override func recordFailure(withDescription description: String, inFile filePath: String?, atLine lineNumber: Int,
                              expected: Bool) {
    failures.append(Failure(description: description, file: filePath ?? "", line: lineNumber))
  }
}

/// Lines appended from any thread.
private final class Lines: Sendable {
  private let storage = Mutex<[String]>([])
  var lines: [String] { storage.withLock { $0 } }
  func append(_ line: String) { storage.withLock { $0.append(line) } }
}

private struct Unplugged: Error {}
