#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A test bundle's output, cut at the numbered marker lines (`\u{1}MARKER N`) the preloaded
/// library (``BundleChannelLibrary``) writes to standard output just before it writes record
/// N to the channel: what comes before marker N was printed before record N, whatever the
/// reads cut the output into. A marker that never comes (a test had redirected its output)
/// holds nothing up: the next one cuts.
struct MarkedOutput {
  /// The marker's text up to its number.
  let marker: [UInt8]
  /// Bytes read and not handed out: from a marker whose record was not relayed yet on.
  private var held: [UInt8] = []

  init(marker: [UInt8]) { self.marker = marker }

  /// Adds bytes read; returns those printed after the record `recordsRelayed` was written
  /// and before the next one.
  mutating func append(_ bytes: ArraySlice<UInt8>, recordsRelayed: Int) -> ArraySlice<UInt8> {
    held += bytes
    return release(recordsRelayed: recordsRelayed)
  }

  /// Hands out what was held up to the first marker of a record not relayed yet, dropping
  /// the markers of records relayed.
  mutating func release(recordsRelayed: Int) -> ArraySlice<UInt8> {
    var released: [UInt8] = []
    while true {
      guard let at = firstMarker() else {
        // The end may be the start of a marker: keep it until the next read.
        let keep = (1..<min(marker.count, held.count + 1)).last { held.suffix($0).elementsEqual(marker.prefix($0)) } ?? 0
        released += held[..<(held.count - keep)]
        held.removeFirst(held.count - keep)
        return released[...]
      }
      released += held[..<at.lowerBound]
      guard let newline = held[at.upperBound...].firstIndex(of: 0x0A) else {
        held.removeFirst(at.lowerBound)
        return released[...]
      }
      let number = Int(String(decoding: held[at.upperBound..<newline], as: UTF8.self)) ?? 0
      if number > recordsRelayed {
        held.removeFirst(at.lowerBound)
        return released[...]
      }
      held.removeFirst(newline + 1)
    }
  }

  /// Where the first marker held is: found by `memchr` and `memcmp`, which keep their speed in
  /// any build (a test may print a hundred megabytes, all of it searched).
  private func firstMarker() -> Range<Int>? {
    guard let first = marker.first else { return nil }
    return held.withUnsafeBytes { bytes -> Range<Int>? in
      guard let base = bytes.baseAddress else { return nil }
      var from = 0
      while bytes.count - from >= marker.count, let found = memchr(base + from, Int32(first), bytes.count - from) {
        let at = base.distance(to: UnsafeRawPointer(found))
        guard bytes.count - at >= marker.count else { return nil }
        if memcmp(found, marker, marker.count) == 0 { return at..<(at + marker.count) }
        from = at + 1
      }
      return nil
    }
  }

  /// Everything held, its markers left out: the output's end.
  mutating func rest() -> ArraySlice<UInt8> {
    let released = release(recordsRelayed: .max)
    defer { held = [] }
    return (Array(released) + held)[...]
  }
}
