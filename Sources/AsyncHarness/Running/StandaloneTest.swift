/// Runs one test body outside a ``Runner``: the building block of bridges to other test
/// frameworks (Swift Testing runs tests off the main thread, in tasks, so the `async` waits
/// are the ones to use there).
public enum StandaloneTest {
  /// Runs `body` as the test `id` under `waiter` and returns its result.
  /// - Parameters:
  ///   - id: the test's identity, as issues and messages name it.
  ///   - waiter: the waiter strategy of the test's waits.
  ///   - defaultTimeout: the timeout of waits that pass none.
  ///   - sourceLocation: where a thrown error is attributed.
  ///   - lateIssue: receives issues that arrive after the test ended (late signals).
  ///   - body: the test.
  /// - Returns: the verdict and every issue recorded.
  public static func run(_ id: TestID, waiter: any Waiter, defaultTimeout: Duration = .seconds(1),
                         sourceLocation: SourceLocation,
                         lateIssue: @escaping @Sendable (TestID, Issue) -> Void,
                         body: (TestContext) async throws -> Void) async -> TestResult {
    let record = TestRecord(id: id, lateIssues: LateIssueQueue(forward: lateIssue))
    let context = TestContext(record: record, waiter: waiter, defaultTimeout: defaultTimeout)
    do {
      try await TestRecord.$current.withValue(record) { try await body(context) }
    } catch {
      context.recordThrown(error, at: sourceLocation)
    }
    return Runner.result(issues: record.end().issues, knownIssue: nil, at: sourceLocation)
  }
}
