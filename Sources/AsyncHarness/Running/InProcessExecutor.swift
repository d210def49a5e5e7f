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
  /// What becomes of the process after an `async` body was abandoned at its time limit.
  private let afterAbandonedBody: String

  /// Creates the executor.
  /// - Parameter capturesOutput: Whether what each test writes to standard output and
  ///   standard error (`print`, C `printf`) becomes its output (`outputCaptured` events)
  ///   instead of reaching the terminal: file descriptors 1 and 2 are redirected for the
  ///   length of each test, and the harness's own text goes to their saved copies. Off by
  ///   default (the XCTest and Swift Testing bridges leave the streams alone); suites
  ///   executables turn it on unless `--no-capture` is given.
  public init(capturesOutput: Bool = false) {
    self.init(capture: capturesOutput ? OutputCapture() : nil,
              afterAbandonedBody: ": this process now runs at risk, as the body may hold a thread of the cooperative pool "
                + "and starve later async tests (in a worker process, the default isolation, the worker is retired instead)")
  }

  /// The executor of a worker process, which its parent retires after an abandoned body.
  static var inWorker: InProcessExecutor {
    InProcessExecutor(capture: nil, afterAbandonedBody: ", so its worker process is retired: the next test runs in a fresh one")
  }

  private init(capture: OutputCapture?, afterAbandonedBody: String) {
    self.capture = capture
    self.afterAbandonedBody = afterAbandonedBody
  }

  /// Runs one step (a test under one waiter), streaming its issues and output to `events`
  /// as they happen.
  /// - Parameters:
  ///   - step: The test to run and how.
  ///   - events: Where its issues and output go.
  /// - Returns: ``AttemptEnd/returned(duration:)``: a test in this process always returns
  ///   (one that never does ends the run from the runner's watch).
  public func run(_ step: Runner.Step, events: EventSink) -> AttemptEnd {
    let start = ContinuousClock().now
    let record = TestRecord(id: step.id, events: events)
    let context = TestContext(record: record, waiter: step.waiter, defaultTimeout: step.defaultTimeout,
                              timeLimit: step.timeLimit, schedule: step.schedule, jitter: step.jitter)
    capture?.begin()
    TestRecord.$current.withValue(record) {
      TestRecord.$body.withValue(record) { execute(step.test, in: step.suite, with: context) }
    }
    capture?.end { record.capture($0) }
    record.end()
    return .returned(duration: start.duration(to: .now).timeInterval)
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
      context.recordTimeLimitExceeded("in its async body, which was cancelled and left running\(afterAbandonedBody)", at: location)
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
