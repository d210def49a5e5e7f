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
  /// Whether each wait is reported as it ends (`waitEnded`, ``Configuration/reportsWaits``),
  /// and each step of the test's schedule (`scheduleStep`).
  let reportsWaits: Bool
  /// The blocks registered with `addTeardown`, in registration order.
  private let teardowns = Mutex<[Teardown]>([])
  /// The queues and the clock the waiter strategy made for this test.
  let queues: any TestQueues
  /// The queue standing for the main queue: `DispatchQueue.main`, or what the waiter
  /// strategy gives instead (inline under the synchronous waiter).
  public let main: any Dispatching
  /// A serial background queue made for this test, labelled `background`.
  public let background: any Dispatching

  init(record: TestRecord, waiter: any Waiter, defaultTimeout: Duration, timeLimit: Duration? = nil,
       schedule: Schedule? = nil, jitter: Jitter? = nil, reportsWaits: Bool = false) {
    self.record = record
    self.reportsWaits = reportsWaits
    self.waiter = waiter
    self.defaultTimeout = defaultTimeout
    self.timeLimit = timeLimit.map { ($0, ContinuousClock().now.advanced(by: $0)) }
    queues = waiter.makeQueues(for: QueueSetup(test: record.id, schedule: schedule, jitter: jitter, record: record,
                                                  reportsSteps: reportsWaits))
    main = queues.main
    background = queues.makeQueue(label: "background")
  }

  /// Makes a serial queue for this test, labelled `label` in messages (a dispatch cycle
  /// names it): a real `DispatchQueue`, or what the waiter strategy gives instead.
  ///
  /// ```swift
  /// let cache = ImageCache(io: t.queue("io"), delivery: t.main)
  /// ```
  public func queue(_ label: String) -> any Dispatching {
    queues.makeQueue(label: label)
  }

  /// The clock to hand to code under test that sleeps or reads the time: the continuous
  /// clock, or a virtual one under a strategy that keeps its own time.
  ///
  /// ```swift
  /// let retrier = Retrier(clock: t.clock, delay: .seconds(30))
  /// ```
  public var clock: any Clock<Duration> { queues.clock }

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
    record(.thrown(error, at: location))
  }

  /// Records that the test ran out of time, naming what it was doing. Only the first
  /// report counts, whichever thread makes it; it always lands on the test.
  func recordTimeLimitExceeded(_ activity: String, at location: SourceLocation?) {
    guard let timeLimit else { return }
    record.recordOnce(Issue(kind: .timeLimitExceeded,
                            message: "Test exceeded its time limit of \(timeLimit.duration.secondsDescription) seconds \(activity)",
                            sourceLocation: location))
  }

  /// Records one failure naming every expectation the test created, required to be waited
  /// for, and never waited for; attributed to where the earliest of them was created.
  func recordUnwaitedExpectations() {
    let unwaited = record.unwaitedExpectations
    guard let earliest = unwaited.first else { return }
    let plural = unwaited.count > 1 ? "s" : ""
    record(Issue(kind: .expectationFailed,
                 message: "Failed due to unwaited expectation\(plural) "
                   + unwaited.map { "\"\($0.expectationDescription)\" created at \($0.sourceLocation)" }.joined(separator: ", "),
                 sourceLocation: earliest.sourceLocation))
  }

  // MARK: Teardown

  /// A block registered with `addTeardown`.
  enum Teardown: Sendable {
    case blocking(@Sendable () throws -> Void, SourceLocation)
    case async(@Sendable () async throws -> Void, SourceLocation)

    /// Where the block was registered: what it throws is attributed there.
    var sourceLocation: SourceLocation {
      switch self {
      case .blocking(_, let location), .async(_, let location): location
      }
    }
  }

  /// Registers a block to run after the test body, whether it passed, failed or threw:
  /// teardown blocks run in the reverse order of registration, before the suite's
  /// `tearDown`. A failure in one is attributed to its own line, and the others still run.
  ///
  /// ```swift
  /// let server = try TestServer.start()
  /// t.addTeardown { server.stop() }
  /// ```
  public func addTeardown(fileID: String = #fileID, filePath: String = #filePath,
                          line: Int = #line, column: Int = #column,
                          _ block: @escaping @Sendable () throws -> Void) {
    let location = SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    teardowns.withLock { $0.append(.blocking(block, location)) }
  }

  /// Registers an `async` block to run after the test body; see
  /// ``addTeardown(fileID:filePath:line:column:_:)-(_,_,_,_,()->Void)``.
  public func addTeardown(fileID: String = #fileID, filePath: String = #filePath,
                          line: Int = #line, column: Int = #column,
                          _ block: @escaping @Sendable () async throws -> Void) {
    let location = SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    teardowns.withLock { $0.append(.async(block, location)) }
  }

  /// Takes the registered teardown blocks, last registered first.
  func takeTeardowns() -> [Teardown] {
    teardowns.withLock { teardowns in
      defer { teardowns.removeAll() }
      return teardowns.reversed()
    }
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
  ///   - requiresWait: whether the test fails when it ends without having waited for the
  ///     expectation (XCTest's "unwaited expectation"). Pass `false` for one that is only
  ///     inspected, e.g. through ``Expectation/fulfillmentCount``.
  ///   - fileID: The caller's file ID; leave the default.
  ///   - filePath: The caller's file path; leave the default.
  ///   - line: The caller's line; leave the default.
  ///   - column: The caller's column; leave the default.
  /// - Returns: The expectation, to fulfill from the code under test and to wait for.
  public func expectation(_ description: String, expectedFulfillmentCount: Int = 1,
                          isInverted: Bool = false, assertForOverFulfill: Bool = true, requiresWait: Bool = true,
                          fileID: String = #fileID, filePath: String = #filePath,
                          line: Int = #line, column: Int = #column) -> Expectation {
    let location = SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    if expectedFulfillmentCount < 1 {
      record(Issue(kind: .apiMisused,
                   message: "API violation - expectedFulfillmentCount of \"\(description)\" must be at least 1, not \(expectedFulfillmentCount)",
                   sourceLocation: location))
    }
    let expectation = Expectation(description: description, expectedFulfillmentCount: max(1, expectedFulfillmentCount),
                                  isInverted: isInverted, assertForOverFulfill: assertForOverFulfill,
                                  requiresWait: requiresWait, sourceLocation: location, owner: record)
    record.add(expectation)
    return expectation
  }

  /// Creates an expectation fulfilled by each notification named `name` (from `object`,
  /// when given, and accepted by `filter`) posted on `center`, from now until the wait that
  /// covers it ends (or the test ends).
  ///
  /// `object` is held strongly and matched by identity. Receiving more posts than `count`
  /// is not an issue: posts are not calls the test makes. A notification has no owner:
  /// without `object:`, a post from work an earlier test left running can fulfill it, so
  /// pass the object the code under test posts from whenever there is one.
  /// - Parameters:
  ///   - name: The notification's name.
  ///   - object: The object that posts it; any object when `nil`.
  ///   - center: The notification center it is posted on.
  ///   - count: how many notifications satisfy it.
  ///   - filter: Accepts the notifications that count; every one when `nil`.
  ///   - fileID: The caller's file ID; leave the default.
  ///   - filePath: The caller's file path; leave the default.
  ///   - line: The caller's line; leave the default.
  ///   - column: The caller's column; leave the default.
  /// - Returns: The expectation, to wait for.
  public func expectation(forNotification name: Notification.Name, object: (any AnyObject & Sendable)? = nil,
                          center: NotificationCenter = .default, count: Int = 1,
                          where filter: (@Sendable (Notification) -> Bool)? = nil,
                          fileID: String = #fileID, filePath: String = #filePath,
                          line: Int = #line, column: Int = #column) -> Expectation {
    let from = object.map { "from \(String(describing: $0))" } ?? "from any object"
    let expectation = expectation("Expect notification '\(name.rawValue)' \(from)", expectedFulfillmentCount: count,
                                  assertForOverFulfill: false,
                                  fileID: fileID, filePath: filePath, line: line, column: column)
    let observing = Atomic<Bool>(true)
    let observer = SendableBox(center.addObserver(forName: name, object: nil, queue: nil) { notification in
      guard observing.load(ordering: .acquiring) else { return }
      if let object, (notification.object as AnyObject?) !== object { return }
      if filter?(notification) ?? true { expectation.fulfill(fileID: fileID, filePath: filePath, line: line, column: column) }
    })
    let center = SendableBox(center)
    expectation.onStopFulfilling {
      observing.store(false, ordering: .releasing)
      center.value.removeObserver(observer.value)
    }
    record.addCleanup { expectation.stopFulfillment() }
    return expectation
  }
}

/// Thrown to stop a test after an issue was recorded (a failed `require`, a failed or
/// interrupted wait). The runner does not report it again.
public struct TestStopped: Error, CustomStringConvertible {
  /// The message a user reads.
  public var description: String { "the test stopped after recording an issue" }
}
