import Foundation
import Synchronization

/// How a wait stands when the harness evaluates it.
enum WaitState: Sendable, Equatable {
  case pending
  case succeeded
  case failed(String)
}

/// A wait the test context is about to make: what it waits for and how to judge it.
struct WaitSpec: Sendable {
  var summary: String
  var location: SourceLocation
  var timeout: Duration
  var isPolled: Bool
  /// The wait's state; `timedOut` tells whether the deadline passed.
  var state: @Sendable (_ timedOut: Bool) -> WaitState
}

extension TestContext {
  // MARK: Waiting for expectations

  /// Waits until the expectations are fulfilled, blocking the test's thread.
  ///
  /// On the main thread the main run loop keeps turning. A failing issue recorded during
  /// the wait ends it at once.
  /// - Parameters:
  ///   - expectations: expectations created by this test, not waited for before.
  ///   - timeout: how long to wait; the context's ``defaultTimeout`` when `nil`.
  ///   - enforceOrder: whether they must be fulfilled in the order given.
  /// - Throws: ``TestStopped`` when the wait failed; the issue is already recorded.
  public func wait(for expectations: [Expectation], timeout: Duration? = nil, enforceOrder: Bool = false,
                   fileID: String = #fileID, filePath: String = #filePath,
                   line: Int = #line, column: Int = #column) throws {
    let location = SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    try claim(expectations, at: location)
    try blockingWait(expectationSpec(expectations, timeout: timeout, enforceOrder: enforceOrder, location: location))
  }

  /// Waits until one expectation is fulfilled, blocking the test's thread.
  public func wait(for expectation: Expectation, timeout: Duration? = nil,
                   fileID: String = #fileID, filePath: String = #filePath,
                   line: Int = #line, column: Int = #column) throws {
    try wait(for: [expectation], timeout: timeout, fileID: fileID, filePath: filePath, line: line, column: column)
  }

  /// Waits until the expectations are fulfilled, suspending the calling task.
  public func wait(for expectations: [Expectation], timeout: Duration? = nil, enforceOrder: Bool = false,
                   fileID: String = #fileID, filePath: String = #filePath,
                   line: Int = #line, column: Int = #column) async throws {
    let location = SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    try claim(expectations, at: location)
    try await suspendingWait(expectationSpec(expectations, timeout: timeout, enforceOrder: enforceOrder, location: location))
  }

  /// Waits until one expectation is fulfilled, suspending the calling task.
  public func wait(for expectation: Expectation, timeout: Duration? = nil,
                   fileID: String = #fileID, filePath: String = #filePath,
                   line: Int = #line, column: Int = #column) async throws {
    try await wait(for: [expectation], timeout: timeout, fileID: fileID, filePath: filePath, line: line, column: column)
  }

  // MARK: Waiting for a condition

  /// Waits until `condition` returns true, blocking the test's thread. The condition is
  /// re-evaluated as time passes (and, on the main thread, after work the run loop ran).
  public func wait(until condition: @escaping @Sendable () -> Bool, timeout: Duration? = nil,
                   fileID: String = #fileID, filePath: String = #filePath,
                   line: Int = #line, column: Int = #column) throws {
    let location = SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    try blockingWait(probeSpec(condition, timeout: timeout, location: location))
  }

  /// Waits until `condition` returns true, suspending the calling task.
  public func wait(until condition: @escaping @Sendable () -> Bool, timeout: Duration? = nil,
                   fileID: String = #fileID, filePath: String = #filePath,
                   line: Int = #line, column: Int = #column) async throws {
    let location = SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    try await suspendingWait(probeSpec(condition, timeout: timeout, location: location))
  }

  // MARK: Waiting for notifications

  /// Waits until `count` notifications named `name` (from `object`, when given, and
  /// accepted by `filter`) are posted on `center` after the wait begins, blocking the
  /// test's thread.
  ///
  /// Counting starts when the wait starts. When the code that posts may run before the
  /// wait (inline, or on another thread), create
  /// ``expectation(forNotification:object:center:count:where:fileID:filePath:line:column:)``
  /// first and wait for it.
  public func wait(for name: Notification.Name, object: (any AnyObject & Sendable)? = nil,
                   center: NotificationCenter = .default, count: Int = 1,
                   where filter: (@Sendable (Notification) -> Bool)? = nil, timeout: Duration? = nil,
                   fileID: String = #fileID, filePath: String = #filePath,
                   line: Int = #line, column: Int = #column) throws {
    let expectation = expectation(forNotification: name, object: object, center: center, count: count, where: filter,
                                  fileID: fileID, filePath: filePath, line: line, column: column)
    try wait(for: [expectation], timeout: timeout, fileID: fileID, filePath: filePath, line: line, column: column)
  }

  /// Waits until `count` matching notifications are posted after the wait begins,
  /// suspending the calling task.
  public func wait(for name: Notification.Name, object: (any AnyObject & Sendable)? = nil,
                   center: NotificationCenter = .default, count: Int = 1,
                   where filter: (@Sendable (Notification) -> Bool)? = nil, timeout: Duration? = nil,
                   fileID: String = #fileID, filePath: String = #filePath,
                   line: Int = #line, column: Int = #column) async throws {
    let expectation = expectation(forNotification: name, object: object, center: center, count: count, where: filter,
                                  fileID: fileID, filePath: filePath, line: line, column: column)
    try await wait(for: [expectation], timeout: timeout, fileID: fileID, filePath: filePath, line: line, column: column)
  }

  // MARK: The shared wait

  private func expectationSpec(_ expectations: [Expectation], timeout: Duration?, enforceOrder: Bool,
                               location: SourceLocation) -> WaitSpec {
    let timeout = timeout ?? defaultTimeout
    let labels = expectations.map { "\"\($0.expectationDescription)\"" }.joined(separator: ", ")
    return WaitSpec(summary: "the wait for \(labels)", location: location, timeout: timeout, isPolled: false) { timedOut in
      let outcome = ExpectationOutcome.evaluate(expectations.map(\.snapshot), enforceOrder: enforceOrder, timedOut: timedOut)
      if outcome == .pending { return .pending }
      return outcome.failureMessage(timeout: timeout).map(WaitState.failed) ?? .succeeded
    }
  }

  private func probeSpec(_ condition: @escaping @Sendable () -> Bool, timeout: Duration?,
                         location: SourceLocation) -> WaitSpec {
    let timeout = timeout ?? defaultTimeout
    return WaitSpec(summary: "the wait until a condition holds", location: location, timeout: timeout, isPolled: true) { timedOut in
      if condition() { return .succeeded }
      return timedOut ? .failed("Exceeded timeout of \(timeout.secondsDescription) seconds waiting until the condition held") : .pending
    }
  }

  /// Checks that the expectations may be waited for here (there are some, they belong to
  /// this test, none was waited for before) and marks them waited for.
  private func claim(_ expectations: [Expectation], at location: SourceLocation) throws {
    if expectations.isEmpty {
      throw misuse("API violation - call made to wait without any expectations having been set", at: location)
    }
    for expectation in expectations {
      if expectation.owner !== record {
        throw misuse("API violation - expectation \"\(expectation.expectationDescription)\" created at \(expectation.sourceLocation) belongs to another test (\(expectation.owner.id.path))", at: location)
      }
      let earlier = expectation.state.withLock { state -> SourceLocation? in
        if let earlier = state.waitedAt { return earlier }
        state.waitedAt = location
        return nil
      }
      if let earlier {
        throw misuse("API violation - expectation \"\(expectation.expectationDescription)\" created at \(expectation.sourceLocation) was already waited on at \(earlier); waited on again at \(location)", at: location)
      }
    }
  }

  /// Checks the wait may begin and registers it as the test's wait in progress.
  private func beginWait(_ spec: WaitSpec) throws -> WaitCondition {
    let record = record
    let condition = WaitCondition(
      summary: spec.summary, isPolled: spec.isPolled, sourceLocation: spec.location,
      recordWarning: { record.record($0) },
      isDone: { spec.state(false) != .pending || record.failureCount > 0 })
    if let activeLocation = record.beginWait(.init(condition: condition, location: spec.location)) {
      throw misuse("API violation - nested wait at \(spec.location) while the wait made at \(activeLocation) is in progress", at: spec.location)
    }
    return condition
  }

  /// The instant a wait made now gives up: its timeout, or the test's time limit when
  /// that comes first.
  private func deadline(of spec: WaitSpec) -> (wait: ContinuousClock.Instant, effective: ContinuousClock.Instant) {
    let wait = ContinuousClock().now.advanced(by: spec.timeout)
    return (wait, min(wait, timeLimit?.deadline ?? wait))
  }

  /// Judges a wait after the waiter returned: records the failure, if any, and stops the
  /// test when the wait did not succeed.
  private func concludeWait(_ spec: WaitSpec, deadline: ContinuousClock.Instant) throws {
    record.endWait()
    let now = ContinuousClock().now
    switch spec.state(now >= deadline) {
    case .succeeded:
      return
    case .failed(let message):
      record(Issue(kind: .waitFailed, message: message, sourceLocation: spec.location))
      throw TestStopped()
    case .pending where record.failureCount > 0:
      // A failing issue recorded during the wait ended it early (fail fast).
      throw TestStopped()
    case .pending where timeLimit.map { now >= $0.deadline } ?? false:
      recordTimeLimitExceeded("during \(spec.summary)", at: spec.location)
      throw TestStopped()
    case .pending:
      throw misuse("Waiter \"\(waiter.name)\" returned before \(spec.summary) was done and before its timeout of \(spec.timeout.secondsDescription) seconds", at: spec.location)
    }
  }

  func blockingWait(_ spec: WaitSpec) throws {
    if MainThreadPump.isInsideCallout {
      throw misuse("A blocking wait cannot run inside a main-queue callout: the main run loop cannot turn here. Use `try await t.wait(...)` instead", at: spec.location)
    }
    let condition = try beginWait(spec)
    let deadline = deadline(of: spec)
    waiter.block(on: condition, until: deadline.effective)
    try concludeWait(spec, deadline: deadline.wait)
  }

  func suspendingWait(_ spec: WaitSpec) async throws {
    let condition = try beginWait(spec)
    let deadline = deadline(of: spec)
    await waiter.suspend(on: condition, until: deadline.effective)
    try concludeWait(spec, deadline: deadline.wait)
  }

  func misuse(_ message: String, at location: SourceLocation) -> TestStopped {
    record(Issue(kind: .apiMisused, message: message, sourceLocation: location))
    return TestStopped()
  }
}
