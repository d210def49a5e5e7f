import Foundation
import Testing
import XCTest

// Tests that print lines shaped like their testing library's own words: XCTest's start, pass,
// failure and skip lines, and Swift Testing's event records. Whatever they print, each gets
// the verdict `swift test` gives it: the harness hears each library on a channel of its own.

/// XCTest tests that print XCTest's lines.
final class ForgedLinesXCTests: XCTestCase {
  func testPrintsAPassLineThenFails() {
    print("Test Case 'ForgedLinesXCTests.testPrintsAPassLineThenFails' passed (0.001 seconds)")
    XCTFail("failed after printing a pass line")
  }

  func testPrintsAFailureLineAndPasses() {
    print("\(#filePath):\(#line): error: ForgedLinesXCTests.testPrintsAFailureLineAndPasses : XCTAssertTrue failed - forged")
  }

  func testPrintsASkipLineAndPasses() {
    print("\(#filePath):\(#line): ForgedLinesXCTests.testPrintsASkipLineAndPasses : Test skipped - forged")
    print("Test Case 'ForgedLinesXCTests.testPrintsASkipLineAndPasses' skipped (0.0 seconds)")
  }

  func testPrintsAnotherTestsStartLineAndPasses() {
    print("Test Case 'ForgedLinesXCTests.testNotThere' started at 2026-11-26 12:00:00.000")
    print("Test Case 'LedgerXCTests.testPasses' started at 2026-11-26 12:00:00.000")
  }
}

/// Swift Testing tests that print Swift Testing's event records (version 0), for themselves.
@Suite struct ForgedLinesSwiftTests {
  @Test func printsAnEndedRecordThenFails() {
    print(Self.record("testEnded", "printsAnEndedRecordThenFails()", line: 33))
    #expect(Bool(false), "failed after printing a testEnded record")
  }

  @Test func printsAnIssueRecordAndPasses() {
    print(Self.record("issueRecorded", "printsAnIssueRecordAndPasses()", line: 38,
                      issue: #","issue":{"isKnown":false,"sourceLocation":{"column":5,"fileID":"LedgerTests\/ForgedLines.swift","line":43}}"#))
  }

  /// A line shaped like Swift Testing's record of `kind` for the test `name` of this suite.
  static func record(_ kind: String, _ name: String, line: Int, issue: String = "") -> String {
    #"{"kind":"event","payload":{"instant":{"absolute":1,"since1970":2}\#(issue),"kind":"\#(kind)","messages":[{"symbol":"fail","text":"forged"}],"testID":"LedgerTests.ForgedLinesSwiftTests\/\#(name)\/ForgedLines.swift:\#(line):4"},"version":0}"#
  }
}

/// A test that starts a child process holding its output and never waits for it (only with
/// EXISTING_TESTS_RUDE=1): it passes, and the child is its leak.
final class LeakingXCTests: XCTestCase {
  func testLeavesAChildHoldingItsOutput() throws {
    guard rude else { return }
    let sleeper = Process()
    sleeper.executableURL = URL(fileURLWithPath: "/bin/sleep")
    sleeper.arguments = ["30"]
    try sleeper.run()
  }
}

/// What a test sees of the harness that runs it: nothing in its way. No variable of its own (nor
/// one it set for Swift Testing), no library preloaded for the processes it starts, and, with `descriptors`, no pipe among the
/// descriptors a test opens (the channel was handed over as 3, and moved above 100,
/// close-on-exec). Tests running side by side open pipes of their own (an exit test does):
/// only a test that runs alone can look at descriptors.
func seesNoneOfTheHarness(descriptors: Bool) -> [String] {
  var seen = ProcessInfo.processInfo.environment.keys.filter { $0.hasPrefix("ASYNC_HARNESS") }.sorted()
  // Swift Testing's switch for its stream's underscored fields, which the harness turns on only until Swift Testing read it.
  seen += ProcessInfo.processInfo.environment.keys.filter { $0 == "SWT_EXPERIMENTAL_EVENT_STREAM_FIELDS_ENABLED" }
  if let preload = ProcessInfo.processInfo.environment["LD_PRELOAD"], preload.contains("asyncharness") {
    seen.append("LD_PRELOAD=\(preload)")
  }
  if descriptors { seen += (3..<100).filter { fcntl($0, F_GETFD) != -1 && isAPipe($0) }.map { "descriptor \($0)" } }
  return seen
}

/// Whether `descriptor` is a pipe (as the harness's channel is).
private func isAPipe(_ descriptor: Int32) -> Bool {
  var status = stat()
  return fstat(descriptor, &status) == 0 && (status.st_mode & S_IFMT) == S_IFIFO
}

final class PrivateChannelXCTests: XCTestCase {
  func testSeesNoneOfTheHarness() {
    XCTAssertEqual(seesNoneOfTheHarness(descriptors: true), [])
  }
}

@Suite struct PrivateChannelSwiftTests {
  @Test func seesNoneOfTheHarness() {
    #expect(LedgerTests.seesNoneOfTheHarness(descriptors: false) == [])
  }
}
