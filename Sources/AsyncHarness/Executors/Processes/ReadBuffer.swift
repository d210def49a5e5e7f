#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What one `read` of a child's channel or output pipe fills: 64 KiB, made once by each
/// reader and reused for every read. (Made afresh for each test, zeroing it cost a worker's
/// parent more than reading the test's reply did.)
struct ReadBuffer {
  private var storage = [UInt8](repeating: 0, count: 65536)

  /// Reads once from `descriptor`: `read`'s result (the count read, 0 at the end, -1 with
  /// `errno` set).
  mutating func read(from descriptor: Int32) -> Int {
    storage.withUnsafeMutableBytes { bytes in
      #if canImport(Glibc)
      Glibc.read(descriptor, bytes.baseAddress, bytes.count)
      #else
      Darwin.read(descriptor, bytes.baseAddress, bytes.count)
      #endif
    }
  }

  /// The first `count` bytes the last read filled.
  func prefix(_ count: Int) -> ArraySlice<UInt8> { storage[..<count] }
}
