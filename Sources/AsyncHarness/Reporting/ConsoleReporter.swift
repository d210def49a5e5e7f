import Foundation
import Synchronization

/// Writes a readable account of the run: one line a test (with its issues beneath), or a
/// live progress line on a terminal, then a summary table of suites × waiters and a
/// closing `Result: N passed, N failed, N skipped` line.
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

  /// Creates a reporter writing through `write` (standard output by default).
  public init(style: Style = .forStandardOutput(), write: (@Sendable (String) -> Void)? = nil) {
    self.style = style
    self.write = write ?? { FileHandleOutput.standardOutput.write($0) }
  }

  public func handle(_ event: Event) throws {
    switch event.kind {
    case .runStarted(let run):
      table.withLock { $0.waiters = run.waiters }
      if let seed = run.seed {
        write("Shuffled with seed \(seed) (replay with --shuffle \(seed))\n")
      }
    case .testStarted(let test):
      if style.liveProgress { write("\r\u{1B}[2K… \(test)") }
    case .issueRecorded(let test, let issue):
      if issue.kind == .lateSignal { write("    late  \(test): \(issue.description)\n") }
    case .testEnded(let test, let result, let duration):
      var text = style.liveProgress ? "\r\u{1B}[2K" : ""
      text += "\(label(result.verdict)) \(test) (\(Self.seconds(duration)))"
      if let reason = result.reason { text += " - \(reason)" }
      text += "\n"
      for issue in result.issues {
        text += "    \(issue.sourceLocation.map { "\($0): " } ?? "")\(issue.kind == .warning ? "warning: " : "")\(issue.message)\n"
      }
      // A failing test under a schedule ends with the flag that replays it.
      if result.verdict.isFailure, let token = test.schedule { text += "    replay: --schedule \(token)\n" }
      explored.withLock { $0.count(test, result.verdict) }
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
      if !notes.isEmpty { text += "(\(notes.joined(separator: ", ")))\n" }
      text += "Result: \(summary.passed + summary.knownIssues) passed, \(summary.failed + summary.errored) failed, \(summary.skipped) skipped in \(Self.seconds(duration))\n"
      write(text)
    case .outputCaptured:
      break
    }
  }

  /// The table of suites × waiters: each cell is tests that did not fail / tests run.
  func summaryTable() -> String {
    let (waiters, table) = self.table.withLock { ($0.waiters, $0.rows) }
    guard !table.isEmpty else { return "" }
    let header = ["Suite"] + waiters
    let rows = table.map { row in
      [row.suite] + waiters.map { waiter in
        guard let cell = row.cells[waiter] else { return "-" }
        let good = cell.total - cell.failed - cell.errored
        return good == cell.total ? "\(good)/\(cell.total)" : "\(good)/\(cell.total) FAIL"
      }
    }
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
    let (text, color) = switch verdict {
    case .passed: ("PASS ", "32")
    case .failed: ("FAIL ", "31")
    case .errored: ("ERROR", "31")
    case .skipped: ("SKIP ", "33")
    case .knownIssue: ("KNOWN", "36")
    }
    return style.colors ? "\u{1B}[\(color)m\(text)\u{1B}[0m" : text
  }

  /// Seconds with three decimals, the same on every locale.
  static func seconds(_ value: Double) -> String {
    let milliseconds = Int((max(0, value.isFinite ? value : 0) * 1000).rounded())
    let fraction = String(milliseconds % 1000)
    return "\(milliseconds / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)s"
  }
}

/// The cells of the summary table: each suite's counts under each waiter.
private struct SummaryTable {
  var waiters: [String] = []
  var rows: [(suite: String, cells: [String: Summary])] = []

  /// Adds the suite's row when it starts: rows keep the order suites start in (the plan's),
  /// whichever ends first.
  mutating func start(_ run: SuiteRun) {
    if !rows.contains(where: { $0.suite == run.suite }) { rows.append((run.suite, [:])) }
  }

  mutating func record(_ summary: Summary, of run: SuiteRun) {
    start(run)
    if let index = rows.firstIndex(where: { $0.suite == run.suite }) { rows[index].cells[run.waiter] = summary }
  }
}
