@_spi(ForToolsIntegrationOnly) @testable import AsyncHarness
import Foundation
import Synchronization
import HarnessTestSupport
import XCTest

/// `--explore N` and `--schedule TOKEN` from the command line: the pass rate, the first
/// failing token, the flag to copy, and a replay that repeats the run exactly.
final class ExploreReplayTests: XCTestCase {
  /// Two queues race to store a value; the test expects the second to win.
  private let racy = [
    Suite("Race") {
      Test("last writer wins") { t in
        let value = Mutex("")
        let done = t.expectation("both stored", expectedFulfillmentCount: 2)
        t.queue("first").async { value.withLock { $0 = "first" }; done.fulfill() }
        t.queue("second").async { value.withLock { $0 = "second" }; done.fulfill() }
        try t.wait(for: done)
        t.expectEqual(value.withLock { $0 }, "second")
      }
      Test("no race") { t in
        let done = t.expectation("done")
        t.background.async { done.fulfill() }
        try t.wait(for: done)
      }
    },
  ]
  private let file = "Tests/AsyncHarnessTests/ExploreReplayTests.swift"

  func testExploreReportsEachTestsPassRateAndTheFirstFailingToken() throws {
    let result = run(["--explore", "20"])
    XCTAssertEqual(result.status, 1, result.errors)
    let token = try XCTUnwrap(firstFailingToken(result.output), result.output)
    let parsed = try XCTUnwrap(ScheduleToken(token), token)
    XCTAssertEqual(parsed.schedule.policy, .randomWalk, token)
    XCTAssertEqual(parsed.test, ScheduleToken.fingerprint(ofTestAt: "Race/last writer wins"), token)
    XCTAssertEqual(parsed.trace?.steps, 2, "the token carries the steps its run took: \(token)")
    let report = try XCTUnwrap(result.output.components(separatedBy: "\nExplored schedules:\n").last)
    XCTAssertTrue(report.hasPrefix(
      "  Race/last writer wins [scheduled]: 11 of 20 passed; first failure replay: --schedule \(token)\n"
        + "  Race/no race [scheduled]: 20 of 20 passed\nResult: 31 passed, 9 failed, 0 skipped"), report)
    let lines = result.output.split(separator: "\n")
    XCTAssertEqual(lines.filter { $0.hasPrefix("FAIL  Race/last writer wins [scheduled]") }.count, 9)
    XCTAssertEqual(lines.filter { $0.hasPrefix("PASS  Race/last writer wins [scheduled]") }.count, 11)
    XCTAssertEqual(lines.filter { $0.hasPrefix("PASS  Race/no race [scheduled]") }.count, 20)
    XCTAssertEqual(lines.filter { $0.hasPrefix("    replay: --schedule ") }.count, 9, "each failure says how to replay it")
  }

  func testAFailuresReportEndsWithTheFlagThatReplaysItAndTheReplayFailsTheSameWay() throws {
    let explored = run(["--explore", "20"])
    let token = try XCTUnwrap(firstFailingToken(explored.output))
    let replay = run(["--schedule", token])
    XCTAssertEqual(replay.status, 1, replay.errors)
    let lines = replay.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    XCTAssertTrue(lines[0].hasPrefix("FAIL  Race/last writer wins [scheduled] ("), replay.output)
    XCTAssertEqual(lines[1], "    \(file):19: Expected second, got first")
    XCTAssertEqual(lines[2], "    replay: --schedule \(token)")
    XCTAssertTrue(replay.output.contains("Result: 0 passed, 1 failed, 0 skipped"), replay.output)
    for _ in 0..<50 { XCTAssertEqual(run(["--schedule", token]).status, 1, "a replay fails every time") }
  }

  func testTheSameTokenGivesTheSameEventsExceptTimes() throws {
    let explored = run(["--explore", "20"])
    let token = try XCTUnwrap(firstFailingToken(explored.output))
    var streams: [[String]] = []
    for _ in 0..<3 {
      let path = FileManager.default.temporaryDirectory.appendingPathComponent("replay-\(UUID()).jsonl").path
      defer { try? FileManager.default.removeItem(atPath: path) }
      XCTAssertEqual(run(["--schedule", token, "--json", path]).status, 1)
      let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
      streams.append(try lines.map { try Event(jsonLine: $0).withoutTimes.jsonLine })
    }
    XCTAssertEqual(streams[0].count, 7, "run, suite, test started; issue; test, suite, run ended: \(streams[0])")
    var parsed = try XCTUnwrap(ScheduleToken(token))
    let trace = try XCTUnwrap(parsed.trace)
    parsed.trace = nil
    XCTAssertTrue(streams[0].contains { $0.contains("\"schedule\":\"\(parsed)\"") }, "\(streams[0])")
    XCTAssertTrue(streams[0].contains { $0.contains("\"scheduleTrace\":\"\(trace)\"") }, "the result carries the steps: \(streams[0])")
    XCTAssertEqual(streams[1], streams[0])
    XCTAssertEqual(streams[2], streams[0])
  }

  func testAReplayThatTakesOtherStepsSaysSoAndWhy() throws {
    let explored = run(["--explore", "20"])
    let token = try XCTUnwrap(ScheduleToken(try XCTUnwrap(firstFailingToken(explored.output))))
    var wrong = token
    wrong.trace = ScheduleTrace(steps: 3, fingerprint: 0)
    let replay = run(["--schedule", wrong.description])
    XCTAssertEqual(replay.status, 1, replay.errors)
    XCTAssertTrue(replay.output.contains(
      "This replay diverged from the run its token was printed for: that run took 3 steps (3-000000), this one 2 (\(token.trace!)); no work came from outside the schedule, so the test's own code took another path (it reads the real clock, random numbers, the environment, or state an earlier test left)"),
      replay.output)
    let faithful = run(["--schedule", token.description])
    XCTAssertFalse(faithful.output.contains("diverged"), "a replay that takes the same steps says nothing: \(faithful.output)")
  }

  func testUsageErrors() {
    let cases: [([String], String)] = [
      (["--explore", "0"], "error: --explore must be at least 1, not 0"),
      (["--schedule", "7:pct3"], "error: --schedule \"7:pct3\" is not a replay token: expected SEED:POLICY:TEST or SEED:POLICY:TEST:STEPS-FINGERPRINT, e.g. 7:pct3:9f2c1a:41-0be311"),
      (["--explore", "3", "--schedule", "7:pct3:9f2c1a"], "error: --explore and --schedule cannot be combined"),
      (["--explore", "3", "--waiter", "semaphore"], "error: --explore runs under the scheduled waiter, not semaphore: use --waiter scheduled (or all)"),
      (["--schedule", "7:pct3:000000"], "error: no selected test matches --schedule 7:pct3:000000: a replay token reruns the test it was printed for"),
    ]
    for (arguments, message) in cases {
      let result = run(arguments)
      XCTAssertEqual(result.status, 2, "\(arguments)")
      XCTAssertTrue(result.errors.hasPrefix(message + "\n"), "\(arguments): \(result.errors)")
      XCTAssertEqual(result.output, "", "\(arguments)")
    }
  }

  func testExplorePolicyChoosesThePolicyOfEveryExploredSchedule() throws {
    let result = run(["--explore", "20", "--explore-policy", "pct2"])
    XCTAssertEqual(result.status, 1, result.errors)
    let tokens = result.output.split(separator: "\n").filter { $0.hasPrefix("    replay: --schedule ") }
      .map { $0.dropFirst("    replay: --schedule ".count).split(separator: ":").prefix(2).joined(separator: ":") }
    XCTAssertFalse(tokens.isEmpty, result.output)
    XCTAssertTrue(tokens.allSatisfy { $0.hasSuffix(":pct2") }, "\(tokens)")
    var configuration = Configuration()
    configuration.explorations = 3
    configuration.explorationPolicy = .pct(depth: 2)
    let schedules = configuration.schedules(under: .waiter(ScheduledWaiter()))
    XCTAssertEqual(schedules, [1, 2, 3].map { Schedule(seed: $0, policy: .pct(depth: 2)) })
  }

  func testABadExplorePolicyOrOneWithoutExploreIsAUsageError() {
    for (arguments, message) in [
      (["--explore", "3", "--explore-policy", "pct12"],
       "error: --explore-policy \"pct12\" is not a policy: expected random or pctD with D from 1 to 9, e.g. pct3\n"),
      (["--explore-policy", "random"], "error: --explore-policy needs --explore N\n"),
    ] {
      let result = run(arguments)
      XCTAssertEqual(result.status, 2, "\(arguments)")
      XCTAssertTrue(result.errors.hasPrefix(message), result.errors)
    }
  }

  func testExploringTheMatrixExploresOnlyTheScheduledColumn() {
    let result = run(["--explore", "4", "--waiter", "all", "--filter", "no race"])
    XCTAssertEqual(result.status, 0, result.errors)
    XCTAssertTrue(result.output.contains("Result: 9 passed, 0 failed"), result.output)
    XCTAssertTrue(result.output.contains("  Race/no race [scheduled]: 4 of 4 passed\n"), result.output)
  }

  // MARK: Helpers

  private func run(_ arguments: [String]) -> (status: Int32, output: String, errors: String) {
    let output = WrittenText()
    let errors = WrittenText()
    let status = HarnessMain.status(arguments: arguments, suites: racy, console: .plain,
                                    output: output.write, errors: errors.write)
    return (status, output.text, errors.text)
  }

  /// The token of the first `replay:` line of a console report.
  private func firstFailingToken(_ output: String) -> String? {
    output.split(separator: "\n").first { $0.hasPrefix("    replay: --schedule ") }
      .map { String($0.dropFirst("    replay: --schedule ".count)) }
  }

  private func fingerprint(_ path: String) -> String {
    String(ScheduleToken(schedule: Schedule(seed: 0, policy: .randomWalk), test: ScheduleToken.fingerprint(ofTestAt: path))
      .description.split(separator: ":").last!)
  }
}
