import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Splits a worker's output at the marker line the worker writes as each test starts:
/// what comes before the next test's marker is the running test's output, whatever the
/// reads cut it into.
struct OutputSplitter {
  let marker: [UInt8]
  /// Bytes read and not handed out: the start of a marker, or the next test's output.
  private var held: [UInt8] = []
  private var ownMarkerSeen = false

  init(marker: [UInt8]) { self.marker = marker }

  /// Whether the next test's marker was read: what follows is not the running test's.
  var reachedNextTest: Bool { ownMarkerSeen && held.starts(with: marker) }

  /// Starts the next test's output; returns what of it was already read.
  mutating func startNextTest() -> ArraySlice<UInt8> {
    ownMarkerSeen = false
    return append([])
  }

  /// Adds bytes read; returns those that are the running test's output.
  mutating func append(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
    // Most output holds no byte that starts a marker: it is the running test's as it is.
    if held.isEmpty, ownMarkerSeen, Self.index(of: marker[0], in: bytes) == nil { return bytes }
    held += bytes
    var mine: [UInt8] = []
    while true {
      guard let at = firstMarker() else {
        let keep = partialMarkerLength()
        mine += held[..<(held.count - keep)]
        held.removeFirst(held.count - keep)
        return mine[...]
      }
      mine += held[..<at]
      if ownMarkerSeen {
        held.removeFirst(at)
        return mine[...]
      }
      held.removeFirst(at + marker.count)
      ownMarkerSeen = true
    }
  }

  /// Where `byte` first occurs in `bytes` (`memchr`: output can be megabytes, and a generic
  /// search is slow in a debug build).
  private static func index(of byte: UInt8, in bytes: ArraySlice<UInt8>) -> Int? {
    bytes.withUnsafeBytes { buffer in
      guard let base = buffer.baseAddress, let found = memchr(base, Int32(byte), buffer.count) else { return nil }
      return bytes.startIndex + (UnsafeRawPointer(found) - base)
    }
  }

  private func firstMarker() -> Int? {
    guard held.count >= marker.count else { return nil }
    var index = held.startIndex
    while let candidate = Self.index(of: marker[0], in: held[index...]), candidate + marker.count <= held.count {
      if held[candidate..<(candidate + marker.count)].elementsEqual(marker) { return candidate }
      index = candidate + 1
    }
    return nil
  }

  /// How many bytes at the end could be the start of a marker that the next read completes.
  private func partialMarkerLength() -> Int {
    var start = max(0, held.count - marker.count + 1)
    while let candidate = Self.index(of: marker[0], in: held[start...]) {
      if marker.starts(with: held[candidate...]) { return held.count - candidate }
      start = candidate + 1
    }
    return 0
  }
}

/// A test's output as it arrives: text is relayed only up to the last whole UTF-8 character,
/// and the last few kilobytes are kept for a crash report.
struct OutputBuffer {
  private static let tailBytes = 4096
  private static let tailLines = 20
  private var partial: [UInt8] = []
  private var recent: [UInt8] = []

  /// The text that can be relayed now, if any.
  mutating func append(_ bytes: ArraySlice<UInt8>) -> String? {
    partial += bytes
    recent += bytes
    if recent.count > 2 * Self.tailBytes { recent.removeFirst(recent.count - Self.tailBytes) }
    let cut = partial.count - incompleteSuffixLength(partial)
    guard cut > 0 else { return nil }
    defer { partial.removeFirst(cut) }
    return String(decoding: partial[..<cut], as: UTF8.self)
  }

  /// What is left, whole or not.
  mutating func flush() -> String? {
    defer { partial = [] }
    return partial.isEmpty ? nil : String(decoding: partial, as: UTF8.self)
  }

  /// The last lines of the output (at most 20 lines and 4 KiB), without the stack trace the
  /// Swift runtime prints after a fatal error (it stays in the test's output), so that the
  /// `Fatal error: …` line is what a crash report ends with.
  var tail: String {
    var text = String(decoding: recent.suffix(Self.tailBytes), as: UTF8.self)
    if let trace = text.range(of: "\nCurrent stack trace:\n", options: .backwards) {
      text = String(text[..<trace.lowerBound]) + "\n"
    }
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    let kept = lines.suffix(Self.tailLines + (text.hasSuffix("\n") ? 1 : 0)).joined(separator: "\n")
    return kept.hasSuffix("\n") ? String(kept.dropLast()) : kept
  }

  /// How many bytes at the end start a UTF-8 character that is not complete yet.
  private func incompleteSuffixLength(_ bytes: [UInt8]) -> Int {
    guard !bytes.isEmpty else { return 0 }
    for back in 1...min(3, bytes.count) {
      let byte = bytes[bytes.count - back]
      if byte & 0xC0 == 0x80 { continue }
      let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
      return length > back ? back : 0
    }
    return 0
  }
}

/// What one test printed, relayed a whole line at a time: each line printed while other tests
/// of its process ran beside it starts with ``PrintedLines/sharedMark`` (it may be theirs);
/// nothing it printed is left out. Used where one stream carries the output of tests running side by side: a worker's `async`
/// tests (``SideBySideWorker``) and a test bundle's Swift Testing tests (``BundleExecutor``).
struct PrintedLines {
  /// What starts each line printed while other tests ran beside the test.
  static let sharedMark = Array("[shared] ".utf8)

  private var lines = LineSplitter()
  private var buffer = OutputBuffer()

  /// Adds what the test printed (`shared` when other tests ran beside it); returns the text
  /// to relay now, if any.
  mutating func add(_ bytes: ArraySlice<UInt8>, shared: Bool) -> String? {
    lines.append(bytes)
    var kept: [UInt8] = []
    while let line = lines.next() {
      if shared { kept += Self.sharedMark }
      kept += line
      kept.append(0x0A)
    }
    return kept.isEmpty ? nil : buffer.append(kept[...])
  }

  /// What is left, a line without its newline too.
  mutating func flush() -> String? {
    var text = ""
    if let rest = lines.rest(), let relayed = buffer.append(rest) {
      text = relayed
    }
    text += buffer.flush() ?? ""
    return text.isEmpty ? nil : text
  }

  /// The last lines relayed (``OutputBuffer/tail``).
  var tail: String { buffer.tail }
}
