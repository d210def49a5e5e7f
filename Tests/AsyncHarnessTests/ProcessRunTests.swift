@testable @_spi(ForToolsIntegrationOnly) import AsyncHarness
import Foundation
import XCTest

/// What `harness test` runs to its end (SwiftPM, a bundle's listings): reaped by `waitpid` as it
/// ends (issue 51: Foundation's `Process.waitUntilExit` looked every 50 ms), with what it wrote
/// on either stream, in order, how it ended, and whether its time limit stopped it.
final class ProcessRunTests: XCTestCase {
  func testAProcessThatExitsGivesItsStatusAndBothStreamsInOrder() throws {
    let run = try TestBundle.run("/bin/sh", ["-c", "echo out; echo err >&2; echo more; exit 3"])
    XCTAssertEqual(run.status, 3)
    XCTAssertEqual(run.ending, .exited(3))
    XCTAssertEqual(run.output, "out\nerr\nmore\n")
    XCTAssertFalse(run.stopped)
  }

  func testAProcessASignalEndedCountsAs128AndTheSignal() throws {
    let run = try TestBundle.run("/bin/sh", ["-c", "echo before; kill -TERM $$"])
    XCTAssertEqual(run.ending, .signaled(SIGTERM))
    XCTAssertEqual(run.status, 128 + SIGTERM)
    XCTAssertEqual(run.output, "before\n")
    XCTAssertFalse(run.stopped, "no limit stopped it")
  }

  /// A listing that hangs is stopped at its limit with what it started (its group), so that
  /// its output pipe closes and the run goes on.
  func testAProcessPastItsLimitIsStoppedWithWhatItStarted() throws {
    let run = try TestBundle.run("/bin/sh", ["-c", "echo started; sleep 30 & sleep 30"], limit: .milliseconds(200))
    XCTAssertEqual(run.ending, .signaled(SIGKILL))
    XCTAssertTrue(run.stopped)
    XCTAssertEqual(run.output, "started\n")
  }

  func testItRunsInTheDirectoryGiven() throws {
    let run = try TestBundle.run("/bin/pwd", [], in: URL(fileURLWithPath: "/tmp"))
    XCTAssertEqual(run.output, "/tmp\n")
  }

  func testAnExecutableThatCannotStartIsAnError() {
    XCTAssertThrowsError(try TestBundle.run("/nonexistent/swift", [])) { error in
      XCTAssertTrue("\(error)".contains("cannot start /nonexistent/swift"), "\(error)")
    }
  }
}
