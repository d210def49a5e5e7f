import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A process's output, cut at the numbered marker lines (`marker` N, a newline) the process
/// writes into it just before the Nth thing this process waits for: a harness worker before
/// its Nth test starts (``WorkerMain``), the preloaded library before it writes record N to
/// its channel (``BundleChannelLibrary``). What comes before marker N was printed before that
/// Nth thing, whatever the reads cut the output into, so it is handed out only while the
/// reader has passed fewer than N (``append(_:passed:)``), and marker N is dropped once the
/// reader passed it. A marker that never comes (a test had redirected its output) holds
/// nothing up: the next one cuts. The one place output is cut at markers.
struct MarkedOutput {
  /// The marker's text up to its number.
  let marker: [UInt8]
  /// Bytes read and not handed out: from the first marker not passed yet on, or the start of
  /// a marker that the next read completes.
  private var held: [UInt8] = []

  init(marker: [UInt8]) { self.marker = marker }

  /// Adds bytes read; returns those printed before the first marker numbered above `passed`.
  mutating func append(_ bytes: ArraySlice<UInt8>, passed: Int) -> ArraySlice<UInt8> {
    // Most output holds no byte that starts a marker: it is handed out as it is.
    if held.isEmpty, Self.index(of: marker[0], in: bytes) == nil { return bytes }
    held += bytes
    return release(passed: passed)
  }

  /// Hands out what was held up to the first marker numbered above `passed`, dropping the
  /// markers passed.
  mutating func release(passed: Int) -> ArraySlice<UInt8> {
    var released: [UInt8] = []
    while true {
      guard let at = firstMarker() else {
        // The end may be the start of a marker: keep it until the next read.
        let keep = partialMarkerLength()
        released += held[..<(held.count - keep)]
        held.removeFirst(held.count - keep)
        return released[...]
      }
      released += held[..<at]
      switch number(at: at + marker.count, passed: passed) {
      case .passed(let lineEnd):
        held.removeFirst(lineEnd)
      case .notPassed, .unfinished:
        // A marker not passed yet, or one whose number the next read completes.
        held.removeFirst(at)
        return released[...]
      case .notAMarker:
        // The marker's text with no number after it is output like any other.
        released += held[at..<(at + marker.count)]
        held.removeFirst(at + marker.count)
      }
    }
  }

  private enum Number {
    /// A marker passed: its line ends before this index.
    case passed(lineEnd: Int)
    case notPassed
    /// Its line is not read whole yet.
    case unfinished
    case notAMarker
  }

  /// The longest number a marker line carries.
  private static let longestNumber = 20

  /// What the marker's text that ends at `start` is: a number and a newline make a marker.
  private func number(at start: Int, passed: Int) -> Number {
    let window = held[start..<min(held.count, start + Self.longestNumber + 1)]
    guard let newline = Self.index(of: 0x0A, in: window) else {
      return window.count > Self.longestNumber ? .notAMarker : .unfinished
    }
    guard let number = Int(String(decoding: held[start..<newline], as: UTF8.self)) else { return .notAMarker }
    return number <= passed ? .passed(lineEnd: newline + 1) : .notPassed
  }

  /// Everything held, the markers' lines left out: the output's end.
  mutating func rest() -> ArraySlice<UInt8> {
    let released = release(passed: .max)
    defer { held = [] }
    return (Array(released) + held)[...]
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
