import Synchronization

/// Runs one test body outside a ``Runner``: the building block of bridges to other test
/// frameworks (Swift Testing runs tests off the main thread, in tasks, so the `async` waits
/// are the ones to use there).
package enum StandaloneTest {
  /// Runs `body` as the test `id` under `waiter`, then its teardown blocks, and returns its
  /// result; expectations the body created and never waited for fail it.
  ///
  /// With a `timeLimit`, every wait ends at the limit and the test errors, as under the
  /// runner; a body that is past its limit when it returns errors too. The body itself is
  /// not stopped: it runs in the host's task, which only the host can cancel (Swift
  /// Testing's `.timeLimit` trait does).
  /// - Parameters:
  ///   - id: the test's identity, as issues and messages name it.
  ///   - waiter: the waiter strategy of the test's waits.
  ///   - defaultTimeout: the timeout of waits that pass none.
  ///   - timeLimit: how long the test may take, counted from now; `nil`: no limit.
  ///   - sourceLocation: where a thrown error is attributed.
  ///   - lateIssue: receives issues that arrive after the test ended (late signals).
  ///   - body: the test.
  /// - Returns: the verdict and every issue recorded.
  package static func run(_ id: TestID, waiter: any Waiter, defaultTimeout: Duration = .seconds(1),
                         timeLimit: Duration? = nil, sourceLocation: SourceLocation,
                         lateIssue: @escaping @Sendable (TestID, Issue) -> Void,
                         body: (TestContext) async throws -> Void) async -> TestResult {
    let issues = Mutex<[Issue]>([])
    let record = TestRecord(id: id, events: EventSink { event in
      guard case .issueRecorded(let test, let issue) = event.kind else { return }
      if issue.kind == .lateSignal { lateIssue(test, issue) } else { issues.withLock { $0.append(issue) } }
    })
    let context = TestContext(record: record, waiter: waiter, defaultTimeout: defaultTimeout, timeLimit: timeLimit)
    var lifecycle = AttemptPieces(bodyAt: sourceLocation, in: context) {
      if let limit = context.timeLimit, ContinuousClock().now > limit.deadline {
        context.recordTimeLimitExceeded("in its body, which ran on past it", at: sourceLocation)
      }
    }
    await TestRecord.$current.withValue(record) {
      await TestRecord.$body.withValue(record) {
        record.markBodyTask()
        await lifecycle.run(body: body)
      }
    }
    record.end()
    return TestResult(judging: issues.withLock { $0 }, knownIssue: nil, at: sourceLocation)
  }
}
