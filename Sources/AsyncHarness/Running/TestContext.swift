import Foundation
import Synchronization

/// What a test body receives as `t`: expectations and waits, assertions, captured output,
/// and the queues the code under test should use.
///
/// A context is `Sendable`: callbacks on any thread may call `expect`, `fulfill` and
/// `log`. Everything recorded lands on the test that owns the context, even when it
/// arrives after the test ended (then it is reported as a late signal).
public final class TestContext: Sendable {
  let record: TestRecord
  /// The waiter strategy this test runs under.
  public let waiter: any Waiter
  /// The timeout of waits that pass none.
  public let defaultTimeout: Duration
  /// The test's time limit and the instant it runs out, when it has one.
  let timeLimit: (duration: Duration, deadline: ContinuousClock.Instant)?
  private let timeLimitReported = Atomic<Bool>(false)
  /// The queue standing for the main queue: `DispatchQueue.main`, or inline under the
  /// synchronous waiter.
  public let main: any Dispatching
  /// A serial background queue made for this test, or inline under the synchronous waiter.
  public let background: any Dispatching

  init(record: TestRecord, waiter: any Waiter, defaultTimeout: Duration, timeLimit: Duration? = nil) {
    self.record = record
    self.waiter = waiter
    self.defaultTimeout = defaultTimeout
    self.timeLimit = timeLimit.map { ($0, ContinuousClock().now.advanced(by: $0)) }
    let issues = IssueSink(record: record)
    let backgroundLabel = "background"
    if waiter.runsWorkInline {
      main = SyncQueue(identity: .main, issues: issues)
      background = SyncQueue(identity: QueueIdentity(label: backgroundLabel), issues: issues)
    } else {
      main = AsyncQueue(.main, identity: .main, issues: issues)
      background = AsyncQueue(DispatchQueue(label: "AsyncHarness.\(record.id.name).background"),
                              identity: QueueIdentity(label: backgroundLabel), issues: issues)
    }
  }

  /// The test being run.
  public var id: TestID { record.id }

  // MARK: Recording

  /// Records an issue on this test.
  public func record(_ issue: Issue) {
    record.record(issue)
  }

  /// Checks a condition; when it is false, records a failure with the message and the
  /// caller's location, and the test goes on.
  /// - Returns: the condition, so a test can branch on it.
  @discardableResult
  public func expect(_ condition: Bool, _ message: @autoclosure () -> String = "",
                     fileID: String = #fileID, filePath: String = #filePath,
                     line: Int = #line, column: Int = #column) -> Bool {
    if !condition {
      let text = message()
      record(Issue(kind: .expectationFailed,
                   message: text.isEmpty ? "Expectation failed" : "Expectation failed: \(text)",
                   sourceLocation: SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)))
    }
    return condition
  }

  /// Checks that two values are equal; when not, records a failure showing both.
  @discardableResult
  public func expectEqual<T: Equatable>(_ actual: T, _ expected: T, _ message: @autoclosure () -> String = "",
                                        fileID: String = #fileID, filePath: String = #filePath,
                                        line: Int = #line, column: Int = #column) -> Bool {
    guard actual != expected else { return true }
    let text = message()
    record(Issue(kind: .expectationFailed,
                 message: "Expected \(expected), got \(actual)" + (text.isEmpty ? "" : ": \(text)"),
                 sourceLocation: SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)))
    return false
  }

  /// Checks a condition; when it is false, records a failure and stops the test.
  /// - Throws: ``TestStopped`` when the condition is false.
  public func require(_ condition: Bool, _ message: @autoclosure () -> String = "",
                      fileID: String = #fileID, filePath: String = #filePath,
                      line: Int = #line, column: Int = #column) throws {
    guard expect(condition, message(), fileID: fileID, filePath: filePath, line: line, column: column) else {
      throw TestStopped()
    }
  }

  /// Unwraps an optional; when it is `nil`, records a failure and stops the test.
  /// - Throws: ``TestStopped`` when the value is `nil`.
  public func require<T>(_ value: T?, _ message: @autoclosure () -> String = "",
                         fileID: String = #fileID, filePath: String = #filePath,
                         line: Int = #line, column: Int = #column) throws -> T {
    guard let value else {
      let text = message()
      record(Issue(kind: .expectationFailed,
                   message: "Required value of type \(T.self) was nil" + (text.isEmpty ? "" : ": \(text)"),
                   sourceLocation: SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)))
      throw TestStopped()
    }
    return value
  }

  /// Records a failure with a message.
  public func fail(_ message: String, fileID: String = #fileID, filePath: String = #filePath,
                   line: Int = #line, column: Int = #column) {
    record(Issue(kind: .expectationFailed, message: message,
                 sourceLocation: SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)))
  }

  /// Records an error that ended the test body; ``TestStopped`` was recorded already.
  func recordThrown(_ error: any Error, at location: SourceLocation) {
    guard !(error is TestStopped) else { return }
    record(Issue(kind: .errorThrown, message: "Caught error: \(String(reflecting: error))", sourceLocation: location))
  }

  /// Records that the test ran out of time, naming what it was doing.
  func recordTimeLimitExceeded(_ activity: String, at location: SourceLocation?) {
    guard let timeLimit,
          !timeLimitReported.exchange(true, ordering: .relaxed) else { return }
    record(Issue(kind: .timeLimitExceeded,
                 message: "Test exceeded its time limit of \(timeLimit.duration.secondsDescription) seconds \(activity)",
                 sourceLocation: location))
  }

  /// Captures text as the test's output: reporters attach it to the test (JUnit's
  /// `<system-out>`).
  public func log(_ text: String) {
    record.capture(text)
  }

  // MARK: Expectations

  /// Creates an expectation owned by this test.
  /// - Parameters:
  ///   - description: what is expected, as failure messages show it.
  ///   - expectedFulfillmentCount: how many `fulfill()` calls satisfy it (at least 1).
  ///   - isInverted: whether the wait fails if it *is* fulfilled.
  ///   - assertForOverFulfill: whether fulfilling it more often is an issue.
  public func expectation(_ description: String, expectedFulfillmentCount: Int = 1,
                          isInverted: Bool = false, assertForOverFulfill: Bool = true,
                          fileID: String = #fileID, filePath: String = #filePath,
                          line: Int = #line, column: Int = #column) -> Expectation {
    let location = SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    if expectedFulfillmentCount < 1 {
      record(Issue(kind: .apiMisused,
                   message: "API violation - expectedFulfillmentCount of \"\(description)\" must be at least 1, not \(expectedFulfillmentCount)",
                   sourceLocation: location))
    }
    return Expectation(description: description, expectedFulfillmentCount: max(1, expectedFulfillmentCount),
                       isInverted: isInverted, assertForOverFulfill: assertForOverFulfill,
                       sourceLocation: location, owner: record)
  }

  /// Creates an expectation fulfilled by each notification named `name` (from `object`,
  /// when given, and accepted by `filter`) posted on `center` from now until the test ends.
  /// - Parameter count: how many notifications satisfy it.
  public func expectation(forNotification name: Notification.Name, object: (any AnyObject & Sendable)? = nil,
                          center: NotificationCenter = .default, count: Int = 1,
                          where filter: (@Sendable (Notification) -> Bool)? = nil,
                          fileID: String = #fileID, filePath: String = #filePath,
                          line: Int = #line, column: Int = #column) -> Expectation {
    let from = object.map { "from \(type(of: $0))" } ?? "from any object"
    let expectation = expectation("Expect notification '\(name.rawValue)' \(from)", expectedFulfillmentCount: count,
                                  fileID: fileID, filePath: filePath, line: line, column: column)
    let observer = SendableBox(center.addObserver(forName: name, object: object, queue: nil) { notification in
      if filter?(notification) ?? true { expectation.fulfill(fileID: fileID, filePath: filePath, line: line, column: column) }
    })
    let center = SendableBox(center)
    record.addTeardown { center.value.removeObserver(observer.value) }
    return expectation
  }
}

/// Thrown to stop a test after an issue was recorded (a failed `require`, a failed or
/// interrupted wait). The runner does not report it again.
public struct TestStopped: Error, CustomStringConvertible {
  public var description: String { "the test stopped after recording an issue" }
}
