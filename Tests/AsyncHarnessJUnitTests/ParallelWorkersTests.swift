import AsyncHarness
import Foundation
import HarnessTestSupport
import XCTest

@testable import AsyncHarnessJUnit

/// Issue 23, tests of a suite in parallel across worker processes: the `harness-fixture`
/// executable's `Parallel` suite (waits on real callbacks, a crash, a hang, a retry, a
/// failure, a skip) run under every strategy with `--workers 4` gives the
/// verdicts, events and JUnit testcases of `--workers 1`, the report in plan order; the
/// `.serialized` `Ordered` suite keeps running in order in one worker under `--parallel`.
final class ParallelWorkersTests: ReportTestCase {
  private struct Run {
    var status: Int32
    var output: String
    var events: [Event]
    var report: ParsedElement
  }

  private func runFixture(_ arguments: [String], name: String, fixture: URL? = nil,
                          selecting filters: [String] = ["Parallel/", "Ordered/"]) throws -> Run {
    let events = path("\(name).jsonl")
    let report = path("\(name).xml")
    let run = try runToEnd(try fixture ?? harnessFixture(), filters.flatMap { ["--filter", $0] } + [
      "--waiter", "all", "--time-limit", "0.5", "--json", events, "--junit", report,
    ] + arguments)
    let lines = try String(contentsOfFile: events, encoding: .utf8).split(separator: "\n")
    return Run(status: run.status, output: run.output, events: try lines.map { try Event(jsonLine: $0) },
               report: try XMLReader.readDocument(report))
  }

  /// A run's events with what differs between two runs of the same tests taken out: times,
  /// how reads cut each test's output (its pieces are joined into one), the process numbers
  /// the tests print, and the addresses of a crash's stack trace.
  private func comparable(_ events: [Event]) -> Set<Event> {
    var output: [TestID: String] = [:]
    var comparable: Set<Event> = []
    for event in events {
      if case .outputCaptured(let test, let text) = event.kind {
        output[test, default: ""] += text
      } else {
        comparable.insert(event.withoutTimes)
      }
    }
    for (test, text) in output {
      let kept = text.components(separatedBy: "Current stack trace:")[0]
      comparable.insert(Event(.outputCaptured(test, kept.replacingOccurrences(of: #"process \d+"#, with: "process N",
                                                                              options: .regularExpression)),
                              timestamp: Date(timeIntervalSince1970: 0)))
    }
    return comparable
  }

  /// Each testcase's suite, name, result elements and their messages, in report order.
  private func testCases(_ report: ParsedElement) -> [[String]] {
    report.testCases.map { testCase in
      [testCase.attribute("classname") ?? "", testCase.attribute("name") ?? ""]
        + testCase.elements.filter { !$0.name.hasPrefix("system-") }.map { "\($0.name): \($0.attribute("message") ?? "")" }
    }
  }

  /// Tests and suites that share a name (the rude fixture's `Duplicates` and `Twin` suites,
  /// made with a `for` loop) spread over workers with `--parallel` run each its own body:
  /// the same results and report as one worker.
  func testRepeatedNamesInParallelGiveTheResultsOfASerialRun() throws {
    let rude = try builtExecutable("harness-rude-fixture")
    let selection = ["Duplicates/", "Twin"]
    let serial = try runFixture(["--workers", "1"], name: "serial", fixture: rude, selecting: selection)
    let parallel = try runFixture(["--workers", "3", "--parallel"], name: "parallel", fixture: rude, selecting: selection)
    XCTAssertEqual(parallel.status, 1, parallel.output)
    XCTAssertEqual(comparable(parallel.events), comparable(serial.events))
    XCTAssertEqual(testCases(parallel.report), testCases(serial.report))
    XCTAssertEqual(testCases(parallel.report).filter { $0.count > 2 }.count, 6 * 2, "one failing test in each suite")
  }

  func testParallelTestsGiveTheResultsEventsAndReportOfASerialRun() throws {
    let serial = try runFixture(["--workers", "1"], name: "serial")
    let parallel = try runFixture(["--workers", "4", "--parallel"], name: "parallel")
    XCTAssertEqual(serial.status, 1, serial.output)
    XCTAssertEqual(parallel.status, 1, parallel.output)

    let (inParallel, inSerial) = (comparable(parallel.events), comparable(serial.events))
    XCTAssertEqual(inParallel.subtracting(inSerial), [], "only in the parallel run")
    XCTAssertEqual(inSerial.subtracting(inParallel), [], "only in the serial run")
    XCTAssertEqual(testCases(parallel.report), testCases(serial.report))
    XCTAssertEqual(testCases(parallel.report).count, 6 * 20)
    XCTAssertEqual(parallel.report.elements(named: "testsuite").map { $0.attribute("name") ?? "" },
                   serial.report.elements(named: "testsuite").map { $0.attribute("name") ?? "" })
    try assertCheckerPasses(path("parallel.xml"), ["--expect-tests", String(6 * 20)])

    // The waits really ran in several worker processes at once.
    var processes: Set<String> = []
    for event in parallel.events {
      if case .outputCaptured(let test, let text) = event.kind, test.suite == "Parallel", test.host == "expectation" {
        processes.insert(text)
      }
    }
    XCTAssertGreaterThan(processes.count, 1, "\(processes)")
    // The crash and the hang each cost only their own test.
    let verdicts = Dictionary(parallel.events.compactMap { event -> (String, Verdict)? in
      guard case .testEnded(let test, let result) = event.kind, test.host == "semaphore" else { return nil }
      return ("\(test.suite)/\(test.name)", result.verdict)
    }, uniquingKeysWith: { $1 })
    XCTAssertEqual(verdicts["Parallel/crashes"], .errored)
    XCTAssertEqual(verdicts["Parallel/hangs outside a wait"], .errored)
    XCTAssertEqual(verdicts["Parallel/passes on attempt 2"], .flaky)
    XCTAssertEqual(verdicts["Ordered/reads the value"], .passed)
    XCTAssertEqual(verdicts.values.filter { $0 == .passed }.count, 15)
  }
}
