// What an XCTest test's end waits for under a schedule, in the library `harness test` preloads
// into a package's test bundle (see AsyncHarnessBundleExplorer.swift). Under `--explore` each
// test runs alone in its bundle, which ends as the test does: work the test left (a Dispatch
// block sent for later, a detached task's sleep, a thread it started) that fails a moment after
// it returned would never run, where under `swift test` it fails the test running then. So,
// once the test's `tearDown()` ran, its end waits for that work, at most
// ``BundleExplorer/graceAfterATest``, in a short run of an XCTest test case of this library's
// own (``WorkLeftCase``), which XCTest's failures then go to as they would go to the next test
// under `swift test`: each is the ended test's own. Work its `tearDown()` cancels (a watchdog)
// is gone by then, as under `swift test`. A test that left nothing waits for nothing. A Swift
// Testing test's end is written by the job that ends it, holding the event stream's lock,
// which the work left needs to record an issue: that job does not wait; the schedule parks its
// testing library's jobs instead, so that the run goes on only once the work left ran
// (``ExplorerScheduler/graceBegins()``).
#if os(Linux)
import Glibc
import Synchronization
import XCTest

/// The moment after an XCTest test's `tearDown()` in which the work it left can still fail it,
/// under a schedule: a test case of this library's own, run (and seen by the channel's observer,
/// which tells nothing of it but the failures, as the ended test's) just before that test's end
/// is written. While it runs, XCTest's assertions from any thread fail it, as they would fail
/// the next test of a `swift test` run.
final class WorkLeftCase: XCTestCase {
  /// The ID of the test whose work left this waits for, as the channel names it.
  private(set) var test = ""
  /// The failures recorded while it waited.
  let failures = Atomic(0)

  /// Waits for the work `test` left, after its `tearDown()`; returns how many failures it recorded.
  static func awaitWorkLeft(by test: String) -> Int {
    let workLeft = WorkLeftCase(name: "awaitWorkLeft", testClosure: { _ in })
    workLeft.test = test
    workLeft.run()
    return workLeft.failures.load(ordering: .sequentiallyConsistent)
  }

  /// No `setUp()`, no body, no `tearDown()`: only the wait.
  override func invokeTest() {
    BundleExplorer.awaitWorkLeft()
  }
}
#endif

#if os(Linux) && compiler(>=6.3)
extension BundleExplorer {
  /// How long a test's end waits, at most, for the work it left: work due later (a timer an
  /// hour away) is not waited for.
  static let graceAfterATest: Duration = .milliseconds(300)

  /// Whether a schedule runs this bundle's work.
  static var exploring: Bool { scheduler != nil }

  /// Waits for the work the running test left, before its end: see ``ExplorerScheduler/awaitWorkLeft()``.
  static func awaitWorkLeft() {
    scheduler?.awaitWorkLeft()
  }

  /// A Swift Testing test ended: its testing library waits while the work it left can still
  /// run (see ``ExplorerScheduler/graceBegins()``).
  static func testEnded() {
    scheduler?.graceBegins()
  }
}

extension ExplorerScheduler {
  /// Waits, at most ``BundleExplorer/graceAfterATest``, while the running test's work left
  /// can still run within it: the schedule's jobs (ready, running on the schedule's thread, or
  /// asleep until then), and the threads the test started that run or wait for something that
  /// ends by itself (not one serving events, as an event loop waits for them). Called on the
  /// main thread, by XCTest, while the schedule runs on its own.
  func awaitWorkLeft() {
    let deadline = ContinuousClock.now + BundleExplorer.graceAfterATest
    while ContinuousClock.now < deadline, workLeft(before: deadline) {
      usleep(2_000)  // A deliberate poll: the work left runs on other threads, or is due later.
    }
  }

  /// A Swift Testing test ended (its `testEnded` record is being written, under the event
  /// stream's lock, by the job that ends it, which an issue of the work left needs): the jobs of
  /// the tasks there as it began (its testing library's, which would end the run and the
  /// bundle, after which an issue is no run's) wait, at most ``BundleExplorer/graceAfterATest``,
  /// while work the test left can still run; the schedule runs that work meanwhile. An issue it
  /// records is the run's, in Swift Testing's words (`Test «unknown» recorded an issue`), and a
  /// crash is the bundle's, as under `swift test` where it comes while another test runs.
  func graceBegins() {
    state.withLock { state in
      guard state.escapedAt == nil else { return }
      state.graceDeadline = ContinuousClock.now + BundleExplorer.graceAfterATest
      state.parkedBelow = state.queuesAtTestStart
    }
  }

  /// Ends the grace after a Swift Testing test's end, once its time is up or no work the test
  /// left can run within it: the parked jobs run again.
  func endGraceOnceNothingIsLeft() {
    guard let deadline = state.withLock({ $0.graceDeadline }) else { return }
    guard ContinuousClock.now >= deadline || !workLeft(before: deadline) else { return }
    state.withLock { $0.graceDeadline = nil }
  }

  /// Whether work the running test left can still run before `deadline`.
  private func workLeft(before deadline: ContinuousClock.Instant) -> Bool {
    let (scheduled, threadsBefore) = state.withLock { state in
      // A job waiting for the main thread (not begun: no thread runs it yet) waits for this
      // one: it is not waited for.
      (state.escapedAt == nil && (!state.runnable.isEmpty || (state.running && state.runningThread != 0)
        || state.sleepers.contains { $0.realDue <= deadline }), state.threadsAtTestStart)
    }
    return scheduled
      || OutsideWork.canResume(besides: threadsBefore.union(Self.ownThreads.withLock { $0 }), orWaitsForEvents: false)
  }
}
#endif
