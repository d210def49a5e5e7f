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
