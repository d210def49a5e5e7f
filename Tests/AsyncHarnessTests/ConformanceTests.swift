import AsyncHarness
import AsyncHarnessConformance
import Synchronization
import XCTest

/// Every built-in strategy keeps the waiter contract.
final class ConformanceTests: XCTestCase {
  func testExpectationWaiter() { assertConforms(.expectation) }
  func testSemaphoreWaiter() { assertConforms(.semaphore) }
  func testProbePollerWaiter() { assertConforms(.probePoller) }
  func testNotificationWaiter() { assertConforms(.notification) }
  func testSynchronousWaiter() { assertConforms(.synchronous) }
  func testScheduledWaiter() { assertConforms(.scheduled, checks: [.contract, .scheduling, .swiftConcurrency]) }

  /// The Swift concurrency checks catch a strategy under which Swift concurrency escapes the
  /// schedule: here the synchronous one, whose queues run work inline and leave tasks to
  /// Swift's own executors.
  func testTheSwiftConcurrencyChecksCatchEveryPathThatEscapes() {
    let failures = WaiterConformance.run(SynchronousWaiter(), checks: .swiftConcurrency).failures
    for path in ["Task {}", "Task.detached", "child task", "actor hop", "main actor", "Task.yield", "sleep", "continuation"] {
      XCTAssertTrue(failures.contains { $0.contains(": \(path): ") }, "\(path) escapes and is named: \(failures)")
    }
    XCTAssertTrue(failures.contains { $0.contains("sleep: a run took ") && $0.hasSuffix(" s: its sleeps of 30 s did not run on virtual time") },
                  "\(failures)")
  }

  /// The determinism rule catches a strategy whose order changes from run to run: here
  /// the scheduled one with a new seed for every test.
  func testTheSchedulingChecksCatchAnOrderThatChangesBetweenRuns() {
    struct Reseeding: Waiter {
      let name = "reseeding"
      let seeds = Counter()
      func makeQueues(for test: QueueSetup) -> any TestQueues {
        ScheduledQueues(for: test, schedule: Schedule(seed: seeds.next(), policy: .randomWalk))
      }
      func block(on condition: WaitCondition, until deadline: ContinuousClock.Instant) {
        ScheduledWaiter().block(on: condition, until: deadline)
      }
      func suspend(on condition: WaitCondition, until deadline: ContinuousClock.Instant) async {
        await ScheduledWaiter().suspend(on: condition, until: deadline)
      }
    }
    let report = WaiterConformance.run(Reseeding(), checks: .scheduling)
    XCTAssertEqual(report.checked.count, 5)
    XCTAssertEqual(report.failures.count, 1, report.description)
    XCTAssertTrue(report.failures.first?.hasPrefix("scheduling: the same schedule gives the same order and events: 5 runs under schedule (none) gave ") == true,
                  report.description)
  }

  private func assertConforms(_ waiter: some Waiter, checks: WaiterConformance.Checks = .contract,
                              file: StaticString = #filePath, line: UInt = #line) {
    let report = WaiterConformance.run(waiter, checks: checks)
    XCTAssertEqual(report.failures, [], report.description, file: file, line: line)
    XCTAssertGreaterThan(report.checked.count, 20, file: file, line: line)
  }
}

/// Counts from 1, from any thread.
private final class Counter: Sendable {
  private let value = Atomic<UInt64>(0)
  func next() -> UInt64 { value.add(1, ordering: .relaxed).newValue }
}
