/// What an XCTest worker's stdout says about each test, read a line at a time.
///
/// swift-corelibs-xctest prints, for each test it runs:
///
/// ```text
/// Test Case 'BalanceXCTests.testTwoFailuresInOneTest' started at 2026-11-25 23:08:07.820
/// /path/LedgerXCTests.swift:53: error: BalanceXCTests.testTwoFailuresInOneTest : XCTAssertTrue failed - first
/// <EXPR>:0: error: LedgerXCTests.testThrows : threw error "LedgerError: thrown by an XCTest"
/// /path/LedgerXCTests.swift:25: LedgerXCTests.testSkipped : Test skipped - not on this machine
/// Test Case 'BalanceXCTests.testTwoFailuresInOneTest' failed (0.0 seconds)
/// ```
///
/// Tests are named `Class.method`, without the module (``ExistingTest/xctestOutputName``).
/// Any other line printed while a test runs is that test's output; the `Test Suite` lines
/// and what comes between tests are not kept. A test whose last line is `started` when the
/// stream ends is the one that crashed, exited or hung; its record has no ``Record/outcome``.
struct XCTestOutput: Sendable {
  /// How XCTest ended a test: the word on its `Test Case '…' passed|failed|skipped` line.
  enum Outcome: String, Sendable, Equatable {
    case passed, failed, skipped
  }

  /// A failure or a thrown error, as XCTest printed it.
  struct Failure: Sendable, Equatable {
    /// The assertion's message (`XCTAssertTrue failed - first`) or `threw error "…"`.
    var message: String
    /// The file and line XCTest named; `nil` for a thrown error (`<EXPR>:0`).
    var file: String?
    var line: Int?
  }

  /// One test, from its `started` line on.
  struct Record: Sendable, Equatable {
    /// `Class.method`, as XCTest prints it.
    var test: String
    /// How it ended; `nil` while it runs, and for good when the process died in it.
    var outcome: Outcome?
    /// Its duration as XCTest printed it, in seconds.
    var seconds: Double?
    /// Its failures, in order.
    var failures: [Failure] = []
    /// The reason of an `XCTSkip`: its message, or `""` when it had none.
    var skipReason: String?
    /// The lines it printed to stdout between its start and its end.
    var output: [String] = []
  }

  /// How XCTest names a test on its lines: `BalanceXCTests.testEmptyBalance` for the method
  /// `testEmptyBalance` of the class `LedgerTests.BalanceXCTests` (the module dropped).
  static func name(ofMethod method: String, inClass className: String) -> String {
    "\(className.split(separator: ".", maxSplits: 1).last.map(String.init) ?? className).\(method)"
  }

  /// The tests seen so far, in the order they started.
  private(set) var records: [Record] = []

  /// Reads one line of stdout, without its newline.
  mutating func read(_ line: Substring) {
    if let test = Self.quoted(line, between: "Test Case '", and: "' started at ") {
      records.append(Record(test: test))
      return
    }
    guard var record = records.last, record.outcome == nil else { return }
    if let (outcome, seconds) = Self.end(of: record.test, line) {
      record.outcome = outcome
      record.seconds = seconds
    } else if let failure = Self.failure(of: record.test, line) {
      record.failures.append(failure)
    } else if let reason = Self.skipReason(of: record.test, line) {
      record.skipReason = reason
    } else {
      record.output.append(String(line))
    }
    records[records.count - 1] = record
  }

  /// `Test Case 'TEST' passed (0.001 seconds)` for `test`.
  private static func end(of test: String, _ line: Substring) -> (Outcome, Double?)? {
    let prefix = "Test Case '\(test)' "
    guard line.hasPrefix(prefix), line.hasSuffix(" seconds)") else { return nil }
    let rest = line.dropFirst(prefix.count).dropLast(" seconds)".count)
    guard let open = rest.firstIndex(of: " "), rest[rest.index(after: open)...].first == "(",
      let outcome = Outcome(rawValue: String(rest[..<open]))
    else { return nil }
    return (outcome, Double(rest[rest.index(open, offsetBy: 2)...]))
  }

  /// `FILE:LINE: error: TEST : MESSAGE` for `test`.
  private static func failure(of test: String, _ line: Substring) -> Failure? {
    guard let marker = line.firstRange(of: ": error: \(test) : ") else { return nil }
    let (file, number) = fileAndLine(line[..<marker.lowerBound])
    let thrown = file == "<EXPR>" && number == 0
    return Failure(message: String(line[marker.upperBound...]), file: thrown ? nil : file, line: thrown ? nil : number)
  }

  /// `FILE:LINE: TEST : Test skipped - REASON` (or `… : Test skipped`) for `test`.
  private static func skipReason(of test: String, _ line: Substring) -> String? {
    guard let marker = line.firstRange(of: ": \(test) : Test skipped") else { return nil }
    let rest = line[marker.upperBound...]
    return rest.hasPrefix(" - ") ? String(rest.dropFirst(3)) : String(rest)
  }

  /// `PATH:LINE` split at its last colon; the line is `nil` when it is not a number.
  private static func fileAndLine(_ text: Substring) -> (String, Int?) {
    guard let colon = text.lastIndex(of: ":") else { return (String(text), nil) }
    return (String(text[..<colon]), Int(text[text.index(after: colon)...]))
  }

  /// The text between `opening` at the start of `line` and the first `closing` after it.
  private static func quoted(_ line: Substring, between opening: String, and closing: String) -> String? {
    guard line.hasPrefix(opening), let end = line.firstRange(of: closing) else { return nil }
    return String(line[line.index(line.startIndex, offsetBy: opening.count)..<end.lowerBound])
  }
}

extension ExistingTest {
  /// How XCTest names this test on its stdout lines: `BalanceXCTests.testEmptyBalance` for
  /// `LedgerTests.BalanceXCTests/testEmptyBalance` (the module dropped, `/` made `.`).
  /// `nil` for a Swift Testing test.
  var xctestOutputName: String? {
    guard library == .xctest else { return nil }
    return XCTestOutput.name(ofMethod: name, inClass: suite)
  }
}
