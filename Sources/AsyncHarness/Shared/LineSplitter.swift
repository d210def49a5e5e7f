#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The one splitter of byte streams into lines, compiled twice from this one source: into the
// module AsyncHarnessShared, for the harness, and, as text embedded in AsyncHarness, into the
// library preloaded into a package's test bundle. It imports only the C library.

/// Splits a byte stream into lines as it is read, in whatever pieces the reads cut it: the
/// worker protocol's channel, in both directions, a test bundle's channel and output, and, in
/// the library preloaded into a test bundle, Swift Testing's event stream as it is written.
///
/// Each byte is searched for a newline once, so a line of any length (a 2 MB test name)
/// costs what its bytes cost, however many reads it took.
package struct LineSplitter {
  private var pending: [UInt8] = []
  /// Where the lines not handed out yet start.
  private var consumed = 0
  /// Where the search for the next newline resumes: the bytes from `consumed` to here hold none.
  private var scanned = 0

  package init() {}

  /// Adds bytes read from the stream.
  package mutating func append(_ bytes: ArraySlice<UInt8>) {
    if consumed > 0 && consumed * 2 >= pending.count {
      pending.removeFirst(consumed)
      scanned -= consumed
      consumed = 0
    }
    pending += bytes
  }

  /// What is left after the last complete line once the stream ended (a last line without
  /// its newline), or `nil` when nothing is; the splitter is then empty.
  package mutating func rest() -> ArraySlice<UInt8>? {
    defer { (pending, consumed, scanned) = ([], 0, 0) }
    return unfinished
  }

  /// What was read after the last complete line, left where it is.
  package var unfinished: ArraySlice<UInt8>? { consumed < pending.count ? pending[consumed...] : nil }

  /// The next complete line, without its newline; `nil` until one is complete.
  package mutating func next() -> ArraySlice<UInt8>? {
    let start = max(consumed, scanned)
    let found = pending.withUnsafeBufferPointer { buffer -> Int? in
      guard start < buffer.count, let base = buffer.baseAddress,
            let hit = memchr(base + start, 0x0A, buffer.count - start) else { return nil }
      return base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
    }
    guard let newline = found else {
      scanned = pending.count
      return nil
    }
    let line = pending[consumed..<newline]
    consumed = newline + 1
    scanned = consumed
    return line
  }
}
