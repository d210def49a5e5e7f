import Foundation

/// Writes a run as one self-contained HTML page (`--report-html PATH`): it loads nothing from
/// anywhere else, needs no JavaScript and reads as well printed. In order, it shows:
///
/// - the run's summary: the result line, the run's facts (version, waiters, seeds, shard) and
///   each suite's counts under each waiter;
/// - the failures: each test whose last attempt failed or errored, with every issue's
///   message and location (`path:line`) and what the test printed;
/// - the flaky tests, with the attempt that passed;
/// - the slowest attempts;
/// - the timeline: a row per lane with a bar per attempt, drawn with CSS from the same
///   reading of the events as the trace (`--trace`).
///
/// Every text that comes from a test (names, messages, output) is written as text, never as
/// markup: `<script>` in a test's name shows as those characters, control characters show as
/// their Unicode control pictures (`␇`), and the page stays valid HTML (and well-formed XML).
/// Each text keeps at most `outputLimit` bytes, as in the other reports; only the first 100
/// failures keep their output, and the timeline draws at most the 2,000 longest attempts.
///
/// The file is written atomically when the run ends (``finish()``), also when it was
/// interrupted: the page then says the run did not end, and an attempt still running shows
/// as unfinished.
public final class HTMLReporter: Reporter, EndOfRunReporter {
  /// Where the page is written.
  public let path: String
  /// The page's title: the suites executable's name.
  public let title: String
  private let file: EndOfRunFile<HTMLReport>

  /// Creates a reporter that writes the page to `path` when the run ends (an existing file is
  /// replaced then, atomically).
  /// - Parameters:
  ///   - path: the file.
  ///   - title: the page's title.
  ///   - outputLimit: the most UTF-8 bytes kept of each test's output and of each message; 1 MiB
  ///     by default, as in the JUnit and JSON Lines reports.
  /// - Throws: ``ReportFileError`` when the file could not be written (the path names a
  ///   directory, the directory is missing or cannot hold a file, the name is too long),
  ///   before any test runs.
  public init(path: String, title: String = ProcessInfo.processInfo.processName,
              outputLimit: Int = ReportDefaults.outputLimit) throws {
    file = try EndOfRunFile(path: path, report: "the HTML report", contents: HTMLReport(outputLimit: outputLimit))
    self.path = path
    self.title = title
  }

  /// Creates a reporter that draws `timeline`, the run's one, which the trace places the events
  /// on (it comes before this reporter in the run's); as ``init(path:title:outputLimit:)``.
  init(path: String, title: String, sharing timeline: SharedTimeline) throws {
    file = try EndOfRunFile(path: path, report: "the HTML report",
                            contents: HTMLReport(outputLimit: ReportDefaults.outputLimit, timeline: timeline, feeds: false))
    self.path = path
    self.title = title
  }

  /// Keeps what the page shows of one event.
  /// - Parameter event: The event.
  public func handle(_ event: Event) {
    file.record(event)
  }

  /// Ends what is still open and writes the page, atomically.
  /// - Throws: ``ReportFileError`` when the file cannot be written.
  public func finish() throws {
    guard let report = file.take() else { return }
    var page = report.page(title: title)
    try page.withUTF8 { try file.replace(with: $0) }
  }
}
