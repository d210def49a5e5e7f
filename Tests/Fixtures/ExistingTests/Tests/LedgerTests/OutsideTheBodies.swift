import Foundation
import Synchronization
import Testing
import XCTest

// Failures outside any test's body, each only when EXISTING_TESTS_OUTSIDE names it (one case a
// run); without it every test here passes at once. `swift test` is red for each case:
// - classSetUp: `class func setUp()` of ClassSetUpXCTests crashes (signal 4), before its tests.
// - classTearDown: `class func tearDown()` of ClassTearDownXCTests crashes, after its tests passed.
// - leftBehindXCTest: a test schedules a crash on a Dispatch queue 300 ms after it returns;
//   the next test of its class runs while it comes.
// - leftBehindSwiftTesting: the same, in a serialized Swift Testing suite.
// - issueAfterItsTest: a Swift Testing test leaves a thread that records an issue once the
//   next test started (`✘ Test «unknown» recorded an issue`); the next test waits for it.
// - detachedIssue: a Swift Testing test awaits a detached task that records an issue, under no
//   test (`✘ Test «unknown» recorded an issue`), while the test runs.
// - suiteTrait: a suite trait's scope throws before any test of its suite runs.
// - listing: a test's trait reads a value that is not set, and crashes as the tests are listed.
// - listingHangs: a test's trait reads a value that blocks for ever, as the tests are listed
//   (`swift test` never ends).
// - testTrait: a test trait's `prepare` throws, and so does an `.enabled(if:)` condition: Swift
//   Testing records the error as each test's issue and never runs it.
// - suiteWarning, lateWarning: a suite trait records a warning in its scope, and a test leaves a
//   thread that records a warning once the next test started: `swift test` passes both
//   (`⚠︎ Suite WarnedSuiteTests recorded a warning`, `⚠︎ Test «unknown» recorded a warning`).
// - exitZero: a test calls exit(0) before it returns. `swift test` is green (exit status 0, no
//   summary): the bundle's run stops there, and the test after it never runs.
// - exitStatusXCTest, exitStatusSwiftTesting: a test that passes leaves an `atexit` handler that
//   ends the process with status 1 once every test passed.
// - lateXCTFail: an XCTest test sends an `XCTFail` to a Dispatch queue, 100 ms after it returns;
//   the next test of its class runs while it comes, and fails with it.
// - lateIssue, lateCrash: a Swift Testing test leaves a thread that records an issue 100 ms after
//   it returned, or a Dispatch block that crashes then; the last test of their serialized suite
//   runs while it comes (`✘ Test «unknown» recorded an issue`; signal 4).
// - watchdog: an XCTest test's `setUp()` sends a watchdog that would fail it 150 ms later, which
//   its `tearDown()` cancels: `swift test` is green, it never fires.

/// The case of failure outside a test's body this run shows (EXISTING_TESTS_OUTSIDE), if any.
let outsideCase = ProcessInfo.processInfo.environment["EXISTING_TESTS_OUTSIDE"] ?? ""

final class ClassSetUpXCTests: XCTestCase {
  override class func setUp() {
    super.setUp()
    if outsideCase == "classSetUp" { fatalError("class set-up could not open the ledger") }
  }

  func testOne() {}
  func testTwo() {}
}

final class ClassTearDownXCTests: XCTestCase {
  override class func tearDown() {
    if outsideCase == "classTearDown" { fatalError("class tear-down could not close the ledger") }
    super.tearDown()
  }

  func testOne() {}
  func testTwo() {}
}

/// Whether a crash was scheduled in this process: the test after the one that schedules it
/// waits for it only then (run again alone, in a fresh process, it passes at once).
let crashScheduled = Atomic(false)

/// Schedules a crash on a Dispatch queue, 300 ms from now, when `name` is the case of this run.
func scheduleACrash(ifTheCaseIs name: String) {
  guard outsideCase == name else { return }
  crashScheduled.store(true, ordering: .sequentiallyConsistent)
  DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) { fatalError("the crash a test left behind") }
}

/// Blocks while a crash scheduled in this process is due (it ends the process first), at most 5 s.
func waitForTheCrashLeftBehind() {
  guard crashScheduled.load(ordering: .sequentiallyConsistent) else { return }
  _ = DispatchSemaphore(value: 0).wait(timeout: .now() + 5)
}

final class LeftBehindXCTests: XCTestCase {
  func testA_SchedulesACrash() { scheduleACrash(ifTheCaseIs: "leftBehindXCTest") }
  func testB_RunsWhileItComes() { waitForTheCrashLeftBehind() }
}

@Suite(.serialized) struct LeftBehindSwiftTests {
  @Test func schedulesACrash() { scheduleACrash(ifTheCaseIs: "leftBehindSwiftTesting") }
  @Test func runsWhileItComes() { waitForTheCrashLeftBehind() }
}

@Suite(.serialized) struct IssueAfterItsTest {
  static let nextTestStarted = DispatchSemaphore(value: 0)
  static let recorded = DispatchSemaphore(value: 0)

  /// Leaves a thread that records an issue once the next test started: its own has returned.
  @Test func detachesAnIssue() {
    guard outsideCase == "issueAfterItsTest" else { return }
    Thread {
      _ = Self.nextTestStarted.wait(timeout: .now() + 5)
      Issue.record("recorded after its test returned")
      Self.recorded.signal()
    }.start()
  }

  @Test func waitsForIt() {
    guard outsideCase == "issueAfterItsTest" else { return }
    Self.nextTestStarted.signal()
    _ = Self.recorded.wait(timeout: .now() + 5)
  }
}

/// Awaits a detached task that records an issue: the task is no test's, so Swift Testing
/// records it under no test (`✘ Test «unknown» recorded an issue`) while the test still runs.
@Suite struct DetachedIssue {
  @Test func awaitsADetachedIssue() async {
    guard outsideCase == "detachedIssue" else { return }
    await Task.detached { () -> Void in Issue.record("recorded by a detached task") }.value
  }
}

/// A suite trait whose scope throws when the case is `suiteTrait`.
struct LedgerFixture: SuiteTrait, TestScoping {
  struct NotPrepared: Error, CustomStringConvertible {
    var description: String { "the suite's fixture could not be prepared" }
  }

  func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
    if outsideCase == "suiteTrait" { throw NotPrepared() }
    try await function()
  }
}

@Suite(LedgerFixture()) struct BrokenFixtureTests {
  @Test func first() {}
  @Test func second() {}
}

/// A trait whose value is read as the tests are listed.
struct NeedsCurrency: TestTrait {
  let code: String
}

/// The currency the tests run with: crashes, as the tests are listed, when the case is `listing`.
func requiredCurrency() -> String {
  if outsideCase == "listing" { fatalError("LEDGER_CURRENCY is not set") }
  return "EUR"
}

@Test(NeedsCurrency(code: requiredCurrency())) func convertsCurrency() {}

/// Leaves an `atexit` handler that ends the process with status 1, when `name` is the case of this run.
func exitWithStatusOneAtTheEnd(ifTheCaseIs name: String) {
  guard outsideCase == name else { return }
  atexit { _exit(1) }
}

final class ExitStatusXCTests: XCTestCase {
  func testLeavesAnExitHandler() { exitWithStatusOneAtTheEnd(ifTheCaseIs: "exitStatusXCTest") }
}

@Suite struct ExitStatusSwiftTests {
  @Test func leavesAnExitHandler() { exitWithStatusOneAtTheEnd(ifTheCaseIs: "exitStatusSwiftTesting") }
}

/// The error of a ledger that could not be opened, when the case is `testTrait`.
struct LedgerClosed: Error, CustomStringConvertible {
  var description: String { "the ledger could not be opened" }
}

/// A test trait whose `prepare` throws when the case is `testTrait`.
struct OpensTheLedger: TestTrait {
  func prepare(for test: Test) async throws {
    if outsideCase == "testTrait" { throw LedgerClosed() }
  }
}

/// Whether the ledger is open: throws when the case is `testTrait`.
func ledgerIsOpen() throws -> Bool {
  if outsideCase == "testTrait" { throw LedgerClosed() }
  return true
}

@Suite struct UnpreparedTests {
  @Test(OpensTheLedger()) func prepared() {}
  @Test(.enabled(if: try ledgerIsOpen())) func enabledIfOpen() {}
}

/// A suite trait that records a warning in its scope when the case is `suiteWarning`.
struct WarnsOfTheLedger: SuiteTrait, TestScoping {
  func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
    if outsideCase == "suiteWarning" { Issue.record("the ledger is nearly full", severity: .warning) }
    try await function()
  }
}

@Suite(WarnsOfTheLedger()) struct WarnedSuiteTests {
  @Test func balances() {}
}

@Suite(.serialized) struct WarningAfterItsTest {
  static let nextTestStarted = DispatchSemaphore(value: 0)
  static let recorded = DispatchSemaphore(value: 0)

  /// Leaves a thread that records a warning once the next test started: its own has returned.
  @Test func detachesAWarning() {
    guard outsideCase == "lateWarning" else { return }
    Thread {
      _ = Self.nextTestStarted.wait(timeout: .now() + 5)
      Issue.record("warned after its test returned", severity: .warning)
      Self.recorded.signal()
    }.start()
  }

  @Test func waitsForIt() {
    guard outsideCase == "lateWarning" else { return }
    Self.nextTestStarted.signal()
    _ = Self.recorded.wait(timeout: .now() + 5)
  }
}

/// The rate the tests run with: blocks for ever, as the tests are listed, when the case is `listingHangs`.
func requiredRate() -> String {
  if outsideCase == "listingHangs" { blockForever() }
  return "EUR/USD"
}

@Test(NeedsCurrency(code: requiredRate())) func convertsAtTheRate() {}

final class ExitsWithZeroXCTests: XCTestCase {
  func testA_ExitsWithZero() { if outsideCase == "exitZero" { exit(0) } }
  func testB_After() {}
}

/// Whether a test sent a failure for later in this process: the test after it waits for it
/// only then (run alone, in a fresh process, it passes at once).
let lateFailureSent = Atomic(false)
/// Signalled once the late failure was recorded.
let lateFailureRecorded = DispatchSemaphore(value: 0)

final class LateFailureXCTests: XCTestCase {
  func testA_FailsAfterItReturned() {
    guard outsideCase == "lateXCTFail" else { return }
    lateFailureSent.store(true, ordering: .sequentiallyConsistent)
    DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) {  // The rude case: a failure sent for after the test returned.
      XCTFail("the ledger failed after its test returned")
      lateFailureRecorded.signal()
    }
  }

  func testB_RunsWhileItComes() {
    guard lateFailureSent.load(ordering: .sequentiallyConsistent) else { return }
    _ = lateFailureRecorded.wait(timeout: .now() + 5)
  }
}

/// Sends a watchdog that would fail the test 150 ms later, which its `tearDown()` cancels, when
/// the case is `watchdog`: it never fires.
final class WatchdogXCTests: XCTestCase {
  private var watchdog: DispatchWorkItem?

  override func setUp() {
    guard outsideCase == "watchdog" else { return }
    let watchdog = DispatchWorkItem { XCTFail("the ledger's watchdog fired") }
    self.watchdog = watchdog
    DispatchQueue.global().asyncAfter(deadline: .now() + 0.15, execute: watchdog)
  }

  override func tearDown() {
    watchdog?.cancel()
  }

  func testCancelsItsWatchdogInTearDown() {}
}

/// Whether a test left work that fails after it returned, in this process: the last test of the
/// suite waits for it only then (run alone, in a fresh process, it passes at once).
let lateWorkLeft = Atomic(false)
/// Signalled once the late issue was recorded.
let lateIssueRecorded = DispatchSemaphore(value: 0)

@Suite(.serialized) struct LateSwiftTests {
  /// Leaves a thread that records an issue 100 ms after the test returned (case `lateIssue`).
  @Test func a_recordsAnIssueAfterItReturned() {
    guard outsideCase == "lateIssue" else { return }
    lateWorkLeft.store(true, ordering: .sequentiallyConsistent)
    Thread {
      usleep(100_000)  // The rude case: an issue recorded after its test returned.
      Issue.record("the ledger failed after its test returned")
      lateIssueRecorded.signal()
    }.start()
  }

  /// Leaves a Dispatch block that crashes 100 ms after the test returned (case `lateCrash`).
  @Test func b_crashesAfterItReturned() {
    guard outsideCase == "lateCrash" else { return }
    lateWorkLeft.store(true, ordering: .sequentiallyConsistent)
    DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) { fatalError("the ledger crashed after its test returned") }
  }

  @Test func c_runsWhileTheyCome() {
    guard lateWorkLeft.load(ordering: .sequentiallyConsistent) else { return }
    _ = lateIssueRecorded.wait(timeout: .now() + 5)
  }
}
