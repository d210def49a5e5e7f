@_spi(ForToolsIntegrationOnly) import AsyncHarness
import Foundation
import Synchronization

/// Where a test body of ours waits.
enum Place: String, CaseIterable, Sendable {
  /// A blocking body run by a runner on the main thread: waits turn the main run loop.
  case main = "main"
  /// A blocking body run by a runner on a background thread: waits park the thread.
  case offMain = "off-main"
  /// An `async` body (`try await t.wait(...)`), run in a task while the runner turns the
  /// main run loop.
  case async = "async"
}

/// The built-in strategies that wait in real time, in registry order: the scheduled one
/// runs the test's work itself on virtual time, so it has a part of its own
/// (`measureScheduling`).
let builtInWaiters: [any Waiter] = WaiterRegistry.builtIn.waiters.filter { !($0 is ScheduledWaiter) }

/// Remembers the failing issues of a run, to tell a benchmark that measured failures
/// from one whose tests should have passed.
final class FailureSampler: Reporter {
  private let sample = Mutex<(failures: Int, first: String?)>((0, nil))

  var failures: Int { sample.withLock { $0.failures } }
  var first: String? { sample.withLock { $0.first } }

  func handle(_ event: Event) {
    guard case .issueRecorded(_, let issue) = event.kind, issue.isFailure else { return }
    sample.withLock { sample in
      sample.failures += 1
      if sample.first == nil { sample.first = issue.message }
    }
  }
}

/// What a run of our runner showed.
struct RunOutcome: Sendable {
  var summary: Summary
  var seconds: Double
  var failures: Int
  var firstFailure: String?
}

/// Builds a test whose body blocks or suspends, as `place` asks.
func makeTest(_ name: String, _ place: Place,
              blocking: @escaping @Sendable (TestContext) throws -> Void,
              suspending: @escaping @Sendable (TestContext) async throws -> Void) -> Test {
  place == .async ? Test(name, body: suspending) : Test(name, body: blocking)
}

/// Runs one suite under `waiter` with our runner, on the main thread or on a background
/// thread as `place` asks, as a user's suites executable would; `reporters` are made just
/// before the run (report files are opened then) and run after the console's.
func runOurs(_ tests: [Test], waiter: any Waiter, place: Place, console: Bool = false,
             reporters makeReporters: @escaping @Sendable () -> [any Reporter] = { [] }) -> RunOutcome {
  let suite = Suite("bench", waiter: waiter) { tests }
  let run: @Sendable () -> RunOutcome = { runOurs(suite, console: console, reporters: makeReporters) }
  return place == .offMain ? onBackgroundThread(run) : run()
}

/// Runs `suite` with our runner on this thread, its tests run by `executor`; `console` adds
/// a console reporter formatting every line into `/dev/null`.
func runOurs(_ suite: Suite, executor: any TestExecutor = InProcessExecutor(), console: Bool = false,
             reporters makeReporters: () -> [any Reporter] = { [] }) -> RunOutcome {
  runOurs([suite], executor: executor, console: console, reporters: makeReporters)
}

/// Runs the tests `configuration` selects of `suites` (a worker finds each test by its place
/// among them, so a worker's run is given every suite the worker builds).
func runOurs(_ suites: [Suite], configuration: Configuration = Configuration(), executor: any TestExecutor,
             console: Bool = false, reporters makeReporters: () -> [any Reporter] = { [] }) -> RunOutcome {
  let sampler = FailureSampler()
  var reporters: [any Reporter] = [sampler]
  if console {
    // A console reporter formatting every line, written to /dev/null like the anchors'.
    let sink = FileHandle(forWritingAtPath: "/dev/null")
    reporters.append(ConsoleReporter(style: .plain) { sink?.write(Data($0.utf8)) })
  }
  let start = monotonicNanos()
  reporters += makeReporters()
  let summary = (try? Runner(suites: suites, configuration: configuration, executor: executor, reporters: reporters).run())
    ?? Summary()
  return RunOutcome(summary: summary, seconds: Double(monotonicNanos() - start) / 1e9,
                    failures: sampler.failures, firstFailure: sampler.first)
}

/// `count` trivially-async tests: a callback on the test's background queue fulfills, the
/// test waits, blocking or suspending as `place` asks.
func trivialTests(count: Int, _ place: Place) -> [Test] {
  (0..<count).map { index in
    makeTest("test \(index)", place, blocking: { t in
      let done = t.expectation("done")
      t.background.async { done.fulfill() }
      try t.wait(for: done)
    }, suspending: { t in
      let done = t.expectation("done")
      t.background.async { done.fulfill() }
      try await t.wait(for: done)
    })
  }
}
