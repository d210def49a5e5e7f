import AsyncHarness
import Foundation
import XCTest

@testable import AsyncHarnessJUnit

/// Issue 8, items 1–3: caps that keep every report readable by libxml2's default parser, and
/// cut notes and sanitizing that describe what the user gave.
final class ReportLimitsTests: ReportTestCase {
  func testTwoMegabyteNamesInARowStayReadableByLibxml2WithoutHugeMode() throws {
    let suite = String(repeating: "s", count: 2_000_000)
    let names = (0..<10).map { String(repeating: "x", count: 2_000_000) + "\($0)" }
    let failure = TestResult(verdict: .failed, issues: [Issue(kind: .expectationFailed, message: String(repeating: "m", count: 2_000_000))])
    let report = try report(runEvents(suiteEvents(suite, waiter: "w", names.map { ($0, failure, []) })))

    let cut = String(repeating: "x", count: 3033) + " [AsyncHarness: 1996968 more bytes cut]"
    XCTAssertEqual(report.testCases.map { $0.attribute("name")! }, [cut] + (2...10).map { "\(cut) (\($0))" })
    let classname = String(repeating: "s", count: 3033) + " [AsyncHarness: 1996967 more bytes cut] [w]"
    XCTAssertEqual(Set(report.testCases.map { $0.attribute("classname")! }), [classname])
    XCTAssertEqual(report.elements(named: "testsuite")[0].attribute("name"), classname)
    XCTAssertEqual(
      report.testCases[0].elements(named: "failure")[0].attribute("message"),
      String(repeating: "m", count: 4057) + " [AsyncHarness: 1995943 more bytes cut]")
    XCTAssertTrue(report.testCases.allSatisfy { $0.attributes.allSatisfy { $0.value.utf8.count <= 4096 } })

    // The full names, capped like any text: the suite's once, in its first testcase.
    let note = " more bytes cut here; the report keeps at most 1048576 bytes per text]"
    XCTAssertEqual(
      report.testCases[0].elements(named: "system-out")[0].text,
      "[AsyncHarness: the classname in full]\n\(suite.prefix(1_048_576))\n[AsyncHarness: 951424\(note) [w]\n"
        + "[AsyncHarness: the name in full]\n\(names[0].prefix(1_048_576))\n[AsyncHarness: 951425\(note)\n")
    XCTAssertEqual(
      report.testCases[9].elements(named: "system-out")[0].text,
      "[AsyncHarness: the name in full]\n\(names[9].prefix(1_048_576))\n[AsyncHarness: 951425\(note)\n")
    try assertCheckerPasses(path("report.xml"), ["--expect-tests", "10", "--expect-failures", "10", "--expect-errors", "0", "--expect-skipped", "0"])
  }

  func testAnEscapeCutShortAtTheEndOfAMessageKeepsWhatTheHarnessAddsAfterIt() throws {
    let location = localLocation("Tests/A.swift", line: 12)
    let cases = try report(runEvents(suiteEvents("S", [
      ("fails", TestResult(verdict: .failed, issues: [
        Issue(kind: .expectationFailed, message: "red \u{1B}[", sourceLocation: location),
        Issue(kind: .warning, message: "dim \u{1B}[2", sourceLocation: location),
      ]), []),
      ("known", TestResult(verdict: .knownIssue, reason: "bug \u{1B}[", issues: []), []),
    ]))).testCases
    XCTAssertEqual(cases[0].elements(named: "failure")[0].text, "red ␛[ Tests/A.swift:12")
    XCTAssertEqual(cases[0].elements(named: "system-err")[0].text, "warning: dim ␛[2 Tests/A.swift:12")
    XCTAssertEqual(cases[1].elements(named: "skipped")[0].attribute("message"), "known issue: bug ␛[")
    XCTAssertEqual(
      try report(runEvents(suiteEvents("S \u{1B}[", waiter: "w", [("t", passed, [])])), file: "suite.xml")
        .testCases[0].attribute("classname"),
      "S ␛[ [w]")
  }

  func testCutNotesCountTheBytesTheUserGave() throws {
    let controls = String(repeating: "\u{1}", count: 2_097_152)  // 2 MiB given, 6 MiB once sanitized
    let report = try report(runEvents(suiteEvents("S", [("chatty", passed, [output(controls), output("more")])])))
    XCTAssertEqual(
      report.testCases[0].elements(named: "system-out")[0].text,
      String(repeating: "␁", count: 349_525)
        + "\n[AsyncHarness: 1747631 more bytes cut here; the report keeps at most 1048576 bytes per text]")

    var colored = XMLText.captured(limit: 4)
    colored.append("\u{1B}[31mabcdef\u{1B}[0m")  // 15 bytes given; "abcd" kept stands for 9 of them
    XCTAssertEqual(colored.text, "abcd\n[AsyncHarness: 6 more bytes cut here; the report keeps at most 4 bytes per text]")
    XCTAssertEqual(
      XMLText(attribute: String(repeating: "\u{0}", count: 5000)).string,
      String(repeating: "␀", count: 1353) + " [AsyncHarness: 3647 more bytes cut]")
  }
}
