import AsyncHarness
import Foundation
import HarnessTestSupport
import XCTest

/// Issue 51: `harness test --workers N` cuts a Swift Testing suite between workers as it cuts an
/// XCTest class, when the library preloaded into the listing says that neither the suite nor
/// one around it is `.serialized`; a serialized suite runs whole in one process, with the
/// suites in it (Tests/Fixtures/ExistingTests: `PrintsItsProcess`, and
/// `PrintsItsProcessInOrder` with `Inside`, whose tests print the ID of their process).
final class SwiftTestingSuiteCutTests: ReportTestCase {
  private static let package = FixturePackage("ExistingTests", scratch: "existing-tests-scratch")
  private static let suite = "LedgerTests.PrintsItsProcess"
  private static let serialized = "LedgerTests.PrintsItsProcessInOrder"
  /// The tests, by suite.
  private static let tests = [
    suite: ["first()", "second()", "third()", "fourth()"],
    serialized: ["first()", "second()", "third()", "fourth()"],
    serialized + "/Inside": ["fifth()"],
  ]

  /// The times given make each test 10 s, so that over three workers one share ends inside
  /// each suite (at 30 s and 60 s of 90 s): `PrintsItsProcess` is cut there, after its third
  /// test, and its pieces run in two processes; `PrintsItsProcessInOrder`, serialized, runs
  /// whole in one, and `Inside` with it. Every test passes, and nothing fails outside the tests.
  func testASuiteThatIsNotSerializedIsCutAndASerializedOneRunsWholeInOneProcess() throws {
    let processes = try processesOfTheSuites(workers: 3, timed: true)
    XCTAssertEqual(Set(processes[Self.suite, default: [:]].values).count, 2,
                   "the suite that is not serialized ran in two processes: \(processes)")
    XCTAssertEqual(Set(processes[Self.serialized, default: [:]].values).count, 1,
                   "the serialized suite and the suite in it ran in one process: \(processes)")
  }

  /// With no times to balance by (none of these tests timed), each suite runs whole, in plan
  /// order, but `Inside` still runs in the process of the serialized suite it is in, not in a
  /// worker beside it.
  func testWithoutTimesASerializedSuiteStillRunsWithTheSuitesInIt() throws {
    let processes = try processesOfTheSuites(workers: 3, timed: false)
    XCTAssertEqual(Set(processes[Self.suite, default: [:]].values).count, 1, "\(processes)")
    XCTAssertEqual(Set(processes[Self.serialized, default: [:]].values).count, 1,
                   "the serialized suite and the suite in it ran in one process: \(processes)")
  }

  /// Runs the three suites in `workers` workers, with each test timed 10 s when `timed` (else
  /// only a test of another suite is), checks that every test passed, and returns the process
  /// each test printed, by its outermost suite (``serialized`` for `Inside`) and its path.
  private func processesOfTheSuites(workers: Int, timed: Bool) throws -> [String: [String: String]] {
    let harness = try builtHarness()
    try Self.package.build()
    let timings = path("timings.xml")
    let cases = timed
      ? Self.tests.flatMap { suite, names in names.map { "<testcase classname=\"\(suite)\" name=\"\($0)\" time=\"10\"/>" } }
      : ["<testcase classname=\"LedgerTests.LedgerSuite\" name=\"passes()\" time=\"10\"/>"]
    try "<testsuites><testsuite name=\"earlier\">\(cases.joined())</testsuite></testsuites>\n"
      .write(toFile: timings, atomically: true, encoding: .utf8)
    let json = path("events.jsonl")
    let run = try runToEnd(harness, [
      "test", "--package-path", Self.package.directory.path, "--skip-build", "--shard-timings", timings, "--json", json,
      "--filter", "PrintsItsProcess", "--workers", String(workers), "--", "--scratch-path", Self.package.scratch.path,
    ], limit: 300)
    XCTAssertEqual(run.status, 0, run.errors)
    let recorded = try EventRecorder(jsonLines: String(contentsOfFile: json, encoding: .utf8))
    XCTAssertEqual(recorded.results.count, 9)
    for (test, result, _) in recorded.results { XCTAssertEqual(result.verdict, .passed, test.path) }
    var processes: [String: [String: String]] = [:]
    for event in recorded.events {
      switch event.kind {
      case .outputCaptured(let test, let text):
        // A line printed beside other tests of its process is marked `[shared] `: still its process's.
        for line in text.split(separator: "\n") {
          guard let process = line.split(separator: "process ").last.map(String.init) else { continue }
          processes[test.suite.hasPrefix(Self.serialized) ? Self.serialized : test.suite, default: [:]][test.path] = process
        }
      case .outsideFailure(let failure): XCTFail("no failure is outside every test: \(failure)")
      default: break
      }
    }
    XCTAssertEqual(processes.values.map(\.count).reduce(0, +), 9, "each test printed its process: \(processes)")
    return processes
  }
}
