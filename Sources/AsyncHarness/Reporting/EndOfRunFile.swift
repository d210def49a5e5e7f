import Synchronization

/// What a report written whole when the run ends reads from the events: the trace's
/// ``RunTimeline``, the HTML page's ``HTMLReport``.
protocol EndOfRunContents: Sendable {
  /// Keeps what the report shows of one event.
  mutating func record(_ event: Event)
  /// Ends what is still open when the run ends (it may have been interrupted).
  mutating func close()
}

/// A report file written whole, atomically, when the run ends (`--trace`, `--report-html`):
/// its path checked before any test runs, then its contents kept from the events, under a
/// lock, until the reporter's `finish()` takes them once.
struct EndOfRunFile<Contents: EndOfRunContents>: ~Copyable, Sendable {
  /// Where the report is written.
  let path: String
  /// What the report is, as errors name it: `the trace`.
  private let report: String
  private let state: Mutex<(contents: Contents, finished: Bool)>

  /// Checks that `path` can be written, and starts from `contents`.
  /// - Throws: ``ReportFileError`` naming `report` when it cannot (``ReportDestination/problem(with:stagingBytes:)``).
  init(path: String, report: String, contents: Contents) throws {
    if let reason = ReportDestination.problem(with: path, stagingBytes: ReportDestination.temporaryNameBytes) {
      throw ReportFileError(path: path, reason: reason, report: report)
    }
    self.path = path
    self.report = report
    state = Mutex((contents, false))
  }

  /// Records `event` in the contents, unless they were taken.
  func record(_ event: Event) {
    state.withLock { state in
      guard !state.finished else { return }
      state.contents.record(event)
    }
  }

  /// The contents, closed, the first time; nil after (events that come later are dropped).
  func take() -> Contents? {
    state.withLock { state in
      guard !state.finished else { return nil }
      state.finished = true
      state.contents.close()
      return state.contents
    }
  }

  /// Replaces the file with `bytes`, atomically (``ReportDestination/replace(_:report:with:)``).
  /// - Throws: ``ReportFileError`` when the file cannot be written.
  func replace(with bytes: UnsafeBufferPointer<UInt8>) throws {
    try ReportDestination.replace(path, report: report, with: bytes)
  }
}
