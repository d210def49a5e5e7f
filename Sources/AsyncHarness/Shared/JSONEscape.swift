// JSON's string escapes (RFC 8259), read from this one source by both of the package's JSON
// readers: the core's `JSONReader` (Events/JSONReader.swift) and the channel's record decoder
// (ChannelRecord.swift), which the library preloaded into a test bundle compiles too. It
// imports nothing.

/// Reads the escapes of a JSON string.
package enum JSONEscape {
  /// Reads the escape whose backslash was just read, at `position` of `bytes`, moves past it,
  /// and appends its character's UTF-8 to `text`. The `\u` escape of a high surrogate and that
  /// of the low one after it are one character.
  /// - Returns: `false` when it is no escape of JSON's, a `\u` not followed by four
  ///   hexadecimal digits, or a surrogate alone.
  package static func read(_ bytes: UnsafeBufferPointer<UInt8>, at position: inout Int, into text: inout [UInt8]) -> Bool {
    guard position < bytes.count else { return false }
    let escape = bytes[position]
    position += 1
    switch escape {
    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escape)
    case UInt8(ascii: "b"): text.append(0x08)
    case UInt8(ascii: "f"): text.append(0x0C)
    case UInt8(ascii: "n"): text.append(0x0A)
    case UInt8(ascii: "r"): text.append(0x0D)
    case UInt8(ascii: "t"): text.append(0x09)
    case UInt8(ascii: "u"):
      guard let scalar = unicodeEscape(bytes, at: &position) else { return false }
      UTF8.encode(scalar) { text.append($0) }
    default: return false
    }
    return true
  }

  /// The scalar of a `\uXXXX` escape (the `\u` already read), joining a surrogate pair.
  private static func unicodeEscape(_ bytes: UnsafeBufferPointer<UInt8>, at position: inout Int) -> Unicode.Scalar? {
    guard let first = hex4(bytes, at: &position) else { return nil }
    if (0xD800..<0xDC00).contains(first) {
      guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u")
      else { return nil }
      position += 2
      guard let second = hex4(bytes, at: &position), (0xDC00..<0xE000).contains(second) else { return nil }
      return Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))
    }
    return Unicode.Scalar(first)
  }

  private static func hex4(_ bytes: UnsafeBufferPointer<UInt8>, at position: inout Int) -> UInt32? {
    guard position + 4 <= bytes.count else { return nil }
    var value: UInt32 = 0
    for _ in 0..<4 {
      let byte = bytes[position]
      position += 1
      let digit: UInt8
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
      default: return nil
      }
      value = value << 4 | UInt32(digit)
    }
    return value
  }
}
