import Foundation
import Synchronization

/// Runs each test in this process, on the calling thread: its set-up, body, teardown blocks
/// and tear-down, then the check that every expectation was waited for.
///
/// Call it on the main thread (as the runner does from a suites executable's top-level code
/// or a synchronous XCTest method), so blocking waits can turn the main run loop; `async`
/// bodies run in tasks while it turns the run loop.
public struct InProcessExecutor: TestExecutor {
  private let capture: OutputCapture?

  /// Creates the executor.
  /// - Parameter capturesOutput: Whether what each test writes to standard output and
  ///   standard error (`print`, C `printf`) becomes its output (`outputCaptured` events)
  ///   instead of reaching the terminal: file descriptors 1 and 2 are redirected for the
  ///   length of each test, and the harness's own text goes to their saved copies. Off by
  ///   default (the XCTest and Swift Testing bridges leave the streams alone); suites
  ///   executables turn it on unless `--no-capture` is given.
  public init(capturesOutput: Bool = false) {
    capture = capturesOutput ? OutputCapture() : nil
  }

  /// Runs one step (a test under one waiter), sending its events to `events` as they happen.
  /// - Parameters:
  ///   - step: The test to run and how.
  ///   - events: Where its events go.
  /// - Returns: How the test ended.
  public func run(_ step: Runner.Step, events: EventSink) -> TestResult {
    let start = ContinuousClock().now
    events(.testStarted(step.id))
    let record = TestRecord(id: step.id, events: events)
    let context = TestContext(record: record, waiter: step.waiter, defaultTimeout: step.defaultTimeout,
                              timeLimit: step.timeLimit, schedule: step.schedule, jitter: step.jitter)
    capture?.begin()
    TestRecord.$current.withValue(record) {
      TestRecord.$body.withValue(record) { execute(step.test, in: step.suite, with: context) }
    }
    capture?.end { record.capture($0) }
    return record.end { issues in
      let result = Runner.result(issues: issues, knownIssue: step.test.knownIssue, at: step.test.sourceLocation)
      events(.testEnded(step.id, result, duration: start.duration(to: .now).timeInterval))
      return result
    }
  }

  /// Stops capturing output.
  public func finish() {
    capture?.finish()
  }

  /// Runs the set-up, the body, the teardown blocks (last registered first) and the tear-down;
  /// then, when the body ran to its end, fails the test for expectations it never waited for.
  private func execute(_ test: Test, in suite: Suite, with context: TestContext) {
    let completed = capture(at: test.sourceLocation, in: context) {
      try suite.setUp?(context)
      switch test.body {
      case .blocking(let body):
        try body(context)
      case .async(let body):
        try runToCompletion(at: test.sourceLocation, in: context) { try await body(context) }
      }
    }
    for teardown in context.takeTeardowns() {
      switch teardown {
      case .blocking(let block, let location):
        capture(at: location, in: context, block)
      case .async(let block, let location):
        capture(at: location, in: context) { try runToCompletion(at: location, in: context, block) }
      }
    }
    capture(at: test.sourceLocation, in: context) { try suite.tearDown?(context) }
    if completed { context.recordUnwaitedExpectations() }
  }

  /// Runs an `async` body in a task, turning the main run loop (or parking this thread)
  /// until it finishes, and rethrows what it threw. At the test's time limit it records the
  /// limit, cancels the task and throws ``TestStopped``.
  private func runToCompletion(at location: SourceLocation, in context: TestContext,
                               _ body: @escaping @Sendable () async throws -> Void) throws {
    let outcome = Mutex<Result<Void, any Error>?>(nil)
    let finished = WaitCondition(summary: "the async test body", sourceLocation: location) {
      outcome.withLock { $0 != nil }
    }
    let record = context.record
    let task = Task {
      record.markBodyTask()
      let result: Result<Void, any Error>
      do { try await body(); result = .success(()) } catch { result = .failure(error) }
      outcome.withLock { $0 = result }
      finished.wake()
    }
    let noLimit = ContinuousClock().now.advanced(by: .seconds(365 * 24 * 3600))
    ExpectationWaiter().block(on: finished, until: context.timeLimit?.deadline ?? noLimit)
    guard outcome.withLock({ $0 != nil }) else {
      task.cancel()
      context.recordTimeLimitExceeded("in its async body, which was cancelled and left running", at: location)
      throw TestStopped()
    }
    try outcome.withLock { $0! }.get()
  }

  /// Runs `work`, recording what it throws; returns whether it ran to its end.
  @discardableResult
  private func capture(at location: SourceLocation, in context: TestContext, _ work: () throws -> Void) -> Bool {
    do {
      try work()
      return true
    } catch {
      context.recordThrown(error, at: location)
      return false
    }
  }
}
