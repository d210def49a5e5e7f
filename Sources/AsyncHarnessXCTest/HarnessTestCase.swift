import AsyncHarness
import XCTest

/// An `XCTestCase` whose tests are harness tests: each test method runs with a fresh
/// `TestContext`, `t`, under the waiter strategy its class chooses.
///
/// Subclass it instead of `XCTestCase`, one class at a time; the test methods stay ordinary
/// XCTest methods, and XCTest's assertions keep working beside `t`'s:
///
/// ```swift
/// final class LoaderTests: HarnessTestCase {
///   override class var waiter: any Waiter { .semaphore }
///
///   func testGreets() throws {
///     let loaded = t.expectation("loaded")
///     loader.load { _ in loaded.fulfill() }
///     try t.wait(for: loaded)
///   }
/// }
/// ```
///
/// `setUp()`, the test method and `tearDown()` all run inside the harness test, so `t` is
/// there in each; blocks registered with `t.addTeardown` run after `tearDown()`. Every
/// failing issue fails the XCTest test with the harness's message at the issue's own file
/// and line, when the test ends. A failed wait or `require` stops the method by throwing
/// `TestStopped`, which XCTest does not report again. An XCTest assertion
/// failure is XCTest's own: it does not end a wait in progress, as `t.expect` and `t.fail`
/// do (use those inside callbacks).
///
/// Write synchronous test methods: XCTest runs them on the main thread, where a blocking
/// wait keeps the main run loop turning, so work sent to `t.main` runs while the test waits.
/// An `async` method can `await` the waits, but the harness takes the task XCTest runs it in
/// for a callback's: a failure the method records before a wait then ends that wait at once.
open class HarnessTestCase: XCTestCase {
  /// The waiter strategy of every test of this class: `expectation` unless a subclass
  /// overrides it.
  open class var waiter: any Waiter { .expectation }

  /// The timeout of waits that pass none: one second unless a subclass overrides it.
  open class var defaultTimeout: Duration { .seconds(1) }

  /// The running test's context, while it runs.
  private var context: TestContext?

  /// The harness context of the running test: expectations, waits, assertions, and the
  /// `t.main` and `t.background` queues to hand to the code under test.
  ///
  /// Available from `setUp()` to `tearDown()` of each test; using it elsewhere (in
  /// `class func setUp()`, or from work still running after the test ended) stops the
  /// process with a message saying so.
  public var t: TestContext {
    guard let context else {
      preconditionFailure("\(type(of: self)).t is available only while a test runs, from setUp() to tearDown()")
    }
    return context
  }

  /// Runs `setUp()`, the test method and `tearDown()` as one harness test under
  /// ``waiter``, then records its failing issues as failures of this test.
  override open func invokeTest() {
    // The runner runs a blocking test body on the calling thread, before `runAlone` returns:
    // this test case is never used from another thread.
    nonisolated(unsafe) let testCase = self
    let test = Test(name) { t in
      testCase.context = t
      defer { testCase.context = nil }
      testCase.invokeTestMethod()
    }
    let waiter = Self.waiter
    runAlone(test, waiter: waiter, timeout: Self.defaultTimeout, at: nil)
  }

  /// XCTest's own `invokeTest()`: `setUp()`, the test method, `tearDown()`.
  private func invokeTestMethod() {
    super.invokeTest()
  }

  #if canImport(Darwin)
  /// Records an issue, except `TestStopped` thrown out of a test method: the
  /// issue that stopped the test is recorded at its own line instead.
  override open func record(_ issue: XCTIssue) {
    if context != nil, issue.type == .thrownError, issue.associatedError is TestStopped { return }
    super.record(issue)
  }
  #else
  /// Creates the test case that runs `testClosure`: the test method as XCTest calls it.
  /// `TestStopped` thrown out of it is not reported again: the issue that
  /// stopped the test is recorded at its own line.
  public required init(name: String, testClosure: @escaping XCTestCaseClosure) {
    super.init(name: name) { testCase in
      do {
        try testClosure(testCase)
      } catch is TestStopped {}
    }
  }
  #endif
}
