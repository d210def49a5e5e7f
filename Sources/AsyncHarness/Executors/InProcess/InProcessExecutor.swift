import Foundation
import Synchronization

/// Runs each test in this process, on the calling thread: its set-up, body, teardown blocks
/// and tear-down, then the check that every expectation was waited for.
///
/// Call it on the main thread (as the runner does from a suites executable's top-level code
/// or a synchronous XCTest method), so blocking waits can turn the main run loop; `async`
/// bodies run in tasks while it turns the run loop.
@_spi(ForToolsIntegrationOnly) public struct InProcessExecutor: TestExecutor {
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
  @_spi(ForToolsIntegrationOnly) public init(capturesOutput: Bool = false) {
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

  /// Runs one test (a test under one waiter), streaming its issues and output to `events`
  /// as they happen.
  /// - Parameters:
  ///   - test: The test to run and how.
  ///   - events: Where its issues and output go.
  /// - Returns: ``AttemptEnd/returned(duration:trace:)``: a test in this process always
  ///   returns (one that never does ends the run from the runner's watch).
  @_spi(ForToolsIntegrationOnly) public func run(_ planned: Runner.PlannedTest, events: EventSink) -> AttemptEnd {
    attempt(planned, events: events).end
  }

  /// Runs one test as ``run(_:events:)`` does, and says whether the test ran past its time
  /// limit (a worker process is then retired).
  /// - Parameter afterAsyncCode: called at the end of each piece of the test's `async`
  ///   code, on its task, before the test goes on (a worker's leak check sends its
  ///   canaries there).
  func attempt(_ planned: Runner.PlannedTest, events: EventSink,
               afterAsyncCode: (@Sendable () -> Void)? = nil) -> (end: AttemptEnd, exceededTimeLimit: Bool) {
    guard let (suite, test, waiter) = planned.harness else { return (Self.notHarness(planned), false) }
    let start = ContinuousClock().now
    let (record, context) = Self.context(of: planned, under: waiter, events: events)
    let hooks = Hooks(scope: waiter.scope(for: context), afterAsyncCode: afterAsyncCode)
    capture?.begin()
    TestRecord.$current.withValue(record) {
      TestRecord.$body.withValue(record) { execute(test, in: suite, with: context, hooks: hooks) }
    }
    capture?.end { record.capture($0) }
    record.end()
    return (.returned(duration: start.duration(to: .now).timeInterval, trace: hooks.scope?.trace), record.exceededTimeLimit)
  }

  /// Runs one attempt of an `async` test in the calling task, side by side with others (a
  /// worker's `start` request, ``WorkerRequest/start(_:)``): its set-up, body, teardown blocks
  /// and tear-down. The task carries the test's record, so what the test records, its waits
  /// and expectations stay its own while other tests run. The test has no strategy's scope
  /// (the scheduled strategy keeps a test alone in its process) and no time limit of its own
  /// outside its waits: its parent stops the worker when it runs past its limit.
  func attemptSideBySide(_ planned: Runner.PlannedTest, events: EventSink) async -> (end: AttemptEnd, exceededTimeLimit: Bool) {
    guard let (suite, test, waiter) = planned.harness else { return (Self.notHarness(planned), false) }
    let start = ContinuousClock().now
    let (record, context) = Self.context(of: planned, under: waiter, events: events)
    await TestRecord.$current.withValue(record) {
      await TestRecord.$body.withValue(record) {
        record.markBodyTask()
        var lifecycle = AttemptPieces(test, of: suite, in: context)
        await lifecycle.run()
      }
    }
    record.end()
    return (.returned(duration: start.duration(to: .now).timeInterval, trace: nil), record.exceededTimeLimit)
  }

  /// How a test that is no harness test ends here: another package's test runs only in its
  /// own test bundle (``BundleExecutor``).
  private static func notHarness(_ planned: Runner.PlannedTest) -> AttemptEnd {
    .couldNotStart(reason: "\(planned.id.path) is a test of another package's test bundle, which only that bundle runs")
  }

  /// A test's record and context as an attempt starts.
  private static func context(of planned: Runner.PlannedTest, under waiter: any Waiter,
                              events: EventSink) -> (TestRecord, TestContext) {
    let record = TestRecord(id: planned.id, events: events)
    return (record, TestContext(record: record, waiter: waiter, defaultTimeout: planned.defaultTimeout,
                                timeLimit: planned.timeLimit, schedule: planned.schedule, jitter: planned.jitter,
                                reportsWaits: planned.reportsWaits))
  }

  /// Stops capturing output.
  @_spi(ForToolsIntegrationOnly) public func finish() {
    capture?.finish()
  }

  /// What surrounds the test's `async` code: the strategy's scope, when it has one, and
  /// what runs at the end of each piece.
  private struct Hooks {
    var scope: (any WaiterScope)?
    var afterAsyncCode: (@Sendable () -> Void)?
  }

  /// Runs the test's life (``AttemptPieces``) on this thread; its `async` code runs in the
  /// strategy's scope, when it has one.
  private func execute(_ test: Test, in suite: Suite, with context: TestContext, hooks: Hooks) {
    var lifecycle = AttemptPieces(test, of: suite, in: context)
    lifecycle.run { work, location in try runToCompletion(at: location, in: context, hooks: hooks, work) }
  }

  /// Runs an `async` body in a task, turning the main run loop (or parking this thread)
  /// until it finishes, or has the strategy's `scope` run it; rethrows what it threw. At the
  /// test's time limit it records the limit, cancels the task and throws ``TestStopped``; so
  /// it does when the scope finds the body stuck, recording why.
  private func runToCompletion(at location: SourceLocation, in context: TestContext, hooks: Hooks,
                               _ body: @escaping @Sendable () async throws -> Void) throws {
    let outcome = BodyOutcome()
    let finished = WaitCondition(summary: "the async test body", sourceLocation: location,
                                 recordWarning: { [record = context.record] in record.record($0) }) { outcome.isSet }
    let record = context.record
    // Code a scope runs is the scope's own: nothing joins it at its end.
    let afterAsyncCode = hooks.scope == nil ? hooks.afterAsyncCode : nil
    let start: @Sendable () -> Task<Void, Never> = {
      // The task copies the test's task-locals, which the driver's thread lacks.
      TestRecord.$current.withValue(record) {
        TestRecord.$body.withValue(record) {
          Task {
            record.markBodyTask()
            let result: Result<Void, any Error>
            do { try await body(); result = .success(()) } catch { result = .failure(error) }
            afterAsyncCode?()
            outcome.set(result)
            finished.wake()
          }
        }
      }
    }
    let deadline = context.timeLimit?.deadline ?? ContinuousClock().now.advanced(by: .seconds(365 * 24 * 3600))
    let started = Mutex<Task<Void, Never>?>(nil)
    let run = hooks.scope?.runAsyncCode(until: deadline, finished: finished) { started.withLock { $0 = start() } } ?? .declined
    if run == .declined {
      started.withLock { $0 = start() }
      finished.blockParked(deadline: deadline)
    }
    let task = started.withLock { $0 }
    if case .stuck(let issue) = run {
      task?.cancel()
      context.record(issue)
      throw TestStopped()
    }
    guard let result = outcome.result else {
      task?.cancel()
      context.recordTimeLimitExceeded("in its async body, which was cancelled and left running\(afterAbandonedBody)", at: location)
      throw TestStopped()
    }
    try result.get()
  }
}

/// What an `async` body's task ended with, once it has.
private final class BodyOutcome: Sendable {
  private let state = Mutex<Result<Void, any Error>?>(nil)

  var result: Result<Void, any Error>? { state.withLock { $0 } }
  var isSet: Bool { result != nil }

  func set(_ result: Result<Void, any Error>) {
    state.withLock { $0 = result }
  }
}
