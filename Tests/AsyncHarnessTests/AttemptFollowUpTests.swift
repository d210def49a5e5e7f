@testable @_spi(ForToolsIntegrationOnly) import AsyncHarness
import XCTest

/// The one policy that decides what follows an attempt (`AttemptFollowUp`), asked directly
/// with plain facts, without processes: every rule, and the facts that turn each off.
final class AttemptFollowUpTests: XCTestCase {
  private typealias Facts = AttemptFollowUp.Facts
  private typealias CutShort = AttemptFollowUp.CutShort

  private func test(_ facts: Facts) -> AttemptFollowUp.Test { AttemptFollowUp(after: facts).test }

  private func worker(_ facts: Facts) -> AttemptFollowUp.Worker { AttemptFollowUp(after: facts).worker }

  /// What follows for an attempt a worker of `kind` ended as `cutShort` says.
  private func test(_ cutShort: CutShort, in kind: AttemptFollowUp.WorkerKind = .harness) -> AttemptFollowUp.Test {
    test(Facts(workerKind: kind, cutShort: cutShort))
  }

  // MARK: A judged attempt

  func testAFailingAttemptIsRetriedOnlyWhileARetryIsLeftAndNoStopWasRequested() {
    XCTAssertEqual(test(Facts(failed: true, retryLeft: true)), .retry)
    XCTAssertEqual(test(Facts(failed: false, retryLeft: true)), .done, "a passing attempt is the test's last")
    XCTAssertEqual(test(Facts(failed: true, retryLeft: false)), .done, "no retry left")
    XCTAssertEqual(test(Facts(failed: true, retryLeft: true, stopRequested: true)), .done, "a stop was requested")
    XCTAssertEqual(test(Facts()), .done)
  }

  func testAnAttemptItsWorkerCutShortIsNotRetriedBeforeItIsJudged() {
    // It ends with the worker's end, and is judged next: the retry is decided then.
    XCTAssertEqual(test(Facts(failed: true, retryLeft: true, cutShort: CutShort())), .done)
  }

  // MARK: An attempt its worker ended

  func testAnInterruptEndsEveryAttemptRunningWhateverElseIsKnown() {
    XCTAssertEqual(test(CutShort(interrupted: true, alone: false)), .done)
    XCTAssertEqual(test(CutShort(interrupted: true, alone: false, stoppedFor: .others)), .done)
    XCTAssertEqual(test(CutShort(interrupted: true, alone: false, namedCrashing: .others)), .done)
    XCTAssertEqual(test(CutShort(interrupted: true, testsEndedBefore: true), in: .testBundle), .done)
    XCTAssertEqual(test(CutShort(interrupted: true, alone: false), in: .testBundle), .done)
  }

  func testAnAttemptAloneGetsItsWorkersEndUnlessTheWorkerWasStoppedForOthers() {
    XCTAssertEqual(test(CutShort()), .done, "a crash while it ran alone is its own")
    XCTAssertEqual(test(CutShort(stoppedFor: .this)), .done, "its own deadline")
    XCTAssertEqual(test(CutShort(namedCrashing: .others)), .done, "only a stop names others")
    XCTAssertEqual(test(CutShort(testsEndedBefore: true)), .done, "a harness worker checks each test for work left behind")
    // Stopped at the deadlines of others, whose ends came with the signal: the stop was not for it.
    XCTAssertEqual(test(CutShort(stoppedFor: .others)), .runAgain(.besideOthers))
  }

  func testOfAttemptsSideBySideThoseTheWorkerNamedEndAndTheOthersRunAgainWithoutTheCulprit() {
    XCTAssertEqual(test(CutShort(alone: false, stoppedFor: .this)), .done, "past its deadline")
    XCTAssertEqual(test(CutShort(alone: false, namedCrashing: .this)), .done, "named as crashing")
    XCTAssertEqual(test(CutShort(alone: false, stoppedFor: .this, namedCrashing: .others)), .done)
    XCTAssertEqual(test(CutShort(alone: false, stoppedFor: .others)), .runAgain(.besideOthers))
    XCTAssertEqual(test(CutShort(alone: false, namedCrashing: .others)), .runAgain(.besideOthers))
    XCTAssertEqual(test(CutShort(alone: false, stoppedFor: .others, testsEndedBefore: true)), .runAgain(.besideOthers))
  }

  func testACrashSideBySideThatNamesNoAttemptRunsThemAgainInHalves() {
    XCTAssertEqual(test(CutShort(alone: false)), .runAgain(.inHalves))
    XCTAssertEqual(test(CutShort(alone: false, testsEndedBefore: true)), .runAgain(.inHalves))
  }

  func testATestBundlesAttemptsRunAgainAloneAndItsCrashAfterOtherTestsBlamesNoneOfThoseRunning() {
    // A crash after other tests ended in the bundle: even an attempt alone runs again, alone.
    XCTAssertEqual(test(CutShort(testsEndedBefore: true), in: .testBundle), .runAgain(.alone))
    XCTAssertEqual(test(CutShort(alone: false, testsEndedBefore: true), in: .testBundle), .runAgain(.alone))
    XCTAssertEqual(test(CutShort(alone: false, namedCrashing: .this, testsEndedBefore: true), in: .testBundle),
                   .runAgain(.alone))
    // Its first tests: one alone gets the crash, those side by side run again alone.
    XCTAssertEqual(test(CutShort(), in: .testBundle), .done)
    XCTAssertEqual(test(CutShort(alone: false), in: .testBundle), .runAgain(.alone))
    XCTAssertEqual(test(CutShort(alone: false, stoppedFor: .others), in: .testBundle), .runAgain(.alone))
    XCTAssertEqual(test(CutShort(stoppedFor: .others, testsEndedBefore: true), in: .testBundle), .runAgain(.alone))
    // Stopped at its own deadline, the attempt ends at its limit, after other tests too.
    XCTAssertEqual(test(CutShort(stoppedFor: .this, testsEndedBefore: true), in: .testBundle), .done)
    XCTAssertEqual(test(CutShort(alone: false, stoppedFor: .this), in: .testBundle), .done)
  }

  // MARK: The worker

  func testAWorkerRunsTheNextTestUnlessSomethingRetiresOrReplacesIt() {
    XCTAssertEqual(worker(Facts()), .keep)
    XCTAssertEqual(worker(Facts(failed: true, retryLeft: true)), .keep, "a failure alone changes nothing for the worker")
    XCTAssertEqual(worker(Facts(workerEnded: true)), .replace)
    XCTAssertEqual(worker(Facts(cutShort: CutShort())), .replace, "an attempt cut short ended with its worker")
  }

  func testAStoppedWorkerIsNeverReusedNorOneThatMustNotRunAnotherTest() {
    XCTAssertEqual(worker(Facts(workerStopped: true)), .retire)
    XCTAssertEqual(worker(Facts(workerLeftWork: true)), .retire)
    XCTAssertEqual(worker(Facts(workerRanSchedule: true)), .retire)
    XCTAssertEqual(worker(Facts(freshWorkerPerTest: true)), .retire)
    // One that ended is gone whatever else was said of it.
    XCTAssertEqual(worker(Facts(workerEnded: true, workerStopped: true, workerLeftWork: true)), .replace)
    XCTAssertEqual(worker(Facts(cutShort: CutShort(interrupted: true), workerStopped: true)), .replace)
  }

  // MARK: An attempt past its deadline

  /// Issue 52: a hang is told apart from the tests beside it only where they run side by
  /// side in a harness worker and one of them is still within its limit.
  func testAnAttemptPastItsDeadlineIsLeftRunningOnlyBesideAttemptsWithinTheirLimits() {
    XCTAssertEqual(AttemptFollowUp.pastDeadline(in: .harness, sideBySide: true, othersOnTime: true), .leaveRunning)
    XCTAssertEqual(AttemptFollowUp.pastDeadline(in: .harness, sideBySide: true, othersOnTime: false), .stopWorker,
                   "every attempt running is past its deadline")
    XCTAssertEqual(AttemptFollowUp.pastDeadline(in: .harness, sideBySide: false, othersOnTime: true), .stopWorker,
                   "a test running alone, which the runner waits for")
    XCTAssertEqual(AttemptFollowUp.pastDeadline(in: .testBundle, sideBySide: true, othersOnTime: true), .stopWorker,
                   "a test bundle runs its list to its end: it cannot be asked to leave one test running")
  }
}
