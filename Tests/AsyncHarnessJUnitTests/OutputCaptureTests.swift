import AsyncHarness
import Foundation
import XCTest

/// Issue 9, output captured per test: what a test writes through `print`, `FileHandle`
/// and C stdio is its output in every isolation mode (the console stays clean), and
/// `--no-capture` lets it through to the terminal. The `harness-fixture` executable runs as
/// a real child process.
final class OutputCaptureTests: ReportTestCase {
  private func capturedOutput() throws -> [String: String] {
    var output: [String: String] = [:]
    for line in try String(contentsOfFile: path("events.jsonl"), encoding: .utf8).split(separator: "\n") {
      if case .outputCaptured(let test, let text) = try Event(jsonLine: line).kind { output[test.name, default: ""] += text }
    }
    return output
  }

  func testWhatATestPrintsIsItsOutputInEveryIsolationMode() throws {
    for isolation in ["worker", "none"] {
      let run = try runToEnd(try harnessFixture(), ["--isolation", isolation, "--filter", "Output/",
                                                    "--json", path("events.jsonl")])
      XCTAssertEqual(run.status, 0, run.output)
      XCTAssertFalse(run.output.contains("print to standard output"), "\(isolation): \(run.output)")
      XCTAssertEqual(run.errors, "", isolation)
      let output = try XCTUnwrap(try capturedOutput()["prints everywhere"], isolation)
      for line in ["print to standard output\n", "FileHandle to standard error\n", "C puts\n", "logged"] {
        XCTAssertTrue(output.contains(line), "\(isolation): \(line) in \(output)")
      }
      XCTAssertEqual(output.count, "print to standard output\nFileHandle to standard error\nC puts\nlogged".count,
                     "\(isolation): nothing else, nothing twice")
    }
  }

  func testInProcessCaptureIsBoundedLikeAWorkers() throws {
    let run = try runToEnd(try harnessFixture(), ["--isolation", "none", "--filter", "Crashes/prints 50 MB",
                                                  "--json", path("events.jsonl")])
    XCTAssertEqual(run.status, 0, run.output)
    XCTAssertFalse(run.output.contains("xxxx"), "the test's output is captured, not printed")
    let output = try XCTUnwrap(try capturedOutput()["prints 50 MB"])
    XCTAssertTrue(output.hasSuffix("\n[AsyncHarness: 51380224 more bytes cut here; the report keeps at most 1048576 bytes per text]"),
                  String(output.suffix(200)))
    XCTAssertEqual(output.utf8.count, 1_048_576 + "\n[AsyncHarness: 51380224 more bytes cut here; the report keeps at most 1048576 bytes per text]".utf8.count)
  }

  func testNoCaptureLetsOutputThroughAndRunsInProcess() throws {
    let run = try runToEnd(try harnessFixture(), ["--no-capture", "--filter", "Output/", "--json", path("events.jsonl")])
    XCTAssertEqual(run.status, 0, run.output)
    XCTAssertTrue(run.output.contains("print to standard output\nC puts\n"), run.output)
    XCTAssertEqual(run.errors, "FileHandle to standard error\n")
    XCTAssertEqual(try capturedOutput()["prints everywhere"], "logged", "only the harness's own log")
  }

  func testNoCaptureCannotBeCombinedWithWorkers() throws {
    let run = try runToEnd(try harnessFixture(), ["--no-capture", "--isolation", "worker"])
    XCTAssertEqual(run.status, 2)
    XCTAssertTrue(run.errors.hasPrefix(
      "error: --no-capture runs the tests in this process, so it cannot be combined with --isolation worker\n"), run.errors)
  }
}
