import Dispatch
import Foundation
import Testing
import XCTest

/// Tests that keep a thread longer than a schedule's quiet period. Each passes in every order.
final class SlowXCTests: XCTestCase {
  /// A synchronous body: XCTest runs it on its main thread, outside any Swift concurrency job,
  /// so the schedule has nothing to run while it works. It is running, not stuck.
  func testASynchronousBodyLongerThanTheQuietPeriodPasses() {
    Thread.sleep(forTimeInterval: 0.5)  // deliberate: a body that keeps its thread past the quiet period
    XCTAssertTrue(true)
  }

  /// An async body that blocks its thread until a task it started runs: on Swift's own
  /// executors another thread runs the task; a schedule running one job at a time hands the
  /// jobs back to them, and says so.
  func testAJobBlockingOnAnotherJobPasses() async {
    let semaphore = DispatchSemaphore(value: 0)
    Task { semaphore.signal() }
    waitBlocking(for: semaphore)
    XCTAssertTrue(true)
  }

  /// An async body calling a synchronous API that blocks until a group's notify block runs.
  func testAJobWaitingForAGroupsNotifyBlockPasses() async {
    closeSynchronously()
    XCTAssertTrue(true)
  }

  /// A main-actor body that sends a block to a queue, then loops on the clock, as
  /// swift-dependencies' `testDeadlock` does: on real threads the block runs beside the loop.
  @MainActor func testABlockRunsBesideALoopOnTheClock() async {
    XCTAssertTrue(aBlockRanBesideALoopOnTheClock())
  }
}

/// Sends a block to a queue of its own, then loops on the clock for 150 ms without waiting for
/// it: whether the block ran meanwhile, beside the loop.
func aBlockRanBesideALoopOnTheClock() -> Bool {
  let ran = DispatchSemaphore(value: 0)
  DispatchQueue(label: "beside.the.loop", qos: .utility).async { ran.signal() }
  let start = ContinuousClock.now
  while start.duration(to: .now) < .milliseconds(150) {}  // deliberate: the loop on the clock under test
  return ran.wait(timeout: .now()) == .success
}

/// Closes a store synchronously, as async-kit's `syncShutdownGracefully()` does: a thread of
/// its own does the closing and leaves a group, whose notify block signals the semaphore the
/// caller blocks on.
func closeSynchronously() {
  let group = DispatchGroup()
  let queue = DispatchQueue(label: "store.closing")
  let closed = DispatchSemaphore(value: 0)
  group.enter()
  Thread { queue.async { group.leave() } }.start()
  group.notify(queue: queue) { closed.signal() }
  waitBlocking(for: closed)
}

/// An async test calling a synchronous API that blocks until a group's notify block runs: the
/// job blocks the schedule's thread, so the schedule hands its jobs (the notify block among
/// them) to Swift's own executors and Dispatch after a quiet period, and says so.
@Suite struct SlowTests {
  @Test func aJobWaitingForAGroupsNotifyBlockPasses() async {
    closeSynchronously()
    #expect(Bool(true))
  }

  @Test func aBlockRunsBesideALoopOnTheClock() async {
    #expect(aBlockRanBesideALoopOnTheClock())
  }
}

/// Blocks the calling thread until `semaphore` is signalled.
private func waitBlocking(for semaphore: DispatchSemaphore) {
  semaphore.wait()
}
