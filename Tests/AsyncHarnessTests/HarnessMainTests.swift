@testable import AsyncHarness
import HarnessTestSupport
import XCTest

/// The command line: exit status and the messages a user reads.
final class HarnessMainTests: XCTestCase {
  private let suites = [
    Suite("Calculator") {
      Test("adds") { t in t.expect(1 + 1 == 2) }
      Test("subtracts", .tags("slow")) { t in t.expect(3 - 1 == 2) }
    },
  ]
  private let failing = [Suite("Broken") { Test("fails") { t in t.fail("no") } }]

  private func run(_ arguments: [String], suites: [Suite]? = nil,
                   junit: JUnitSupport? = nil) -> (status: Int32, output: String, errors: String) {
    let output = WrittenText()
    let errors = WrittenText()
    let status = HarnessMain.status(arguments: arguments, suites: suites ?? self.suites, junit: junit,
                                    console: .plain, output: output.write, errors: errors.write)
    return (status, output.text, errors.text)
  }

  func testPassingRunExitsZero() {
    let result = run(["--waiter", "all"])
    XCTAssertEqual(result.status, 0, result.errors)
    XCTAssertTrue(result.output.hasSuffix("Result: 12 passed, 0 failed, 0 skipped in " + result.output.split(separator: " ").last!), result.output)
    XCTAssertTrue(result.output.contains("Calculator  2/2          2/2        2/2          2/2           2/2          2/2"), result.output)
  }

  func testFailingRunExitsOne() {
    XCTAssertEqual(run([], suites: failing).status, 1)
  }

  func testUnknownWaiterExitsTwoListingTheStrategies() {
    let result = run(["--waiter", "nope"])
    XCTAssertEqual(result.status, 2)
    XCTAssertEqual(result.errors, "error: unknown waiter \"nope\"; known strategies: expectation, semaphore, probePoller, notification, synchronous, scheduled, or all\n")
    XCTAssertEqual(result.output, "")
  }

  func testBadFlagsExitTwo() {
    let unknown = run(["--frobnicate"])
    XCTAssertEqual(unknown.status, 2)
    XCTAssertTrue(unknown.errors.hasPrefix("error: Unknown option '--frobnicate'"), unknown.errors)
    let repeatZero = run(["--repeat", "0"])
    XCTAssertEqual(repeatZero.status, 2)
    XCTAssertTrue(repeatZero.errors.hasPrefix("error: --repeat must be at least 1, not 0"), repeatZero.errors)
    let timeout = run(["--timeout=-1"])
    XCTAssertEqual(timeout.status, 2)
    XCTAssertTrue(timeout.errors.hasPrefix("error: --timeout must be a positive number of seconds, not -1.0"), timeout.errors)
    for value in ["0", "-1", "abc", "inf", "nan"] {
      let limit = run(["--time-limit=\(value)"])
      XCTAssertEqual(limit.status, 2, value)
      XCTAssertTrue(limit.errors.hasPrefix("error: --time-limit must be a positive number of seconds or none, not \(value)\n"),
                    limit.errors)
    }
    let noWorkers = run(["--workers", "0"])
    XCTAssertEqual(noWorkers.status, 2)
    XCTAssertTrue(noWorkers.errors.hasPrefix("error: --workers must be at least 1, not 0"), noWorkers.errors)
    let noWidth = run(["--async-width", "0"])
    XCTAssertEqual(noWidth.status, 2)
    XCTAssertTrue(noWidth.errors.hasPrefix("error: --async-width must be at least 1, not 0"), noWidth.errors)
    let inProcess = run(["--workers", "2", "--isolation", "none"])
    XCTAssertEqual(inProcess.status, 2)
    XCTAssertEqual(inProcess.errors, "error: --workers 2 runs tests in worker processes; --isolation none runs them in this process, one at a time\n")
    XCTAssertEqual(inProcess.output, "")
  }

  /// Every run has a time limit unless it says otherwise: a minute by default, any positive
  /// number of seconds (fractions too), or none.
  func testTheTimeLimitIsAMinuteByDefaultTakesFractionsAndCanBeTurnedOff() throws {
    XCTAssertEqual(try TimeLimit(nil).duration, .seconds(60))
    XCTAssertEqual(try TimeLimit("0.25").duration, .milliseconds(250))
    XCTAssertEqual(try TimeLimit("600").duration, .seconds(600))
    XCTAssertNil(try TimeLimit("none").duration)
    let help = run(["--help"])
    XCTAssertTrue(help.output.contains("or none for no limit (default: 60)"), help.output)
  }

  func testAFilterThatSelectsNothingExitsTwoNamingIt() {
    for arguments in [["--filter", "Calculater"], ["--list", "--filter", "Calculater"]] {
      let result = run(arguments + ["--filter", "tag:fast"])
      XCTAssertEqual(result.status, 2, "\(arguments)")
      XCTAssertEqual(result.errors,
                     "error: no test matches --filter \"Calculater\", --filter \"tag:fast\" (--list shows the tests; --allow-empty allows an empty run)\n")
      XCTAssertEqual(result.output, "")
    }
  }

  func testAllowEmptyMakesAnEmptySelectionAPassingRun() {
    let result = run(["--filter", "Calculater", "--allow-empty"])
    XCTAssertEqual(result.status, 0, result.errors)
    XCTAssertTrue(result.output.contains("Result: 0 passed, 0 failed, 0 skipped"), result.output)
  }

  func testSuitesWithNoTestAreAnEmptySelection() {
    let result = run([], suites: [Suite("Empty") {}])
    XCTAssertEqual(result.status, 2)
    XCTAssertEqual(result.errors, "error: no test to run: the suites contain no test (--allow-empty allows an empty run)\n")
  }

  func testListPrintsTestIDs() {
    let result = run(["--list", "--filter", "Calculator/"])
    XCTAssertEqual(result.status, 0)
    XCTAssertEqual(result.output, "Calculator/adds\nCalculator/subtracts\n")
  }

  func testShuffleWithoutSeedPrintsOne() {
    let result = run(["--shuffle"])
    XCTAssertEqual(result.status, 0, result.errors)
    XCTAssertTrue(result.output.hasPrefix("Shuffled with seed "), result.output)
    let seeded = run(["--shuffle", "99"])
    XCTAssertTrue(seeded.output.hasPrefix("Shuffled with seed 99 (replay with --shuffle 99)\n"), seeded.output)
  }

  func testHelpExitsZero() {
    let result = run(["--help"])
    XCTAssertEqual(result.status, 0)
    XCTAssertTrue(result.output.contains("--waiter <name|all>"), result.output)
    XCTAssertTrue(result.output.contains("\n  --shuffle [<seed>]      Shuffle tests within each suite"), result.output)
  }

  func testTheUsageLineNamesEveryOption() throws {
    let help = run(["--help"]).output
    let usage = try XCTUnwrap(help.split(separator: "\n").first { $0.hasPrefix("USAGE: ") })
    let options = help.split(separator: "\n").compactMap { line -> String? in
      guard line.hasPrefix("  --") else { return nil }
      return String(line.dropFirst(2).prefix { $0 != " " })
    }
    XCTAssertGreaterThan(options.count, 12)
    for option in options { XCTAssertTrue(usage.contains("[\(option)"), "\(option) is missing from \(usage)") }
  }

  func testJUnitWithoutTheModuleIsAUsageError() {
    let result = run(["--junit", "/tmp/report.xml"])
    XCTAssertEqual(result.status, 2)
    XCTAssertTrue(result.errors.contains("--junit needs the AsyncHarnessJUnit product"), result.errors)
  }

  func testJSONLinesFileIsWritten() throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("harness-\(UUID()).jsonl").path
    defer { try? FileManager.default.removeItem(atPath: path) }
    XCTAssertEqual(run(["--json", path]).status, 0)
    let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
    let kinds = try lines.map { try Event(jsonLine: $0).kind.name }
    XCTAssertEqual(kinds.first, "runStarted")
    XCTAssertEqual(kinds.last, "runEnded")
    XCTAssertEqual(kinds.filter { $0 == "testEnded" }.count, 2)
  }

  func testDefaultWaitersApplyWithoutWaiterFlag() {
    let output = WrittenText()
    let status = HarnessMain.status(arguments: [], suites: suites, defaultWaiters: .all, console: .plain,
                                    output: output.write, errors: { _ in })
    XCTAssertEqual(status, 0)
    XCTAssertTrue(output.text.contains("Result: 12 passed, 0 failed, 0 skipped"), output.text)
    let single = WrittenText()
    _ = HarnessMain.status(arguments: ["--waiter", "probePoller"], suites: suites, defaultWaiters: .all,
                           console: .plain, output: single.write, errors: { _ in })
    XCTAssertTrue(single.text.contains("Result: 2 passed, 0 failed, 0 skipped"), single.text)
  }
}
