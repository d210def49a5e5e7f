import Foundation
import Synchronization

/// Writes a readable account of the run: one line a test (with its issues beneath), or a
/// live progress line on a terminal, then a summary table of suites × waiters, the tests
/// that were flaky and the failures outside every test (``OutsideFailure``, each also written
/// as it is found), and a closing `Result: N passed, N failed, N skipped` line (with
/// `N flaky, ` when some were). An attempt that failed and runs again is labelled `RETRY`.
///
/// Colours are used only when writing to a terminal and never when `NO_COLOR` is set.
public final class ConsoleReporter: Reporter {
  /// How the reporter decorates its text.
  public struct Style: Sendable, Equatable {
    /// ANSI colours on verdicts.
    public var colors: Bool
    /// A progress line rewritten while each test runs.
    public var liveProgress: Bool

    /// Creates a style.
    public init(colors: Bool, liveProgress: Bool) {
      self.colors = colors
      self.liveProgress = liveProgress
    }

    /// Plain text: no colours, no progress line.
    public static let plain = Style(colors: false, liveProgress: false)

    /// The style for standard output: decorated only on a terminal, never with `NO_COLOR`.
    public static func forStandardOutput(environment: [String: String] = ProcessInfo.processInfo.environment) -> Style {
      let terminal = isatty(STDOUT_FILENO) == 1 && environment["TERM"] != "dumb"
      return Style(colors: terminal && environment["NO_COLOR"] == nil, liveProgress: terminal)
    }
  }

  private let write: @Sendable (String) -> Void
  private let style: Style
  private let table = Mutex(SummaryTable())
  /// Pass rates of tests run under several schedules (`--explore`).
  private let explored = Mutex(ExplorationTally())
  /// Tests that passed on a retry, listed before the result line.
  private let flaky = Mutex<[TestID]>([])
  /// The issues of the attempts running, printed when their test ends.
  /// The failures outside every test, listed again before the result line.
  private let outside = Mutex<[OutsideFailure]>([])

  /// Creates a reporter writing through `write` (standard output by default).
  public init(style: Style = .forStandardOutput(), write: (@Sendable (String) -> Void)? = nil) {
    self.style = style
    self.write = write ?? { FileHandleOutput.standardOutput.write($0) }
  }

  /// Shows one event as it happens: a test's line when it ends, the table when the run ends.
  /// - Parameter event: The event.
  public func handle(_ event: Event) throws {
    switch event.kind {
    case .runStarted(let run):
      table.withLock { $0.waiters = run.waiters }
      if let seed = run.seed {
        write("Shuffled with seed \(seed) (replay with --shuffle \(seed))\n")
      }
      if let seed = run.jitterSeed {
        write("Real queues jittered with seed \(seed) (0–2 ms before each item; rerun with --jitter \(seed))\n")
      }
      if let shard = run.shard { write("Shard \(shard) of the selected tests\n") }
    case .testStarted(let test):
      if style.liveProgress { write("\r\u{1B}[2K… \(test)") }
    case .testSlow(let test, let elapsed):
      write("\(style.liveProgress ? "\r\u{1B}[2K" : "")\(label("SLOW ", color: "33")) \(test) still running after \(Self.seconds(elapsed))\n")
    case .issueRecorded(let test, let issue):
      // A test's own issues are shown at its end; a late signal comes after it.
      if issue.kind == .lateSignal { write("    late  \(test): \(issue.description)\n") }
    case .testEnded(let test, let end):
      var text = style.liveProgress ? "\r\u{1B}[2K" : ""
      for attempt in end.attempts {
        var id = test
        id.attempt = attempt.number
        let last = attempt.number == test.attempt
        text += "\(last ? label(end.verdict) : label("RETRY", color: "33")) \(id) (\(Self.seconds(attempt.duration)))"
        if last, let reason = end.reason { text += " - \(reason)" }
        text += "\n"
        for issue in attempt.issues {
          text += "    \(issue.sourceLocation.map { "\($0): " } ?? "")\(issue.isFailure || [.lateSignal, .attachment].contains(issue.kind) ? "" : "warning: ")\(issue.message)\n"
        }
      }
      // A failing test under a schedule ends with the flag that replays it.
      if end.verdict.isFailure, let token = end.replayToken(of: test) { text += "    replay: --schedule \(token)\n" }
      explored.withLock { $0.count(test, end) }
      if end.verdict == .flaky { flaky.withLock { $0.append(test) } }
      write(text)
    case .suiteStarted(let suite):
      table.withLock { $0.start(suite) }
    case .suiteEnded(let suite, let summary, _):
      table.withLock { $0.record(summary, of: suite) }
    case .runEnded(let summary, let duration):
      var text = summaryTable() + explored.withLock { $0.report }
      var notes: [String] = []
      if summary.knownIssues > 0 { notes.append("\(summary.knownIssues) known issues caught") }
      if summary.errored > 0 { notes.append("\(summary.errored) errored") }
      if summary.outsideFailures > 0 {
        notes.append("\(summary.outsideFailures) failure\(summary.outsideFailures == 1 ? "" : "s") outside tests")
      }
      if !notes.isEmpty { text += "(\(notes.joined(separator: ", ")))\n" }
      let flaky = self.flaky.withLock { $0 }
      if !flaky.isEmpty {
        text += "Flaky (failed, then passed on a retry):\n"
        for test in flaky {
          var firstAttempt = test
          firstAttempt.attempt = 1
          text += "    \(firstAttempt): passed on attempt \(test.attempt)\n"
        }
      }
      let outside = self.outside.withLock { $0 }
      if !outside.isEmpty {
        text += "Failed outside tests:\n"
        for failure in outside { text += "    \(failure.headline)\n" }
      }
      text += "Result: \(summary.result(in: duration))\n"
      write(text)
    case .outsideFailure(let failure):
      write((style.liveProgress ? "\r\u{1B}[2K" : "") + Self.lines(of: failure, label: label(.errored)))
      outside.withLock { $0.append(failure) }
    case .outputCaptured, .outputShared, .waitEnded, .scheduleStep, .workerReplaced:
      break
    }
  }

  /// `ERROR Suite [waiter] class func tearDown(): MESSAGE` (the whole message), then its
  /// location and its suspects, each on a line of its own.
  static func lines(of failure: OutsideFailure, label: String) -> String {
    var text = "\(label) \(failure.suite) \(failure.place.description): \(failure.issue.message)\n"
    if let location = failure.issue.sourceLocation { text += "    at \(location)\n" }
    if let suspects = failure.suspectsSentence { text += "    \(suspects)\n" }
    return text
  }

  /// The table of suites × waiters: each cell is tests that did not fail / tests run.
  func summaryTable() -> String {
    let (waiters, table) = self.table.withLock { ($0.waiters, $0.rows) }
    guard !table.isEmpty else { return "" }
    let header = ["Suite"] + waiters
    let rows = table.map { row in [row.suite] + waiters.map { SummaryTable.cell(row.cells[$0]) } }
    let widths = header.indices.map { column in
      ([header] + rows).map { $0[column].count }.max() ?? 0
    }
    func line(_ cells: [String]) -> String {
      zip(cells, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }
        .joined(separator: "  ").trimmingCharacters(in: .whitespaces) + "\n"
    }
    return "\n" + line(header) + ([line(rows.first.map { _ in widths.map { String(repeating: "-", count: $0) } } ?? [])]
      + rows.map(line)).joined()
  }

  private func label(_ verdict: Verdict) -> String {
    switch verdict {
    case .passed: label("PASS ", color: "32")
    case .failed: label("FAIL ", color: "31")
    case .errored: label("ERROR", color: "31")
    case .skipped: label("SKIP ", color: "33")
    case .knownIssue: label("KNOWN", color: "36")
    case .flaky: label("FLAKY", color: "33")
    }
  }

  private func label(_ text: String, color: String) -> String {
    style.colors ? "\u{1B}[\(color)m\(text)\u{1B}[0m" : text
  }

  /// Seconds with three decimals, the same on every locale.
  static func seconds(_ value: Double) -> String {
    threeDecimals(Int64((max(0, value.isFinite ? value : 0) * 1000).rounded())) + "s"
  }

  /// `thousandths` (not negative) with three decimals: `12.345`, `0.007`, the same on every
  /// locale.
  static func threeDecimals(_ thousandths: Int64) -> String {
    let fraction = thousandths % 1000
    let padding = fraction < 10 ? ".00" : fraction < 100 ? ".0" : "."
    return String(thousandths / 1000) + padding + String(fraction)
  }
}
