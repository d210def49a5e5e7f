import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes every ``Event`` as one JSON object a line (schema ``Event/schemaVersion``, see
/// ``Event/jsonLine``), for tools and worker processes. Keys are sorted and timestamps are
/// ISO 8601, so the stream is stable and diffable.
///
/// Each line is written whole, with one `write` call, as its event happens: a reader following
/// the file never sees half a line, and a run that stops early (a crash, Ctrl-C, a reporter
/// error) leaves every event up to then and no `runEnded`. Lines are never gathered to be
/// written together: in-process, a test that crashes would take the gathered lines with it,
/// its `testStarted` (which names it) first; in worker isolation the parent could gather a
/// test's lines until its `testEnded`, but the parent itself can be killed (a CI job's time
/// limit), and the `testStarted` of the test that hung is then the line that matters. That
/// `write` per line is most of what the stream costs (Benchmarks/README.md, part 6); each
/// line is encoded into one buffer that the next reuses. Output is bounded like the JUnit
/// report's: each test keeps at most `outputLimit` bytes of captured output, after which its
/// `outputCaptured` events are dropped and one last `outputCaptured` event says how many
/// bytes were cut; each issue message keeps at most `outputLimit` bytes too.
public final class JSONLinesReporter: Reporter {
  /// The most UTF-8 bytes kept of each test's output and of each issue message.
  public let outputLimit: Int
  private let write: @Sendable (UnsafeBufferPointer<UInt8>) throws -> Void
  private let close: @Sendable () throws -> Void
  private let state = Mutex(State())

  private struct State: ~Copyable {
    /// The output kept so far of each test that produced output and has not ended (tests of
    /// several worker processes run at once).
    var output: [TestID: CappedText] = [:]
    /// The line being written; its storage is kept from one event to the next.
    var line = JSONText()
  }

  /// Creates a reporter writing lines through `write`.
  public init(outputLimit: Int = ReportDefaults.outputLimit, write: @escaping @Sendable (String) -> Void) {
    self.outputLimit = max(0, outputLimit)
    self.write = { write(String(decoding: $0, as: UTF8.self)) }
    self.close = {}
  }

  /// Creates a reporter writing to a new file at `path` (an existing file is replaced).
  /// - Throws: ``ReportFileError`` when the file cannot be written (the path names a
  ///   directory, the directory is missing or cannot hold a file, the name is too long),
  ///   before any test runs.
  public convenience init(path: String, outputLimit: Int = ReportDefaults.outputLimit) throws {
    if let reason = ReportDestination.problem(with: path) { throw ReportFileError(path: path, reason: reason) }
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard descriptor >= 0 else { throw ReportFileError(path: path, reason: ReportDestination.systemError()) }
    self.init(descriptor: descriptor, name: path, outputLimit: outputLimit, closing: true)
  }

  /// Creates a reporter writing to an open file descriptor (a worker's back channel), named
  /// `name` in errors; `closing` closes it in ``finish()``.
  init(descriptor: Int32, name: String, outputLimit: Int = ReportDefaults.outputLimit, closing: Bool) {
    self.outputLimit = max(0, outputLimit)
    self.write = { try writeWhole(UnsafeRawBufferPointer($0), to: descriptor, path: name) }
    if closing {
      self.close = { try closeFile(descriptor, path: name) }
    } else {
      self.close = {}
    }
  }

  /// Writes one event as it happens, as one whole line.
  /// - Parameter event: The event.
  /// - Throws: ``ReportFileError`` when the line cannot be written.
  public func handle(_ event: Event) throws {
    try state.withLock { state in
      // The event as it came, unless it holds text over the limit: then a copy, cut.
      switch event.kind {
      case .issueRecorded(let test, var issue) where issue.message.utf8.count > outputLimit:
        issue.message = capped(issue.message)
        try write(Event(.issueRecorded(test, issue), timestamp: event.timestamp), with: &state.line)
      case .outputCaptured(let test, let text):
        let kept = state.output[test, default: CappedText(limit: outputLimit)].append(text)
        guard !kept.isEmpty || text.isEmpty else { return }
        // What was kept is a prefix of the text: as long as it, it is all of it.
        let whole = kept.utf8.count == text.utf8.count
        try write(whole ? event : Event(.outputCaptured(test, kept), timestamp: event.timestamp), with: &state.line)
      case .testEnded(let test, var result, let duration):
        if let cut = state.output.removeValue(forKey: test)?.cutBytes {
          if cut > 0 {
            let note = CappedText.cutNote(bytes: cut, limit: outputLimit)
            try write(Event(.outputCaptured(test, note), timestamp: event.timestamp), with: &state.line)
          }
        }
        if result.issues.contains(where: { $0.message.utf8.count > outputLimit }) {
          result.issues = result.issues.map { var issue = $0; issue.message = capped(issue.message); return issue }
          try write(Event(.testEnded(test, result, duration: duration), timestamp: event.timestamp), with: &state.line)
        } else {
          try write(event, with: &state.line)
        }
      default:
        try write(event, with: &state.line)
      }
    }
  }

  /// Closes the stream.
  /// - Throws: ``ReportFileError`` when the file cannot be closed.
  public func finish() throws {
    try close()
  }

  /// Writes `event` as one line, encoded in `line`'s storage.
  private func write(_ event: Event, with line: inout JSONText) throws {
    line.removeAll()
    line.line(event)
    try line.withUnsafeBytes(write)
  }

  private func capped(_ text: String) -> String {
    guard text.utf8.count > outputLimit else { return text }
    var capped = CappedText(limit: outputLimit)
    capped.append(text)
    return capped.text
  }
}

/// Writes `line` with one `write` call (more only when the system writes part of it).
func writeWhole(_ line: [UInt8], to descriptor: Int32, path: String) throws {
  try line.withUnsafeBytes { try writeWhole($0, to: descriptor, path: path) }
}

/// Writes `line` with one `write` call (more only when the system writes part of it).
func writeWhole(_ line: UnsafeRawBufferPointer, to descriptor: Int32, path: String) throws {
  var bytes = line
  while !bytes.isEmpty {
    let written = write(descriptor, bytes.baseAddress, bytes.count)
    if written < 0, errno == EINTR { continue }
    guard written > 0 else { throw ReportFileError(path: path, reason: ReportDestination.systemError()) }
    bytes = UnsafeRawBufferPointer(rebasing: bytes[written...])
  }
}

private func closeFile(_ descriptor: Int32, path: String) throws {
  guard close(descriptor) == 0 else { throw ReportFileError(path: path, reason: ReportDestination.systemError()) }
}

/// A report file that cannot be written.
public struct ReportFileError: Error, Equatable, CustomStringConvertible {
  /// The path that was asked for.
  public var path: String
  /// Why it cannot be written.
  public var reason: String

  /// Creates the error.
  public init(path: String, reason: String) {
    self.path = path
    self.reason = reason
  }

  /// The message a user reads.
  public var description: String {
    "cannot write the JSON Lines stream to \(path): \(reason)"
  }
}
