import AsyncHarness
import Foundation
import HarnessTestSupport
import XCTest

/// Issue 51: `harness test --workers N` cuts a Swift Testing suite between workers as it cuts an
/// XCTest class, when the library preloaded into the listing says that neither the suite nor
/// one around it is `.serialized`; a serialized suite runs whole in one process
/// (Tests/Fixtures/ExistingTests: `PrintsItsProcess` and `PrintsItsProcessInOrder`, whose tests
/// print the ID of the process they run in).
final class SwiftTestingSuiteCutTests: ReportTestCase {
  private static let package = FixturePackage("ExistingTests", scratch: "existing-tests-scratch")
  private static let names = ["first()", "second()", "third()", "fourth()"]

  /// The times given make each test 10 s, so that over three workers one share ends inside
  /// each suite (at 26.7 s and 53.3 s of 80 s): `PrintsItsProcess` is cut there, after its
  /// third test, and its pieces run in two processes; `PrintsItsProcessInOrder`, serialized,
  /// runs whole in one. Every test passes, and nothing fails outside the tests.
  func testASuiteThatIsNotSerializedIsCutAndASerializedOneRunsWholeInOneProcess() throws {
    let processes = try processesOfTheTwoSuites(workers: 3)
    XCTAssertEqual(processes["LedgerTests.PrintsItsProcess", default: [:]].count, 4, "each test printed its process")
    XCTAssertEqual(Set(processes["LedgerTests.PrintsItsProcess", default: [:]].values).count, 2,
                   "the suite that is not serialized ran in two processes: \(processes)")
    XCTAssertEqual(processes["LedgerTests.PrintsItsProcessInOrder", default: [:]].count, 4, "each test printed its process")
    XCTAssertEqual(Set(processes["LedgerTests.PrintsItsProcessInOrder", default: [:]].values).count, 1,
                   "the serialized suite ran in one process: \(processes)")
  }

  /// Runs the two suites with the times above in `workers` workers, checks that every test
  /// passed, and returns the process each test printed, by suite and test.
  private func processesOfTheTwoSuites(workers: Int) throws -> [String: [String: String]] {
    let harness = try builtHarness()
    try Self.package.build()
    let timings = path("timings.xml")
    let cases = ["LedgerTests.PrintsItsProcess", "LedgerTests.PrintsItsProcessInOrder"].flatMap { suite in
      Self.names.map { "<testcase classname=\"\(suite)\" name=\"\($0)\" time=\"10\"/>" }
    }
    try "<testsuites><testsuite name=\"earlier\">\(cases.joined())</testsuite></testsuites>\n"
      .write(toFile: timings, atomically: true, encoding: .utf8)
    let json = path("events.jsonl")
    let run = try runToEnd(harness, [
      "test", "--package-path", Self.package.directory.path, "--skip-build", "--shard-timings", timings, "--json", json,
      "--filter", "PrintsItsProcess", "--workers", String(workers), "--", "--scratch-path", Self.package.scratch.path,
    ], limit: 300)
    XCTAssertEqual(run.status, 0, run.errors)
    let recorded = try EventRecorder(jsonLines: String(contentsOfFile: json, encoding: .utf8))
    XCTAssertEqual(recorded.results.count, 8)
    for (test, result, _) in recorded.results { XCTAssertEqual(result.verdict, .passed, test.path) }
    var processes: [String: [String: String]] = [:]
    for event in recorded.events {
      switch event.kind {
      case .outputCaptured(let test, let text):
        // A line printed beside other tests of its process is marked `[shared] `: still its process's.
        for line in text.split(separator: "\n") {
          guard let process = line.split(separator: "process ").last.map(String.init) else { continue }
          processes[test.suite, default: [:]][test.name] = process
        }
      case .outsideFailure(let failure): XCTFail("no failure is outside every test: \(failure)")
      default: break
      }
    }
    return processes
  }
}
