public import AsyncHarness
import Foundation
public import Testing

/// Runs `body` with a harness `TestContext` inside a Swift Testing test,
/// and records every issue it reports as a Swift Testing issue at the issue's own location
/// (warnings as warnings).
///
/// Swift Testing never runs tests on the main thread, so use the `await` forms of the waits:
///
/// ```swift
/// @Test(.waiter(.semaphore)) func greets() async {
///   await withHarness { t in
///     let loaded = t.expectation("loaded")
///     loader.load { _ in loaded.fulfill() }
///     try await t.wait(for: loaded)
///   }
/// }
/// ```
/// - Parameters:
///   - waiter: the strategy; by default the one chosen with the `.waiter(...)` trait, else
///     `expectation`.
///   - timeout: the timeout of waits that pass none.
///   - timeLimit: how long the body may take: its waits end at the limit and the test
///     errors, as under the harness's runner. By default the Swift Testing test's own
///     `.timeLimit` trait, else none. The body itself is not stopped at the limit: Swift
///     Testing's `.timeLimit` stops it.
///   - fileID: The caller's file ID; leave the default.
///   - filePath: The caller's file path; leave the default.
///   - line: The caller's line; leave the default.
///   - column: The caller's column; leave the default.
///   - body: The test's body, given the harness context `t`.
/// - Returns: the harness's result, for further checks.
@discardableResult
public func withHarness(waiter: (any AsyncHarness.Waiter)? = nil, timeout: Duration = .seconds(1),
                        timeLimit: Duration? = Testing.Test.current?.timeLimit,
                        fileID: String = #fileID, filePath: String = #filePath,
                        line: Int = #line, column: Int = #column,
                        _ body: (AsyncHarness.TestContext) async throws -> Void) async -> TestResult {
  let chosen = waiter ?? WaiterTrait.current ?? ExpectationWaiter()
  let location = AsyncHarness.SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
  let id = TestID(suite: Testing.Test.current?.id.moduleName ?? "SwiftTesting", name: Testing.Test.current?.name ?? "withHarness",
                  host: chosen.name)
  let result = await StandaloneTest.run(id, waiter: chosen, defaultTimeout: timeout, timeLimit: timeLimit,
                                        sourceLocation: location,
                                        lateIssue: { test, issue in
    FileHandle.standardError.write(Data("AsyncHarness: \(test): \(issue.description)\n".utf8))
  }, body: body)
  for issue in result.issues {
    let where_ = issue.sourceLocation ?? location
    Testing.Issue.record(Comment(rawValue: issue.message), severity: issue.isFailure ? .error : .warning,
                 sourceLocation: Testing.SourceLocation(fileID: where_.fileID, filePath: where_.filePath,
                                                        line: where_.line, column: where_.column))
  }
  return result
}

/// Chooses the waiter strategy that ``withHarness(waiter:timeout:timeLimit:fileID:filePath:line:column:_:)``
/// uses in a test, or in every test of a suite.
public struct WaiterTrait: Testing.TestTrait, Testing.SuiteTrait, Testing.TestScoping {
  /// The chosen strategy.
  public let waiter: any AsyncHarness.Waiter

  @TaskLocal static var current: (any AsyncHarness.Waiter)?

  /// `true`: a suite's waiter applies to every test in it, nested suites included.
  public var isRecursive: Bool { true }

  /// Runs the test with this trait's waiter as the one ``withHarness(waiter:timeout:timeLimit:fileID:filePath:line:column:_:)`` uses.
  /// - Parameters:
  ///   - test: The test.
  ///   - testCase: The test case, for a parameterized test.
  ///   - function: The test's body.
  /// - Throws: What the test's body throws.
  public func provideScope(for test: Testing.Test, testCase: Testing.Test.Case?,
                           performing function: @Sendable () async throws -> Void) async throws {
    try await Self.$current.withValue(waiter, operation: function)
  }
}

extension Trait where Self == WaiterTrait {
  /// Runs ``withHarness(waiter:timeout:timeLimit:fileID:filePath:line:column:_:)`` under this waiter strategy.
  public static func waiter(_ waiter: some AsyncHarness.Waiter) -> Self {
    WaiterTrait(waiter: waiter)
  }
}
