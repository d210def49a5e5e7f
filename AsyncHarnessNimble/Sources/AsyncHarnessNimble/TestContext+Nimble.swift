public import AsyncHarness
// Nimble is built in Swift 5 mode: its assertion handler is a plain global and its types
// are not `Sendable`.
@preconcurrency import Nimble

extension TestContext {
  /// Records every failing Nimble expectation as a failure of this test, at the
  /// expectation's file and line with Nimble's message, until the test ends; then Nimble's
  /// previous assertion handler is back.
  ///
  /// Without it, Nimble reports to XCTest or Swift Testing, which are not running a harness
  /// test: the failure is lost and the test passes. Call it at the start of a test, or for
  /// every test of a suite in its `setUp:`:
  ///
  /// ```swift
  /// let loaderSuite = Suite("MessageLoader", setUp: { t in t.recordNimbleFailures() }) {
  ///   Test("greets with hello") { t in
  ///     …
  ///     expect(messages).to(equal(["hello"]))
  ///   }
  /// }
  /// ```
  ///
  /// A failure recorded while the test waits (an `expect` in a callback) ends the wait at
  /// once, as `t.expect` does. Nimble's handler is one for the whole process: run the
  /// harness's tests one at a time, as its runner does.
  public func recordNimbleFailures() {
    let previous = NimbleAssertionHandler
    NimbleAssertionHandler = HarnessAssertionHandler(context: self)
    addTeardown { NimbleAssertionHandler = previous }
  }
}

/// Records Nimble's failing assertions on a harness test.
private struct HarnessAssertionHandler: AssertionHandler {
  let context: TestContext

  func assert(_ assertion: Bool, message: FailureMessage, location: Nimble.SourceLocation) {
    guard !assertion else { return }
    context.record(Issue(kind: .expectationFailed, message: message.stringValue,
                         sourceLocation: AsyncHarness.SourceLocation(
                           fileID: location.fileID, filePath: "\(location.filePath)",
                           line: Int(location.line), column: Int(location.column))))
  }
}
