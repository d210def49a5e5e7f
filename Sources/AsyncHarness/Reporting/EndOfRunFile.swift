import Synchronization

/// What a report written whole when the run ends reads from the events: the trace's
/// ``TraceDocument``, the HTML page's ``HTMLReport``.
protocol EndOfRunContents: ~Copyable {
  /// Keeps what the report shows of one event.
  mutating func record(_ event: Event)
  /// Ends what is still open when the run ends (it may have been interrupted).
  mutating func close()
}

/// A report file written whole, atomically, when the run ends (`--trace`, `--report-html`):
/// its path checked before any test runs, then its contents kept from the events, under a
/// lock, until the reporter's `finish()` takes them once.
struct EndOfRunFile<Contents: EndOfRunContents & ~Copyable>: ~Copyable, Sendable {
  /// Where the report is written.
  let path: String
  /// What the report is, as errors name it: `the trace`.
  private let report: String
  /// The contents, until they are taken.
  private let contents: Mutex<Contents?>

  /// Checks that `path` can be written, and starts from `contents`.
  /// - Throws: ``ReportFileError`` naming `report` when it cannot (``ReportDestination/problem(with:stagingBytes:)``).
  init(path: String, report: String, contents: consuming sending Contents) throws {
    if let reason = ReportDestination.problem(with: path, stagingBytes: ReportDestination.temporaryNameBytes) {
      throw ReportFileError(path: path, reason: reason, report: report)
    }
    self.path = path
    self.report = report
    self.contents = Mutex(contents)
  }

  /// Records `event` in the contents, unless they were taken.
  func record(_ event: Event) {
    contents.withLock { contents in
      guard var kept = contents.take() else { return }
      kept.record(event)
      contents = consume kept
    }
  }

  /// The contents, closed, the first time; nil after (events that come later are dropped).
  func take() -> Contents? {
    contents.withLock { contents in
      guard var taken = contents.take() else { return nil }
      taken.close()
      return taken
    }
  }

  /// Replaces the file with `bytes`, atomically (``ReportDestination/replace(_:report:with:)``).
  /// - Throws: ``ReportFileError`` when the file cannot be written.
  func replace(with bytes: UnsafeBufferPointer<UInt8>) throws {
    try ReportDestination.replace(path, report: report, with: bytes)
  }
}
