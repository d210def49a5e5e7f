import AsyncHarness

/// Text that XML 1.0 can hold, ready for ``XMLWriter``: the only way to hand text to it.
///
/// Creating one sanitizes the raw string:
/// - whole ANSI escape sequences (CSI such as `ESC[31m` and `ESC[m`, OSC ended by BEL or
///   `ESC\`, and the short two- and three-byte escapes) are removed; an incomplete sequence
///   is kept, with its ESC made visible as below, so no text silently disappears;
/// - every other character XML 1.0 forbids is replaced by a visible stand-in: a C0 control
///   (U+0000–U+001F except tab, LF and CR) by its Unicode control picture U+2400–U+241F
///   (`␀`, `␁`, … `␛`, … `␟`), DEL by `␡` (U+2421), and C1 controls (U+0080–U+009F, legal
///   XML 1.0 but refused by dashboards), U+FFFE and U+FFFF by `�` (U+FFFD).
///
/// After sanitizing, the text holds no NUL, so it cannot be cut short by the NUL-terminated
/// strings that libxml2's writer takes. Each piece of user text is sanitized on its own and
/// the pieces joined with `+`, so an incomplete escape sequence at the end of a message never
/// swallows what the harness writes after it.
struct XMLText: Hashable {
  /// The most UTF-8 bytes of an attribute value, cut note included. libxml2's default parser
  /// refuses a file once values of about 512 KiB follow one another ("Huge input lookup");
  /// 4 KiB keeps every name readable and far from that.
  static let attributeLimit = 4096

  /// The sanitized text.
  let string: String

  /// Sanitizes `raw`.
  init(_ raw: String) {
    string = Self.sanitized(raw, maxBytes: .max).text
  }

  /// Sanitizes `raw` and keeps at most `limit` UTF-8 bytes of it, followed by
  /// ``CappedText/cutNote(bytes:limit:)`` when something was cut: for element text.
  init(_ raw: String, limit: Int) {
    var text = Self.captured(limit: limit)
    text.append(raw)
    string = text.text
  }

  /// Sanitizes `raw` for an attribute value of at most `limit` UTF-8 bytes (at most
  /// ``attributeLimit``), the cut note included: ` [AsyncHarness: N more bytes cut]`.
  init(attribute raw: String, limit: Int = XMLText.attributeLimit) {
    self = Self.attribute(raw, limit: limit).value
  }

  /// ``init(attribute:limit:)``, and whether it cut `raw`.
  static func attribute(_ raw: String, limit: Int = XMLText.attributeLimit) -> (value: XMLText, isCut: Bool) {
    let limit = min(max(0, limit), Self.attributeLimit)
    let whole = Self.sanitized(raw, maxBytes: limit)
    let rawBytes = raw.utf8.count
    guard whole.usedBytes < rawBytes else { return (XMLText(sanitized: whole.text), false) }
    let room = limit - Self.attributeCutNote(bytes: rawBytes).utf8.count
    let kept = Self.sanitized(raw, maxBytes: max(0, room))
    return (XMLText(sanitized: kept.text + Self.attributeCutNote(bytes: rawBytes - kept.usedBytes)), true)
  }

  private init(sanitized: String) {
    string = sanitized
  }

  /// Empty text that keeps at most `limit` bytes, sanitizing each piece appended on its own.
  static func captured(limit: Int) -> CappedText {
    CappedText(limit: limit, prepare: sanitized)
  }

  /// Joins two sanitized texts: the result needs no sanitizing, since every character XML
  /// forbids, and every ESC, is gone from both.
  static func + (lhs: XMLText, rhs: XMLText) -> XMLText {
    XMLText(sanitized: lhs.string + rhs.string)
  }

  /// Text captured in pieces, each sanitized when appended.
  init(_ text: CappedText) {
    string = text.text
  }

  /// Whether the text is empty or only whitespace: dashboards treat a blank name or message
  /// as missing (dorny's reporter crashes on it).
  var isBlank: Bool {
    if let first = string.utf8.first, first > 0x20, first < 0x7F { return false }  // the usual case, fast
    return string.allSatisfy(\.isWhitespace)
  }

  /// This text, or `placeholder` when it is blank.
  func nonBlank(or placeholder: String) -> XMLText {
    isBlank ? XMLText(placeholder) : self
  }

  /// The marker that ends an attribute value that was cut.
  static func attributeCutNote(bytes: Int) -> String {
    " [AsyncHarness: \(bytes) more bytes cut]"
  }

  /// `raw` with ANSI escape sequences removed and forbidden characters replaced, cut to at
  /// most `maxBytes` UTF-8 bytes at a character boundary; `usedBytes` counts the bytes of
  /// `raw` that the kept text stands for.
  static func sanitized(_ raw: String, maxBytes: Int) -> (text: String, usedBytes: Int) {
    let first = firstForbiddenOffset(in: raw) ?? Int.max
    guard first < maxBytes else {
      let text = CappedText.prefix(of: raw, maxBytes: maxBytes)
      return (text, text.utf8.count)
    }
    let bytes = Array(raw.utf8)
    var out = Array(bytes[..<first])
    out.reserveCapacity(min(bytes.count, maxBytes) + 16)
    var i = first
    while i < bytes.count {
      let byte = bytes[i]
      var length = 1
      var standIn: (UInt8, UInt8, UInt8)?
      switch byte {
      case 0x1B:
        if let end = escapeSequenceEnd(in: bytes, at: i) {
          i = end
          continue
        }
        standIn = (0xE2, 0x90, 0x9B)  // ␛
      case 0x09, 0x0A, 0x0D:
        break
      case 0x00..<0x20:
        standIn = (0xE2, 0x90, 0x80 + byte)  // U+2400 + byte
      case 0x7F:
        standIn = (0xE2, 0x90, 0xA1)  // ␡
      default:
        let forbidden = forbiddenScalarLength(in: bytes, at: i)
        if forbidden > 0 {
          standIn = (0xEF, 0xBF, 0xBD)  // U+FFFD
          length = forbidden
        } else {
          length = byte < 0x80 ? 1 : byte < 0xE0 ? 2 : byte < 0xF0 ? 3 : 4
        }
      }
      guard out.count + (standIn == nil ? length : 3) <= maxBytes else { break }
      if let (a, b, c) = standIn {
        out.append(a)
        out.append(b)
        out.append(c)
      } else {
        out += bytes[i..<i + length]
      }
      i += length
    }
    return (String(decoding: out, as: UTF8.self), i)
  }

  /// The offset of the first byte that needs sanitizing, if any: one pass over the UTF-8
  /// bytes in place (every name and text of a report goes through it).
  private static func firstForbiddenOffset(in text: String) -> Int? {
    var text = text
    return text.withUTF8 { utf8 in
      var previous: UInt8 = 0
      var beforePrevious: UInt8 = 0
      for offset in utf8.indices {
        let byte = utf8[offset]
        if byte < 0x20 {
          if byte != 0x09, byte != 0x0A, byte != 0x0D { return offset }
        } else if byte == 0x7F {
          return offset
        } else if previous == 0xC2, byte < 0xA0 {  // C1 control: C2 80 ... C2 9F
          return offset - 1
        } else if beforePrevious == 0xEF, previous == 0xBF, byte >= 0xBE {  // U+FFFE, U+FFFF
          return offset - 2
        }
        beforePrevious = previous
        previous = byte
      }
      return nil
    }
  }

  /// The length of the encoding at `i` when it is a C1 control, U+FFFE or U+FFFF; else 0.
  /// The input is valid UTF-8, so a lead byte is always followed by its continuations.
  private static func forbiddenScalarLength(in bytes: [UInt8], at i: Int) -> Int {
    switch bytes[i] {
    case 0xC2: bytes[i + 1] < 0xA0 ? 2 : 0
    case 0xEF: bytes[i + 1] == 0xBF && bytes[i + 2] >= 0xBE ? 3 : 0
    default: 0
    }
  }

  /// The index just past the complete escape sequence starting with the ESC at `start`, or
  /// nil when no complete sequence starts there.
  private static func escapeSequenceEnd(in bytes: [UInt8], at start: Int) -> Int? {
    var i = start + 1
    guard i < bytes.count else { return nil }
    switch bytes[i] {
    case UInt8(ascii: "["):  // CSI: parameters, intermediates, one final byte
      i += 1
      while i < bytes.count, (0x30...0x3F).contains(bytes[i]) { i += 1 }
      while i < bytes.count, (0x20...0x2F).contains(bytes[i]) { i += 1 }
      return i < bytes.count && (0x40...0x7E).contains(bytes[i]) ? i + 1 : nil
    case UInt8(ascii: "]"):  // OSC: printable text ended by BEL or ESC \
      i += 1
      while i < bytes.count {
        switch bytes[i] {
        case 0x07: return i + 1
        case 0x1B: return i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "\\") ? i + 2 : nil
        case 0x00..<0x20, 0x7F: return nil
        default: i += 1
        }
      }
      return nil
    case 0x20...0x2F:  // intermediates, then one final byte (e.g. ESC ( B)
      while i < bytes.count, (0x20...0x2F).contains(bytes[i]) { i += 1 }
      return i < bytes.count && (0x30...0x7E).contains(bytes[i]) ? i + 1 : nil
    case 0x30...0x7E:  // a two-byte escape (e.g. ESC 7, ESC M)
      return i + 1
    default:
      return nil
    }
  }
}
