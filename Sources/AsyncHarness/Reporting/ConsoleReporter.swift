import Foundation

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

  private let write: (String) -> Void
  private let style: Style
  private var waiters: [String] = []
  private var table: [(suite: String, cells: [String: Summary])] = []
  /// Pass rates of tests run under several schedules (issue 13).
  private var explored = ExplorationTally()

  /// Creates a reporter writing through `write` (standard output by default).
  public init(style: Style = .forStandardOutput(), write: ((String) -> Void)? = nil) {
    self.style = style
    self.write = write ?? { FileHandleOutput.standardOutput.write($0) }
  }

  public func handle(_ event: Event) throws {
    switch event.kind {
    case .runStarted:
      waiters = event.run?.waiters ?? []
      if let seed = event.run?.seed {
        write("Shuffled with seed \(seed) (replay with --shuffle \(seed))\n")
      }
    case .testStarted:
      if style.liveProgress, let test = event.test {
        write("\r\u{1B}[2K… \(test)")
      }
    case .issueRecorded:
      if let test = event.test, let issue = event.issue, issue.kind == .lateSignal {
        write("    late  \(test): \(issue.description)\n")
      }
    case .testEnded:
      guard let test = event.test, let result = event.result else { return }
      if style.liveProgress { write("\r\u{1B}[2K") }
      write("\(label(result.verdict)) \(test) (\(Self.seconds(event.duration ?? 0)))")
      if let reason = result.reason { write(" - \(reason)") }
      write("\n")
      for issue in result.issues {
        write("    \(issue.sourceLocation.map { "\($0): " } ?? "")\(issue.kind == .warning ? "warning: " : "")\(issue.message)\n")
      }
      // Issue 13: a failing test under a schedule ends with the flag that replays it.
      if result.verdict.isFailure, let token = test.schedule { write("    replay: --schedule \(token)\n") }
      explored.count(test, result.verdict)
    case .suiteEnded:
      guard let suite = event.suite, let waiter = event.waiter, let summary = event.summary else { return }
      if let index = table.firstIndex(where: { $0.suite == suite }) {
        table[index].cells[waiter] = summary
      } else {
        table.append((suite, [waiter: summary]))
      }
    case .runEnded:
      write(summaryTable())
      write(explored.report)
      let summary = event.summary ?? Summary()
      var notes: [String] = []
      if summary.knownIssues > 0 { notes.append("\(summary.knownIssues) known issues caught") }
      if summary.errored > 0 { notes.append("\(summary.errored) errored") }
      if !notes.isEmpty { write("(\(notes.joined(separator: ", ")))\n") }
      write("Result: \(summary.passed + summary.knownIssues) passed, \(summary.failed + summary.errored) failed, \(summary.skipped) skipped in \(Self.seconds(event.duration ?? 0))\n")
    case .suiteStarted, .outputCaptured:
      break
    }
  }

  /// The table of suites × waiters: each cell is tests that did not fail / tests run.
  func summaryTable() -> String {
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
