import AsyncHarness
import Foundation
import HarnessTestSupport
import XCTest

@testable import AsyncHarnessJUnit

/// Issue 31, async tests side by side inside a worker: the `harness-fixture` executable's
/// `SideBySide` suite (async tests that await callbacks, fail, throw, time out in a wait, are
/// fulfilled late, record a known issue and pass on a retry, with a blocking test among them)
/// run side by side gives each test the verdict and the issues of a run one at a time
/// (`--async-width 1`); in
/// `SideBySideRude`, a crash among tests side by side errors that test and runs the others
/// again (without it when the crash named its test, else in halves until it runs alone), a
/// hang errors the test past its limit alone, and an interrupt
/// ends every test running.
final class SideBySideTests: ReportTestCase {
  /// Each test's verdicts (one per attempt) and everything it recorded and logged, as a set.
  private struct Recorded: Equatable, CustomStringConvertible {
    var verdicts: [Verdict] = []
    var issues: Set<Issue> = []
    var output = ""
    var description: String { "\(verdicts) \(issues.map(\.message).sorted()) \(output.debugDescription)" }
  }

  private func runFixture(_ arguments: [String], name: String) throws -> (status: Int32, output: String, errors: String, events: [Event]) {
    let events = path("\(name).jsonl")
    let run = try runToEnd(try harnessFixture(), ["--json", events] + arguments)
    let lines = try String(contentsOfFile: events, encoding: .utf8).split(separator: "\n")
    return (run.status, run.output, run.errors, try lines.map { try Event(jsonLine: $0) })
  }

  private func recorded(_ events: [Event]) -> [TestID: Recorded] {
    var tests: [TestID: Recorded] = [:]
    for event in events {
      switch event.kind {
      case .issueRecorded(let test, let issue): tests[test, default: Recorded()].issues.insert(issue)
      case .outputCaptured(let test, let text): tests[test, default: Recorded()].output += text
      case .testEnded(let test, let result): tests[test, default: Recorded()].verdicts.append(result.verdict)
      default: break
      }
    }
    return tests
  }

  /// When each test started and ended.
  private func times(_ events: [Event]) -> [TestID: (start: Date, end: Date)] {
    var started: [TestID: Date] = [:]
    var times: [TestID: (start: Date, end: Date)] = [:]
    for event in events {
      if case .testStarted(let test) = event.kind { started[test] = event.timestamp }
      if case .testEnded(let test, _) = event.kind, let start = started[test] { times[test] = (start, event.timestamp) }
    }
    return times
  }

  func testAsyncTestsSideBySideGetTheVerdictsAndIssuesOfASerialRun() throws {
    let selection = ["--filter", "SideBySide/", "--waiter", "all", "--time-limit", "5"]
    let serial = try runFixture(selection + ["--async-width", "1"], name: "serial")
    XCTAssertEqual(serial.status, 1, serial.output)
    let expected = recorded(serial.events)
    XCTAssertEqual(expected.count, 6 * 20 + 5, "20 tests under 6 strategies, one with a second attempt but under a schedule")
    for round in 1...5 {
      let sideBySide = try runFixture(selection, name: "side-by-side-\(round)")
      XCTAssertEqual(sideBySide.status, 1, sideBySide.output)
      let got = recorded(sideBySide.events)
      XCTAssertEqual(Set(got.keys), Set(expected.keys))
      for (test, recorded) in expected where got[test] != recorded {
        XCTFail("round \(round), \(test): side by side \(got[test].map(\.description) ?? "nothing"), one at a time \(recorded)")
      }
      // Under each real-time strategy the awaiting tests ran at once: each started before any
      // ended (a blocking test comes after the sixth). The scheduled strategy keeps each alone.
      let times = times(sideBySide.events)
      for waiter in ["expectation", "semaphore", "probePoller", "notification", "synchronous", "scheduled"] {
        // (A scheduled test's ID names its schedule.)
        let awaiting = times.filter { $0.key.host == waiter && (0..<6).map { "awaits \($0)" }.contains($0.key.name) }.values
        XCTAssertEqual(awaiting.count, 6)
        guard let lastStart = awaiting.map(\.start).max(), let firstEnd = awaiting.map(\.end).min() else { continue }
        let overlap = lastStart < firstEnd
        XCTAssertEqual(overlap, waiter != "scheduled", "\(waiter): \(awaiting)")
      }
    }
    let late = try XCTUnwrap(expected[TestID(suite: "SideBySide", name: "fulfils late", host: "semaphore")])
    XCTAssertEqual(late.issues.map(\.kind).sorted { $0.rawValue < $1.rawValue }, [.lateSignal, .waitFailed])
    let retried = TestID(suite: "SideBySide", name: "passes on attempt 2", host: "semaphore", attempt: 2)
    XCTAssertEqual(expected[retried]?.verdicts, [.flaky])
  }

  /// With every test started at once, the crash comes while the six others wait, on the
  /// crashing test's own task, or in work it sent to its own queue: the worker names that
  /// test as it crashes (`CrashNotice`), so it errors, and the six run again side by side
  /// without it and pass.
  func testACrashInATestsOwnCodeErrorsThatTestAndRunsTheOthersAgainWithoutIt() throws {
    for crasher in ["crashes", "test queue crash"] {
      let tests = try crashAmongSixOthers(crasher)
      for (test, recorded) in tests where test.name != crasher {
        let others = inPlanOrder(crasher).filter { $0 != test.name }.map { "SideBySideRude/\($0)" }
        XCTAssertEqual(recorded.issues.filter { $0.kind == .warning }.map(\.message), [
          "The worker process running this test side by side with \(others.joined(separator: ", ")) crashed in "
            + "SideBySideRude/\(crasher) (signal SIGILL (illegal instruction)), so this test ran again without it",
        ], "\(test)")
      }
      let crash = try XCTUnwrap(tests.first { $0.key.name == crasher }?.value)
      let awaiting = (0..<6).map { "SideBySideRude/awaits \($0)" }
      XCTAssertEqual(crash.issues.filter { $0.kind == .warning }.map(\.message), [
        "Side by side with this test ran \(awaiting.joined(separator: ", ")), which ran again without it",
      ])
    }
  }

  /// A crash on a thread that runs none of a test's code (a raw dispatch queue) names no
  /// test: nothing shows which test crashed the worker, so the seven run again in halves, a
  /// half that crashes again halved again, until the crash runs alone and crashes there. Each
  /// test is warned once, naming the six beside it when the first crash came.
  func testACrashThatNamesNoTestRunsThemAgainInHalvesUntilTheCrashRunsAlone() throws {
    let tests = try crashAmongSixOthers("queue crash")
    for (test, recorded) in tests {
      let others = inPlanOrder("queue crash").filter { $0 != test.name }.map { "SideBySideRude/\($0)" }
      XCTAssertEqual(recorded.issues.filter { $0.kind == .warning }.map(\.message), [
        "The worker process running this test side by side with \(others.joined(separator: ", ")) ended with signal "
          + "SIGILL (illegal instruction) before they returned; a crash among tests running side by side is no evidence "
          + "against any one of them, so this test ran again beside fewer of them",
      ], "\(test)")
    }
  }

  /// Issue 49: a test forks a process that holds the worker's output, then crashes among six
  /// tests side by side. The output is still held past the worker's exit: every test that was
  /// running then gets the `leaked` warning, the crasher with its crash and each of the six
  /// when it runs again and passes, never dropped with what it held in the worker that crashed.
  func testOutputHeldPastACrashSideBySideIsAWarningOfEveryTestRunningThen() throws {
    let tests = try crashAmongSixOthers("forks and crashes", leaks: true)
    for (test, recorded) in tests {
      XCTAssertEqual(recorded.issues.filter { $0.kind == .leaked }.map(\.message), [
        "Leaked work: a process the tests started still held the worker process's output open after it exited; it was "
          + "stopped with the worker process's process group",
      ], "\(test)")
    }
  }

  /// `crasher` and the six awaiting tests, in the order the plan starts them (as messages name them).
  private func inPlanOrder(_ crasher: String) -> [String] {
    [crasher] + (0..<6).map { "awaits \($0)" }
  }

  /// Runs `crasher` beside the six awaiting tests, all started at once: the crash errors the
  /// crasher with its message, each other test passes, with no issue but warnings (and
  /// `leaked` ones when `leaks`); returns each test's record.
  private func crashAmongSixOthers(_ crasher: String, leaks: Bool = false) throws -> [TestID: Recorded] {
    let run = try runFixture(["--filter", "SideBySideRude/awaits", "--filter", "SideBySideRude/\(crasher)",
                              "--waiter", "semaphore"], name: crasher)
    XCTAssertEqual(run.status, 1, run.output)
    let tests = recorded(run.events)
    XCTAssertEqual(Set(tests.keys.map(\.name)), Set(inPlanOrder(crasher)))
    for (test, recorded) in tests {
      if test.name == crasher {
        XCTAssertEqual(recorded.verdicts, [.errored])
        let crash = try XCTUnwrap(recorded.issues.first { $0.kind == .crashed })
        XCTAssertTrue(crash.message.hasPrefix("Crashed: the worker process running the test ended with signal SIGILL "
          + "(illegal instruction); its last output:\n"), crash.message)
        XCTAssertTrue(crash.message.contains("Fatal error: a side-by-side test"), crash.message)
      } else {
        XCTAssertEqual(recorded.verdicts, [.passed], "\(test)")
        XCTAssertEqual(recorded.issues.filter { $0.kind != .warning && (!leaks || $0.kind != .leaked) }, [], "\(test)")
      }
    }
    // What tests side by side print is their output, marked as shared, never the run's own.
    XCTAssertFalse(run.errors.contains("Fatal error: a side-by-side test"), run.errors)
    let output = try XCTUnwrap(tests.first { $0.key.name == crasher }?.value.output)
    XCTAssertTrue(output.contains("Fatal error: a side-by-side test"), output)
    return tests
  }

  /// Two at a time, the hang holds one place while the others (each waiting 0.4 s) take turns
  /// at the other. At its limit and margin (1.5 s) the test beside it is within its own
  /// limit: the hang is told apart from it (issue 52). The hang errors there, left running;
  /// the test beside it goes on and passes, run once; the worker starts no other test and is
  /// stopped once that test ended, and the rest run in a fresh one.
  func testAHangAmongThemErrorsThatTestAloneAndTheOnesBesideItRunOnce() throws {
    let run = try runFixture(["--filter", "SideBySideRude/awaits", "--filter", "SideBySideRude/hangs",
                              "--waiter", "semaphore", "--async-width", "2", "--time-limit", "1"], name: "hang")
    XCTAssertEqual(run.status, 1, run.output)
    let tests = recorded(run.events)
    let hang = try XCTUnwrap(tests[TestID(suite: "SideBySideRude", name: "hangs", host: "semaphore")])
    XCTAssertEqual(hang.verdicts, [.errored])
    XCTAssertEqual(hang.issues.map(\.message), [
      "Test exceeded its time limit of 1 seconds outside any wait the harness could end, side by side with tests still "
        + "within theirs, so it was left running in its worker process, which starts no other test and is stopped once "
        + "they end; it printed nothing",
    ])
    for number in 0..<6 {
      let awaits = try XCTUnwrap(tests[TestID(suite: "SideBySideRude", name: "awaits \(number)", host: "semaphore")])
      XCTAssertEqual(awaits.verdicts, [.passed], "awaits \(number)")
      XCTAssertEqual(awaits.issues, [], "awaits \(number)")
    }
    let started = run.events.compactMap { if case .testStarted(let test) = $0.kind { test.name } else { nil } }
    XCTAssertEqual(started.count, 7, "each test ran once: \(started)")
    let replaced = run.events.compactMap { if case .workerReplaced(let test, let reason) = $0.kind { "\(test.name): \(reason)" } else { nil } }
    XCTAssertEqual(replaced, ["hangs: exceededTimeLimit"])
  }

  /// SIGINT while four tests wait side by side (the console says each is still running,
  /// `--slow`): each ends as interrupted, with what it printed, and the run exits with 128 +
  /// SIGINT.
  func testAnInterruptEndsEveryTestRunningSideBySide() throws {
    let process = Process()
    process.executableURL = try harnessFixture()
    process.arguments = ["--filter", "SideBySideRude/waits for an interrupt", "--waiter", "semaphore",
                         "--slow", "0.3", "--json", path("interrupt.jsonl")]
    let console = Pipe()
    process.standardOutput = console
    process.standardError = FileHandle.nullDevice
    try process.run()
    var seen = ""
    while (0..<4).contains(where: { !seen.contains("SLOW  SideBySideRude/waits for an interrupt \($0) [semaphore]") }) {
      let data = console.fileHandleForReading.availableData
      guard !data.isEmpty else { break }
      seen += String(decoding: data, as: UTF8.self)
    }
    kill(process.processIdentifier, SIGINT)
    _ = console.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    XCTAssertEqual(process.terminationStatus, 128 + SIGINT)
    let lines = try String(contentsOfFile: path("interrupt.jsonl"), encoding: .utf8).split(separator: "\n")
    let tests = recorded(try lines.map { try Event(jsonLine: $0) })
    XCTAssertEqual(tests.count, 4)
    for (test, recorded) in tests {
      XCTAssertEqual(recorded.verdicts, [.errored], "\(test)")
      XCTAssertEqual(recorded.issues.map(\.kind), [.interrupted], "\(test)")
      XCTAssertTrue(recorded.issues.first?.message.hasPrefix("Interrupted: the run received SIGINT (interrupt) while "
        + "the test ran, so its worker process was stopped") ?? false, "\(recorded)")
      // What it printed is its output, marked as shared: the others were running beside it.
      let number = test.name.split(separator: " ").last.map(String.init) ?? ""
      XCTAssertTrue(recorded.output.contains("[shared] side by side: \(number) waits\n"), "\(recorded)")
    }
  }
}
