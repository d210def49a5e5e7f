import Foundation

/// The public forms of waiting: each checks what it is given, builds the wait's spec and
/// hands it to the wait engine (WaitEngine.swift), which every form and every strategy share.
extension TestContext {
  // MARK: Waiting for expectations

  /// Waits until the expectations are fulfilled, blocking the test's thread.
  ///
  /// On the main thread the main run loop keeps turning. A failing issue recorded during
  /// the wait ends it at once and stops the test, so code after the wait never runs
  /// against unfinished work.
  /// - Parameters:
  ///   - expectations: expectations created by this test, not waited for before.
  ///   - timeout: how long to wait; the context's ``defaultTimeout`` when `nil`.
  ///   - enforceOrder: whether they must be fulfilled in the order given.
  ///   - fileID: The caller's file ID; leave the default.
  ///   - filePath: The caller's file path; leave the default.
  ///   - line: The caller's line; leave the default.
  ///   - column: The caller's column; leave the default.
  /// - Throws: ``TestStopped`` when the wait failed or a failure was recorded during it;
  ///   the issue is already recorded.
  @available(*, noasync, message: "use try await t.wait(for:) in async code")
  public func wait(for expectations: [Expectation], timeout: Duration? = nil, enforceOrder: Bool = false,
                   fileID: String = #fileID, filePath: String = #filePath,
                   line: Int = #line, column: Int = #column) throws {
    let location = SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    try claim(expectations, at: location)
    try finish(blockingWait(expectationSpec(expectations, timeout: timeout, enforceOrder: enforceOrder, location: location)))
  }

  /// Waits until one expectation is fulfilled, blocking the test's thread.
  @available(*, noasync, message: "use try await t.wait(for:) in async code")
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
    try finish(await suspendingWait(expectationSpec(expectations, timeout: timeout, enforceOrder: enforceOrder, location: location)))
  }

  /// Waits until one expectation is fulfilled, suspending the calling task.
  public func wait(for expectation: Expectation, timeout: Duration? = nil,
                   fileID: String = #fileID, filePath: String = #filePath,
                   line: Int = #line, column: Int = #column) async throws {
    try await wait(for: [expectation], timeout: timeout, fileID: fileID, filePath: filePath, line: line, column: column)
  }

  // MARK: Waiting for a result

  /// Waits for the expectations like `wait(for:timeout:enforceOrder:)`
  /// but reports how the wait ended instead of failing: a timeout, an order violation or a
  /// fulfilled inverted expectation records nothing. For "did it happen within T?" logic,
  /// like `XCTWaiter().wait(for:timeout:)`.
  ///
  /// ```swift
  /// if t.result(waitingFor: [cached], timeout: .milliseconds(50)) == .timedOut {
  ///   try t.wait(for: [fetched])
  /// }
  /// ```
  ///
  /// Misuse (waiting twice, a nested wait, a blocking wait where none can run) is still
  /// recorded, and the result is then ``WaitResult/interrupted``; so is a wait ended by a
  /// failing issue or by the test's time limit.
  @available(*, noasync, message: "use await t.result(waitingFor:) in async code")
  public func result(waitingFor expectations: [Expectation], timeout: Duration? = nil, enforceOrder: Bool = false,
                     fileID: String = #fileID, filePath: String = #filePath,
                     line: Int = #line, column: Int = #column) -> WaitResult {
    let location = SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    do {
      try claim(expectations, at: location)
      return result(of: try blockingWait(expectationSpec(expectations, timeout: timeout, enforceOrder: enforceOrder,
                                                         location: location)))
    } catch {
      return .interrupted
    }
  }

  /// Waits for the expectations, suspending the calling task, and reports how the wait
  /// ended instead of failing.
  public func result(waitingFor expectations: [Expectation], timeout: Duration? = nil, enforceOrder: Bool = false,
                     fileID: String = #fileID, filePath: String = #filePath,
                     line: Int = #line, column: Int = #column) async -> WaitResult {
    let location = SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    do {
      try claim(expectations, at: location)
      return result(of: try await suspendingWait(expectationSpec(expectations, timeout: timeout,
                                                                 enforceOrder: enforceOrder, location: location)))
    } catch {
      return .interrupted
    }
  }

  // MARK: Waiting for a condition

  /// Waits until `condition` returns true, blocking the test's thread. The condition is
  /// re-evaluated as time passes (and, on the main thread, after work the run loop ran).
  ///
  /// The wait is judged by the evaluation that ended it: a condition that held and then
  /// changed back has still been met.
  @available(*, noasync, message: "use try await t.wait(until:) in async code")
  public func wait(until condition: @escaping @Sendable () -> Bool, timeout: Duration? = nil,
                   fileID: String = #fileID, filePath: String = #filePath,
                   line: Int = #line, column: Int = #column) throws {
    let location = SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    try finish(blockingWait(probeSpec(nil, condition, timeout: timeout, location: location)))
  }

  /// Waits until `condition` returns true, blocking the test's thread; `description` says
  /// what is awaited, so a timeout reads `… waiting until "model loaded"`.
  ///
  /// ```swift
  /// try t.wait(until: "model loaded") { model.isLoaded }
  /// ```
  @available(*, noasync, message: "use try await t.wait(until:) in async code")
  public func wait(until description: String, timeout: Duration? = nil,
                   fileID: String = #fileID, filePath: String = #filePath,
                   line: Int = #line, column: Int = #column,
                   _ condition: @escaping @Sendable () -> Bool) throws {
    let location = SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    try finish(blockingWait(probeSpec(description, condition, timeout: timeout, location: location)))
  }

  /// Waits until `condition` returns true, suspending the calling task.
  public func wait(until condition: @escaping @Sendable () -> Bool, timeout: Duration? = nil,
                   fileID: String = #fileID, filePath: String = #filePath,
                   line: Int = #line, column: Int = #column) async throws {
    let location = SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    try finish(await suspendingWait(probeSpec(nil, condition, timeout: timeout, location: location)))
  }

  /// Waits until `condition` returns true, suspending the calling task; `description` says
  /// what is awaited.
  public func wait(until description: String, timeout: Duration? = nil,
                   fileID: String = #fileID, filePath: String = #filePath,
                   line: Int = #line, column: Int = #column,
                   _ condition: @escaping @Sendable () -> Bool) async throws {
    let location = SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    try finish(await suspendingWait(probeSpec(description, condition, timeout: timeout, location: location)))
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
  ///
  /// A notification has no owner: without `object:`, a post from work an earlier test left
  /// running can satisfy this wait. Pass the object the code under test posts from:
  ///
  /// ```swift
  /// try t.wait(for: .didSave, object: store)
  /// ```
  @available(*, noasync, message: "use try await t.wait(for:) in async code")
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
  /// suspending the calling task. Pass `object:` so that posts from other work (an earlier
  /// test's) cannot satisfy it.
  public func wait(for name: Notification.Name, object: (any AnyObject & Sendable)? = nil,
                   center: NotificationCenter = .default, count: Int = 1,
                   where filter: (@Sendable (Notification) -> Bool)? = nil, timeout: Duration? = nil,
                   fileID: String = #fileID, filePath: String = #filePath,
                   line: Int = #line, column: Int = #column) async throws {
    let expectation = expectation(forNotification: name, object: object, center: center, count: count, where: filter,
                                  fileID: fileID, filePath: filePath, line: line, column: column)
    try await wait(for: [expectation], timeout: timeout, fileID: fileID, filePath: filePath, line: line, column: column)
  }
}
