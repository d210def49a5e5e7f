import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes every ``Event`` as one JSON object a line (schema ``Event/schemaVersion``), for
/// tools and worker processes. Keys are sorted and dates are ISO 8601, so the stream is
/// stable and diffable.
///
/// Each line is written whole, with one `write` call, as its event happens: a reader following
/// the file never sees half a line, and a run that stops early (a crash, Ctrl-C, a reporter
/// error) leaves every event up to then and no `runEnded`. Output is bounded like the JUnit
/// report's: each test keeps at most `outputLimit` bytes of captured output, after which its
/// `outputCaptured` events are dropped and one last `outputCaptured` event says how many
/// bytes were cut; each issue message keeps at most `outputLimit` bytes too.
public final class JSONLinesReporter: Reporter {
  /// The most UTF-8 bytes kept of each test's output and of each issue message.
  public let outputLimit: Int
  private let write: (String) throws -> Void
  private let close: () throws -> Void
  private var output: (test: TestID, text: CappedText)?
  private let encoder: JSONEncoder = {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .iso8601
    return encoder
  }()

  /// Creates a reporter writing lines through `write`.
  public init(outputLimit: Int = ReportDefaults.outputLimit, write: @escaping (String) -> Void) {
    self.outputLimit = max(0, outputLimit)
    self.write = write
    self.close = {}
  }

  /// Creates a reporter writing to a new file at `path` (an existing file is replaced).
  /// - Throws: ``ReportFileError`` when the file cannot be written (the path names a
  ///   directory, the directory is missing or cannot hold a file, the name is too long),
  ///   before any test runs.
  public init(path: String, outputLimit: Int = ReportDefaults.outputLimit) throws {
    if let reason = ReportDestination.problem(with: path) { throw ReportFileError(path: path, reason: reason) }
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard descriptor >= 0 else { throw ReportFileError(path: path, reason: ReportDestination.systemError()) }
    self.outputLimit = max(0, outputLimit)
    self.write = { try writeWhole($0, to: descriptor, path: path) }
    self.close = { try closeFile(descriptor, path: path) }
  }

  public func handle(_ event: Event) throws {
    for event in bounded(event) {
      try write(String(decoding: try encoder.encode(event), as: UTF8.self) + "\n")
    }
  }

  public func finish() throws {
    try close()
  }

  /// The events to write for `event`: its output cut to what the test may still keep (none
  /// when nothing is left), the cut note before `testEnded`, issue messages capped.
  private func bounded(_ event: Event) -> [Event] {
    var event = event
    if let message = event.issue?.message { event.issue?.message = capped(message) }
    if let issues = event.result?.issues {
      event.result?.issues = issues.map { var issue = $0; issue.message = capped(issue.message); return issue }
    }
    guard let test = event.test else { return [event] }
    switch event.kind {
    case .outputCaptured:
      if output?.test != test { output = (test, CappedText(limit: outputLimit)) }
      let kept = output!.text.append(event.output ?? "")
      guard !kept.isEmpty || event.output == "" else { return [] }
      event.output = kept
      return [event]
    case .testEnded:
      defer { output = nil }
      guard let output, output.test == test, output.text.cutBytes > 0 else { return [event] }
      let note = Event(
        kind: .outputCaptured, timestamp: event.timestamp, suite: event.suite, waiter: event.waiter, test: test,
        output: CappedText.cutNote(bytes: output.text.cutBytes, limit: outputLimit))
      return [note, event]
    default:
      return [event]
    }
  }

  private func capped(_ text: String) -> String {
    guard text.utf8.count > outputLimit else { return text }
    var capped = CappedText(limit: outputLimit)
    capped.append(text)
    return capped.text
  }

  /// Reads one line of the stream back into an event.
  /// - Throws: `DecodingError` when the line is not an event.
  public static func decode(line: String) throws -> Event {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .iso8601
    return try decoder.decode(Event.self, from: Data(line.utf8))
  }
}

/// Writes `line` with one `write` call (more only when the system writes part of it).
private func writeWhole(_ line: String, to descriptor: Int32, path: String) throws {
  var bytes = Array(line.utf8)[...]
  while !bytes.isEmpty {
    let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    if written < 0, errno == EINTR { continue }
    guard written > 0 else { throw ReportFileError(path: path, reason: ReportDestination.systemError()) }
    bytes = bytes.dropFirst(written)
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

  public var description: String {
    "cannot write the JSON Lines stream to \(path): \(reason)"
  }
}
