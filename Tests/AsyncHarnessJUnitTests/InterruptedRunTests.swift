import AsyncHarness
import Foundation
import XCTest

@testable import AsyncHarnessJUnit

/// Issue 8, items 6 and 7: a run ended from outside leaves no temporary file beside its
/// report (or the next run removes it) and a JSON Lines file of whole lines without
/// `runEnded`. Runs the `harness-fixture` executable and ends it with real signals.
final class InterruptedRunTests: ReportTestCase {

  /// Starts the fixture in-process and returns once its `blocks` test is running (it says
  /// so on standard output: `--no-capture` lets that through), with the pipe of its
  /// standard error.
  private func startBlockedRun() throws -> (process: Process, errors: Pipe) {
    let process = Process()
    process.executableURL = try harnessFixture()
    process.arguments = ["--no-capture", "--filter", "Fixture/", "--junit", path("report.xml"),
                         "--json", path("events.jsonl")]
    let pipe = Pipe()
    let errors = Pipe()
    process.standardOutput = pipe
    process.standardError = errors
    let exited = DispatchSemaphore(value: 0)
    process.terminationHandler = { _ in exited.signal() }
    exits[process.processIdentifier] = exited
    try process.run()
    try read(pipe, until: "blocking\n")
    return (process, errors)
  }

  /// Reads `pipe` until what it delivered contains `text`.
  private func read(_ pipe: Pipe, until text: String) throws {
    var seen = ""
    while !seen.contains(text) {
      let data = pipe.fileHandleForReading.availableData
      guard !data.isEmpty else { return XCTFail("the pipe ended before \(text.debugDescription): \(seen)") }
      seen += String(decoding: data, as: UTF8.self)
    }
  }

  /// Signalled when each started fixture exits, by process identifier.
  private var exits: [Int32: DispatchSemaphore] = [:]

  /// Waits for a started fixture to exit; one still running after 30 s is killed and fails
  /// the test, so a lost signal can never hang the test run.
  private func waitForExit(_ process: Process, file: StaticString = #filePath, line: UInt = #line) {
    guard let exited = exits[process.processIdentifier] else { return process.waitUntilExit() }
    if exited.wait(timeout: .now() + .seconds(30)) == .timedOut {
      XCTFail("the fixture did not exit within 30 s of its signal; killed", file: file, line: line)
      kill(process.processIdentifier, SIGKILL)
    }
    process.waitUntilExit()
  }

  private func files() throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
  }

  /// The event kinds in the JSON Lines file, each line decoded whole.
  private func eventKinds() throws -> [String] {
    let text = try String(contentsOfFile: path("events.jsonl"), encoding: .utf8)
    XCTAssertTrue(text.hasSuffix("\n"))
    return try text.split(separator: "\n").map { try Event(jsonLine: $0).kind.name }
  }

  /// In-process, the first SIGINT or SIGTERM cannot stop a test hung outside a wait: it
  /// says so, and the second one exits at once with 128 + the signal, leaving the previous
  /// report (none here) and no temporary file.
  func testASecondInterruptExitsAtOnceAndLeavesNoTemporaryFile() throws {
    for signal in [SIGINT, SIGTERM] {
      let (process, errors) = try startBlockedRun()
      XCTAssertEqual(try files().filter { $0.hasPrefix(".report.xml.body.tmp-") }.count, 1, "the report's body, while running")
      kill(process.processIdentifier, signal)
      try read(errors, until: "stopping the run after reporting what ran; send it again to exit at once\n")
      kill(process.processIdentifier, signal)
      waitForExit(process)
      XCTAssertEqual(process.terminationReason, .exit)
      XCTAssertEqual(process.terminationStatus, 128 + signal)
      XCTAssertEqual(try files(), ["events.jsonl"], "signal \(signal)")
      XCTAssertEqual(try eventKinds(), ["runStarted", "suiteStarted", "testStarted", "testEnded", "testStarted"])
    }
  }

  func testTheNextRunRemovesWhatAKilledRunLeft() throws {
    let (process, _) = try startBlockedRun()
    kill(process.processIdentifier, SIGKILL)
    waitForExit(process)
    let left = try files().filter { $0.hasPrefix(".report.xml.body.tmp-") }
    XCTAssertEqual(left.count, 1)
    try "not ours".write(toFile: path(".other.xml.body.tmp-abcdef"), atomically: false, encoding: .utf8)

    let next = Process()
    next.executableURL = try harnessFixture()
    next.arguments = ["--filter", "Fixture/passes", "--junit", path("report.xml")]
    next.standardOutput = FileHandle.nullDevice
    try next.run()
    next.waitUntilExit()
    XCTAssertEqual(next.terminationStatus, 0)
    XCTAssertEqual(try files(), [".other.xml.body.tmp-abcdef", "events.jsonl", "report.xml"])
    try assertCheckerPasses(path("report.xml"), ["--expect-tests", "1", "--expect-failures", "0", "--expect-errors", "0", "--expect-skipped", "0"])
  }

  func testStaleFilesAreThoseOfThisReportOlderThanTheRun() throws {
    let old = Date(timeIntervalSinceNow: -60)
    for name in [".r.xml.body.tmp-AbC123", ".r.xml.tmp-x1y2z3", ".r.xml.body.tmp-toolong1", ".rr.xml.tmp-abcdef", ".r.xml.tmp-fresh1"] {
      XCTAssertTrue(FileManager.default.createFile(atPath: path(name), contents: nil))
      if name != ".r.xml.tmp-fresh1" { try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: path(name)) }
    }
    TemporaryFiles.removeStale(of: ["r.xml.body", "r.xml"], in: directory.path, olderThan: Date(timeIntervalSinceNow: -30))
    XCTAssertEqual(try files(), [".r.xml.body.tmp-toolong1", ".r.xml.tmp-fresh1", ".rr.xml.tmp-abcdef"])
  }
}
