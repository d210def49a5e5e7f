import AsyncHarness
import AsyncHarnessShared
import Foundation
import XCTest

@testable import AsyncHarnessJUnit

/// Property-style tests: generated hostile names, messages and output always give a
/// well-formed report with the expected counts, and the external checker accepts it.
final class NastyInputTests: ReportTestCase {
  /// Pieces that break naive JUnit writers.
  static let pieces = [
    "\u{0}", "\u{1}", "\u{8}", "\u{B}", "\u{C}", "\u{1B}", "\u{1B}[31m", "\u{1B}[m", "\u{1B}[1;4;38;5;208m",
    "\u{1B}]0;title\u{7}", "\u{1B}[", "\u{7F}", "\u{85}", "\u{9B}", "\u{FFFE}", "\u{FFFF}", "]]>", "<![CDATA[",
    "<", ">", "&", "&amp;", "\"", "'", "\t", "\n", "\r", "\r\n", "\u{301}", "\u{20DD}", "🧪", "👩‍👩‍👧", "🇫🇷",
    "\u{200B}", "\u{2028}", "\u{FEFF}", "\u{10FFFF}", "--", "<!--", "?>", "%", "\\", "日本語", "ascii",
  ]

  static func nasty(_ generator: inout SeededRandomGenerator, maxPieces: Int = 12) -> String {
    (0..<Int.random(in: 0...maxPieces, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
  }

  struct Generated {
    var events: [Event] = []
    var expected = JUnitCounts()
  }

  /// Suites of tests with nasty text everywhere, one test carrying a 1 MB message and output.
  static func generate(seed: UInt64) -> Generated {
    var generator = SeededRandomGenerator(seed: seed)
    var generated = Generated()
    generated.events.append(Event(.runStarted(RunInfo(seed: seed, repetitions: 2, waiters: ["semaphore"]))))
    let huge = String(repeating: "x\u{1B}[32m\u{0}é", count: 1_048_576 / 8)
    for suiteIndex in 0..<4 {
      let suite = suiteIndex == 0 ? "" : nasty(&generator)
      let waiter = nasty(&generator, maxPieces: 3)
      var lateIssues: [Issue] = []
      var tests: [(name: String, result: TestResult, extra: [TestEvent])] = []
      for testIndex in 0..<40 {
        let message = suiteIndex == 1 && testIndex == 0 ? huge : nasty(&generator)
        let location = SourceLocation(
          fileID: nasty(&generator, maxPieces: 2), filePath: "/x/\(nasty(&generator, maxPieces: 2))", line: testIndex, column: 1)
        let issue = Issue(kind: Issue.Kind.allCases.randomElement(using: &generator)!, message: message, sourceLocation: location)
        let verdict = Verdict.allCases.randomElement(using: &generator)!
        let issues = verdict.isFailure || verdict == .knownIssue ? [issue] : [Issue(kind: .warning, message: message)]
        let reason = Bool.random(using: &generator) ? nasty(&generator) : nil
        let output = output(message + nasty(&generator))
        tests.append((testIndex % 5 == 0 ? "" : nasty(&generator), TestResult(verdict: verdict, reason: reason, issues: issues), [output]))
        generated.expected.count(resultElement: verdict == .passed || verdict == .flaky ? nil : verdict == .failed ? "failure" : verdict == .errored ? "error" : "skipped")
        if testIndex % 7 == 0 {
          lateIssues.append(Issue(kind: .lateSignal, message: nasty(&generator)))
        }
      }
      var events = suiteEvents(suite, waiter: waiter, duration: Double.random(in: 0...0.001, using: &generator), tests)
      // late signals for the first test, after it ended
      let firstTest = TestID(suite: suite, name: tests[0].name, host: waiter)
      events.insert(contentsOf: lateIssues.map { Event(.issueRecorded(firstTest, $0)) }, at: events.count - 1)
      generated.events += events
    }
    generated.events.append(Event(.runEnded(Summary(), duration: 3)))
    return generated
  }

  /// The bytes XML 1.0 forbids or dashboards refuse, as scalars.
  static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x9, 0xA, 0xD: false
    case 0..<0x20, 0x7F...0x9F, 0xFFFE, 0xFFFF: true
    default: false
    }
  }

  func testGeneratedNastyInputAlwaysGivesAWellFormedReportWithTheSameCounts() throws {
    for seed in [1, 2, 3, 0xDEAD_BEEF] as [UInt64] {
      let generated = Self.generate(seed: seed)
      let file = "nasty-\(seed).xml"
      let report = try report(generated.events, outputLimit: 2_000_000, file: file)
      let cases = report.testCases
      XCTAssertEqual(cases.count, generated.expected.tests, "seed \(seed)")
      XCTAssertEqual(report.attribute("tests"), String(generated.expected.tests))
      XCTAssertEqual(report.attribute("failures"), String(generated.expected.failures))
      XCTAssertEqual(report.attribute("errors"), String(generated.expected.errors))
      XCTAssertEqual(cases.filter { !$0.elements(named: "skipped").isEmpty }.count, generated.expected.skipped)
      let identities = cases.map { "\($0.attribute("classname")!)\u{0}\($0.attribute("name")!)" }
      XCTAssertEqual(Set(identities).count, identities.count, "classname + name repeat, seed \(seed)")
      XCTAssertFalse(cases.contains { $0.attribute("name")!.isEmpty })
      let text = try String(contentsOfFile: path(file), encoding: .utf8)
      XCTAssertFalse(text.unicodeScalars.contains(where: Self.isForbidden), "seed \(seed)")
      let references = Set(text.matches(of: /&#(x?[0-9A-Fa-f]+);/).map { String($0.output.1) })
      XCTAssertTrue(references.isSubset(of: ["9", "10", "13"]), "character references \(references), seed \(seed)")
      XCTAssertTrue(text.contains(String(repeating: "x␀é", count: 131_072)), "the 1 MB message is written whole")
    }
  }

  func testCheckerAcceptsTheNastyReportWithExactTotals() throws {
    let generated = Self.generate(seed: 7)
    _ = try report(generated.events, file: "nasty.xml")
    _ = try report(generated.events, profile: .github, file: "nasty-github.xml")
    let totals = [
      "--expect-tests", String(generated.expected.tests), "--expect-failures", String(generated.expected.failures),
      "--expect-errors", String(generated.expected.errors), "--expect-skipped", String(generated.expected.skipped),
    ]
    try assertCheckerPasses(path("nasty.xml"), totals)
    try assertCheckerPasses(path("nasty-github.xml"), totals + ["--allow-attrs", "file,line"])
    let other = Self.generate(seed: 8)
    _ = try report(other.events, file: "other.xml")
    try mergeJUnitReports([path("nasty.xml"), path("other.xml")], into: path("merged.xml"))
    var both = generated.expected
    both.add(other.expected)
    try assertCheckerPasses(path("merged.xml"), [
      "--expect-tests", String(both.tests), "--expect-failures", String(both.failures),
      "--expect-errors", String(both.errors), "--expect-skipped", String(both.skipped),
    ])
  }
}

/// Runs `../shared/junit-check/check_junit.py` on `file`; skips when it is not installed.
func assertCheckerPasses(_ file: String, _ arguments: [String], line: UInt = #line) throws {
  let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
  let checker = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/junit-check/check_junit.py").path
  let venv = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/junit-check/venv").path
  guard FileManager.default.fileExists(atPath: checker), FileManager.default.fileExists(atPath: venv) else {
    throw XCTSkip("junit-check is not installed (bash ../shared/junit-check/install.sh)")
  }
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
  process.arguments = ["python3", checker, file] + arguments
  let pipe = Pipe()
  process.standardOutput = pipe
  process.standardError = pipe
  try process.run()
  let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
  process.waitUntilExit()
  let summary = output.split(separator: "\n").last.map(String.init) ?? ""
  XCTAssertTrue(summary.hasPrefix("junit-check: PASS"), output, line: line)
  XCTAssertEqual(process.terminationStatus, 0, line: line)
}
