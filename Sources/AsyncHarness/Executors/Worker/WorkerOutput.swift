import AsyncHarnessShared
import Foundation

/// The last few kilobytes a worker printed, kept for a crash report, and how much it printed
/// in all.
struct OutputTail {
  private static let tailBytes = 4096
  private static let tailLines = 20
  private var recent: [UInt8] = []
  /// How many bytes were appended in all.
  private(set) var total = 0

  /// Adds what the worker printed.
  mutating func append(_ bytes: ArraySlice<UInt8>) {
    recent += bytes
    total += bytes.count
    if recent.count > 2 * Self.tailBytes { recent.removeFirst(recent.count - Self.tailBytes) }
  }

  /// The last lines of the output (at most 20 lines and 4 KiB), without the stack trace the
  /// Swift runtime prints after a fatal error (it stays in the test's output), so that the
  /// `Fatal error: …` line is what a crash report ends with.
  var tail: String { Self.tail(of: recent[...]) }

  /// The last lines of what was appended once ``total`` was `start` (``tail``).
  func tail(since start: Int) -> String { Self.tail(of: recent.suffix(max(0, total - start))) }

  /// The last lines of `bytes`, as ``tail`` reads them.
  private static func tail(of bytes: ArraySlice<UInt8>) -> String {
    var text = String(decoding: bytes.suffix(tailBytes), as: UTF8.self)
    if let trace = text.range(of: "\nCurrent stack trace:\n", options: .backwards) {
      text = String(text[..<trace.lowerBound]) + "\n"
    }
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    let kept = lines.suffix(tailLines + (text.hasSuffix("\n") ? 1 : 0)).joined(separator: "\n")
    return kept.hasSuffix("\n") ? String(kept.dropLast()) : kept
  }
}

/// What a worker printed, stored once whatever number of tests ran in it: split into whole
/// lines as it is read, each line printed while several tests ran starting with
/// ``sharedMark`` (it may be any of theirs), kept in the pieces it was relayed in. Tests
/// refer to it by position (``end``): a test running alone is sent each piece as it comes,
/// one running beside others the pieces of its run as it ends (``SharedOutput``), so a line
/// is never copied for each test. Used where one stream carries the output of tests running
/// side by side: a worker's `async` tests and a test bundle's Swift Testing tests.
struct WorkerOutputLog {
  /// What starts each line printed while several tests ran.
  static let sharedMark = Array("[shared] ".utf8)

  private var lines = LineSplitter()
  /// The pieces kept, the first of them at position ``start``.
  private var pieces: [String] = []
  private var start = 0

  /// The position after the last piece.
  var end: Int { start + pieces.count }

  /// Whether no piece is kept.
  var isEmpty: Bool { pieces.isEmpty }

  /// Adds what the worker printed (`shared` when several tests ran); `true` when a piece was
  /// added.
  mutating func add(_ bytes: ArraySlice<UInt8>, shared: Bool) -> Bool {
    lines.append(bytes)
    var kept: [UInt8] = []
    while let line = lines.next() {
      if shared { kept += Self.sharedMark }
      kept += line
      kept.append(0x0A)
    }
    guard !kept.isEmpty else { return false }
    // Whole lines: a character the reads cut is whole again.
    pieces.append(String(decoding: kept, as: UTF8.self))
    return true
  }

  /// The pieces from position `from` to the end.
  func pieces(from: Int) -> ArraySlice<String> { pieces[max(from, start) - start..<pieces.count] }

  /// The line being printed (without its newline yet), marked when `shared`; `nil` when none is.
  func unfinishedLine(shared: Bool) -> String? {
    guard let rest = lines.unfinished, !rest.isEmpty else { return nil }
    return String(decoding: (shared ? Self.sharedMark : []) + rest, as: UTF8.self)
  }

  /// Ends the line being printed: no test running will be sent the rest of it (``unfinishedLine(shared:)``
  /// gave it to those that ran).
  mutating func endLine() {
    _ = lines.rest()
  }

  /// Forgets the pieces before position `position`: no test needs them.
  mutating func drop(before position: Int) {
    let count = min(max(position - start, 0), pieces.count)
    guard count > 0 else { return }
    pieces.removeFirst(count)
    start += count
  }
}
