/// The hash that assigns tests to shards: 64-bit FNV-1a over the UTF-8 bytes of an ID.
///
/// Shards of one run are separate processes, often on separate machines and builds, that
/// must agree on every assignment without talking to each other. Swift's `Hasher` is seeded
/// per process, so it cannot be used; FNV-1a is specified bit for bit (offset basis
/// 0xcbf29ce484222325, prime 0x100000001b3), has no seed and no platform dependence, and
/// takes a few lines. A test pins its values.
package enum StableHash {
  /// The FNV-1a 64 hash of `text`'s UTF-8 bytes.
  /// - Parameter text: the text to hash.
  /// - Returns: the hash.
  package static func fnv1a64(_ text: String) -> UInt64 {
    fnv1a64(continuing: offsetBasis, text.utf8)
  }

  /// FNV-1a 64's starting value, the hash of no bytes.
  static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325

  /// Continues the FNV-1a 64 hash `hash` over `bytes`.
  static func fnv1a64(continuing hash: UInt64, _ bytes: some Sequence<UInt8>) -> UInt64 {
    var hash = hash
    for byte in bytes {
      hash ^= UInt64(byte)
      hash &*= 0x0000_0100_0000_01b3
    }
    return hash
  }

  /// The shard, from 1 to `count`, that the key `text` goes to: the hash read as a fraction
  /// of 2⁶⁴ and scaled to `count` (the high word of `hash × count`).
  ///
  /// The high bits are used because FNV-1a's low bits are weak: its lowest bit is only the
  /// parity of the bytes' lowest bits, so `hash % 2` would put `test1` and `test3` together
  /// every time.
  /// - Parameters:
  ///   - text: the key: a test ID, or a suite's name.
  ///   - count: how many shards there are, at least 1.
  /// - Returns: the shard, counted from 1.
  package static func shard(of text: String, count: Int) -> Int {
    Int(fnv1a64(text).multipliedFullWidth(by: UInt64(max(1, count))).high) + 1
  }
}
