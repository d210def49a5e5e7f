import AsyncHarness
import Foundation
import HarnessTestSupport
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// Issue 30, leaked work: the `harness-fixture` executable's `Leaks` suite run as a real
/// child process. Each test that returns while work it started still runs (tasks holding
/// the cooperative pool, a spinning thread, a child process) carries a `leaked` warning
/// naming it, the tests after it pass in a clean process, and the run ends within seconds,
/// under the default isolation, two workers and a process per test.
final class LeakTests: ReportTestCase {
  func testLeaksAreNamedAndTheNextTestsPassUnderTheDefaultIsolation() throws {
    try assertLeaksAreNamed([])
  }

  func testLeaksAreNamedAndTheNextTestsPassWithTwoWorkers() throws {
    try assertLeaksAreNamed(["--workers", "2"])
  }

  func testLeaksAreNamedAndTheNextTestsPassWithAProcessPerTest() throws {
    try assertLeaksAreNamed(["--isolation", "test"])
  }

  private func assertLeaksAreNamed(_ isolation: [String]) throws {
    let start = ContinuousClock().now
    let run = try runToEnd(try harnessFixture(), isolation + [
      "--filter", "Leaks/", "--time-limit", "10", "--junit", path("report.xml"), "--json", path("events.jsonl"),
    ], limit: 120)
    XCTAssertLessThan(start.duration(to: .now), .seconds(30), "the run ends within seconds")
    XCTAssertEqual(run.status, 0, run.output + run.errors)
    let recorded = try EventRecorder(jsonLines: String(contentsOfFile: path("events.jsonl"), encoding: .utf8))
    var leaked: [String: [String]] = [:]
    var verdicts: [String: Verdict] = [:]
    for (test, result, _) in recorded.results {
      verdicts[test.name] = result.verdict
      leaked[test.name] = result.issues.filter { $0.kind == .leaked }.map(\.message)
    }
    var expected: [String: Verdict] = [
      "spins tasks": .passed, "awaits after the tasks": .passed, "spins a thread": .passed,
      "awaits after the thread": .passed, "leaves a child": .passed, "runs after the child": .passed,
    ]
    for priority in ["background", "medium", "high"] {
      expected["spins detached tasks at priority \(priority)"] = .passed
      expected["awaits after the \(priority) tasks"] = .passed
    }
    XCTAssertEqual(verdicts, expected)
    // A pool held at any priority is found, and named when it is not the one async bodies run at.
    for (priority, pool) in [("background", " at priority background"), ("medium", " at priority medium"), ("high", "")] {
      XCTAssertEqual(leaked["spins detached tasks at priority \(priority)"], [
        "Leaked work: the test returned while tasks it started hold every thread of Swift's cooperative pool\(pool) (a "
          + "job sent to the pool did not run within 0.5 seconds), so the next async test could not start; the worker "
          + "process is retired, so the next test runs in a fresh one",
      ], priority)
      XCTAssertEqual(leaked["awaits after the \(priority) tasks"], [], priority)
    }
    XCTAssertEqual(leaked["spins tasks"], [
      "Leaked work: the test returned while tasks it started hold every thread of Swift's cooperative pool (a job sent "
        + "to the pool did not run within 0.5 seconds), so the next async test could not start; the worker process is "
        + "retired, so the next test runs in a fresh one",
    ])
    let thread = try XCTUnwrap(leaked["spins a thread"]?.first, "\(leaked)")
    XCTAssertTrue(thread.hasPrefix("Leaked work: the test returned while threads it started are still running (thread "),
                  thread)
    XCTAssertTrue(thread.hasSuffix("); the worker process is retired, so the next test runs in a fresh one"), thread)
    let child = try XCTUnwrap(leaked["leaves a child"]?.first, "\(leaked)")
    XCTAssertTrue(child.hasPrefix("Leaked work: the test returned while child processes it started are still running ("),
                  child)
    XCTAssertTrue(child.hasSuffix(" (/bin/sleep 7)); they go on, and may hold the test's output open"), child)
    for clean in ["awaits after the tasks", "awaits after the thread", "runs after the child"] {
      XCTAssertEqual(leaked[clean], [], clean)
    }
    // The leaked child is this test's to end.
    let pid = child.split(separator: "(").dropFirst(2).first.flatMap { Int32($0.prefix { $0.isNumber }) }
    if let pid { kill(pid, SIGKILL) }
    XCTAssertTrue(run.output.contains(": warning: Leaked work: the test returned while tasks it started"), run.output)
    try assertCheckerPasses(path("report.xml"), ["--expect-tests", "12", "--expect-failures", "0", "--expect-errors", "0",
                                                 "--expect-skipped", "0"])
    let report = try String(contentsOfFile: path("report.xml"), encoding: .utf8)
    XCTAssertTrue(report.contains("Leaked work: the test returned while tasks it started"), "the JUnit report shows the leak")
  }
}
