@testable @_spi(ForToolsIntegrationOnly) import AsyncHarness
import Synchronization
import XCTest

/// The worker, not its parent, says when it must be retired: its executor reports a test that
/// ran past its time limit from the test's own record, and only such a test.
final class WorkerRetirementTests: XCTestCase {
  /// Runs `test` as a worker runs it, with a time limit of 0.2 s and waits of 10 s; returns
  /// whether the worker must be retired and the kinds of the issues the test recorded.
  private func runInWorker(_ test: Test) throws -> (exceededTimeLimit: Bool, issues: [Issue.Kind]) {
    var configuration = Configuration()
    configuration.timeLimit = .milliseconds(200)
    configuration.defaultTimeout = .seconds(10)
    configuration.waiters = .named("semaphore")
    let plan = try Runner.Plan(suites: [Suite("Retire") { test }], configuration: configuration, registry: .builtIn)
    let step = try XCTUnwrap(plan.plannedTests(of: plan.entries[0], repetition: 1).first)
    let issues = Mutex<[Issue.Kind]>([])
    let events = EventSink { event in
      if case .issueRecorded(_, let issue) = event.kind { issues.withLock { $0.append(issue.kind) } }
    }
    let (_, exceededTimeLimit) = InProcessExecutor.inWorker.attempt(step, events: events)
    return (exceededTimeLimit, issues.withLock { $0 })
  }

  func testATestThatReachesItsTimeLimitInAWaitRetiresItsWorker() throws {
    let run = try runInWorker(Test("waits past its limit") { t in
      try t.wait(for: t.expectation("never fulfilled"))
    })
    XCTAssertEqual(run.issues, [.timeLimitExceeded])
    XCTAssertTrue(run.exceededTimeLimit)
  }

  func testAnAsyncBodyAbandonedAtItsTimeLimitRetiresItsWorker() throws {
    let release = Release()
    defer { release.done.store(true, ordering: .relaxed) }
    let run = try runInWorker(Test("spins past its limit") { _ async in
      while !release.done.load(ordering: .relaxed) { await Task.yield() }
    })
    XCTAssertEqual(run.issues, [.timeLimitExceeded])
    XCTAssertTrue(run.exceededTimeLimit)
  }

  func testAFailingOrPassingTestKeepsItsWorker() throws {
    let failing = try runInWorker(Test("fails") { t in t.fail("on purpose") })
    XCTAssertEqual(failing.issues, [.expectationFailed])
    XCTAssertFalse(failing.exceededTimeLimit)
    XCTAssertFalse(try runInWorker(Test("passes") { t in t.expect(true) }).exceededTimeLimit)
  }
}

/// Lets the body a test abandoned end when the test is over.
private final class Release: Sendable {
  let done = Atomic(false)
}
