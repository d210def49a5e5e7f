/// A JSON value read from UTF-8 bytes: the reader behind ``Event/init(jsonLine:)`` and a
/// worker's requests. Written by hand because `JSONDecoder` cost a worker's parent more
/// than running the test did. Numbers keep their text, so a 64-bit seed reads back exactly.
enum JSONValue: Sendable, Equatable {
  case null
  case bool(Bool)
  case number(String)
  case string(String)
  case array([JSONValue])
  case object(JSONObject)

  /// Reads one JSON text (RFC 8259), surrounding whitespace allowed.
  /// - Returns: the value, or `nil` when `bytes` is not one JSON text.
  static func parse(_ bytes: some Collection<UInt8>) -> JSONValue? {
    let read = bytes.withContiguousStorageIfAvailable { parse(buffer: $0) }
    return read ?? Array(bytes).withUnsafeBufferPointer { parse(buffer: $0) }
  }

  private static func parse(buffer: UnsafeBufferPointer<UInt8>) -> JSONValue? {
    var reader = JSONReader(bytes: buffer)
    guard let value = reader.value(depth: 0) else { return nil }
    reader.skipWhitespace()
    return reader.position == buffer.count ? value : nil
  }
}

/// The cursor of ``JSONValue/parse(_:)`` and of ``JSONMembers``.
struct JSONReader {
  let bytes: UnsafeBufferPointer<UInt8>
  var position = 0
  /// Deeper nesting is refused rather than risking the stack.
  private static let maximumDepth = 512

  init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

  mutating func skipWhitespace() {
    while position < bytes.count {
      switch bytes[position] {
      case 0x20, 0x09, 0x0A, 0x0D: position += 1
      default: return
      }
    }
  }

  mutating func value(depth: Int) -> JSONValue? {
    guard depth < Self.maximumDepth else { return nil }
    skipWhitespace()
    guard position < bytes.count else { return nil }
    switch bytes[position] {
    case UInt8(ascii: "{"): return object(depth: depth)
    case UInt8(ascii: "["): return array(depth: depth)
    case UInt8(ascii: "\""): return string().map { .string($0) }
    case UInt8(ascii: "t"): return literal("true", .bool(true))
    case UInt8(ascii: "f"): return literal("false", .bool(false))
    case UInt8(ascii: "n"): return literal("null", .null)
    default: return number()
    }
  }

  private mutating func object(depth: Int) -> JSONValue? {
    position += 1
    var fields: [(key: String, value: JSONValue)] = []
    skipWhitespace()
    if consume(UInt8(ascii: "}")) { return .object(JSONObject(fields)) }
    while true {
      skipWhitespace()
      guard position < bytes.count, bytes[position] == UInt8(ascii: "\""), let key = string() else { return nil }
      skipWhitespace()
      guard consume(UInt8(ascii: ":")), let value = value(depth: depth + 1) else { return nil }
      fields.append((key, value))
      skipWhitespace()
      if consume(UInt8(ascii: "}")) { return .object(JSONObject(fields)) }
      guard consume(UInt8(ascii: ",")) else { return nil }
    }
  }

  private mutating func array(depth: Int) -> JSONValue? {
    position += 1
    var elements: [JSONValue] = []
    skipWhitespace()
    if consume(UInt8(ascii: "]")) { return .array(elements) }
    while true {
      guard let element = value(depth: depth + 1) else { return nil }
      elements.append(element)
      skipWhitespace()
      if consume(UInt8(ascii: "]")) { return .array(elements) }
      guard consume(UInt8(ascii: ",")) else { return nil }
    }
  }

  /// A string, its opening quote at `position`; escapes decoded, surrogate pairs joined.
  mutating func string() -> String? {
    position += 1
    let start = position
    // The common case, no escape: the bytes between the quotes are the string.
    while position < bytes.count {
      let byte = bytes[position]
      if byte == UInt8(ascii: "\"") {
        defer { position += 1 }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
      }
      if byte == UInt8(ascii: "\\") { break }
      if byte < 0x20 { return nil }
      position += 1
    }
    var text = Array(bytes[start..<position])
    while position < bytes.count {
      let byte = bytes[position]
      position += 1
      switch byte {
      case UInt8(ascii: "\""):
        return String(decoding: text, as: UTF8.self)
      case UInt8(ascii: "\\"):
        guard position < bytes.count else { return nil }
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
          guard let scalar = unicodeEscape() else { return nil }
          text.append(contentsOf: Array(String(Character(scalar)).utf8))
        default: return nil
        }
      case 0..<0x20:
        return nil
      default:
        text.append(byte)
      }
    }
    return nil
  }

  /// The scalar of a `\uXXXX` escape (the `\u` already read), joining a surrogate pair.
  private mutating func unicodeEscape() -> Unicode.Scalar? {
    guard let first = hex4() else { return nil }
    if (0xD800..<0xDC00).contains(first) {
      guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u")
      else { return nil }
      position += 2
      guard let second = hex4(), (0xDC00..<0xE000).contains(second) else { return nil }
      return Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))
    }
    return Unicode.Scalar(first)
  }

  private mutating func hex4() -> UInt32? {
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

  /// A number as RFC 8259 writes it: `-`, digits without a leading zero, a fraction, an exponent.
  private mutating func number() -> JSONValue? {
    let start = position
    _ = consume(UInt8(ascii: "-"))
    if consume(UInt8(ascii: "0")) {
    } else if digits() == 0 {
      return nil
    }
    if consume(UInt8(ascii: ".")), digits() == 0 { return nil }
    if consume(UInt8(ascii: "e")) || consume(UInt8(ascii: "E")) {
      if !consume(UInt8(ascii: "+")) { _ = consume(UInt8(ascii: "-")) }
      if digits() == 0 { return nil }
    }
    return .number(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self))
  }

  mutating func digits() -> Int {
    let start = position
    while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) { position += 1 }
    return position - start
  }

  private mutating func literal(_ word: StaticString, _ value: JSONValue) -> JSONValue? {
    let count = word.utf8CodeUnitCount
    guard position + count <= bytes.count else { return nil }
    for index in 0..<count where bytes[position + index] != word.utf8Start[index] { return nil }
    position += count
    return value
  }

  mutating func consume(_ byte: UInt8) -> Bool {
    guard position < bytes.count, bytes[position] == byte else { return false }
    position += 1
    return true
  }
}

/// The fields of a JSON object being read into a value, with the path to it for errors:
/// `missing field test.name`, `field issue.kind has the wrong type`.
struct JSONFields {
  let fields: JSONObject
  let path: String

  /// The fields of `value`, which must be an object.
  /// - Throws: ``EventDecodingError`` when it is not one.
  init(_ value: JSONValue, path: String = "") throws {
    guard case .object(let fields) = value else {
      throw EventDecodingError(reason: path.isEmpty ? "not a JSON object" : "field \(path) has the wrong type")
    }
    self.fields = fields
    self.path = path
  }

  private func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

  /// The value of `key`; `nil` when absent or `null`.
  func optional(_ key: String) -> JSONValue? {
    guard let value = fields[key], value != .null else { return nil }
    return value
  }

  /// - Throws: ``EventDecodingError`` naming the field when it is absent.
  func required(_ key: String) throws -> JSONValue {
    guard let value = optional(key) else { throw EventDecodingError(reason: "missing field \(name(key))") }
    return value
  }

  func wrongType(_ key: String) -> EventDecodingError { EventDecodingError(reason: "field \(name(key)) has the wrong type") }

  func string(_ key: String) throws -> String {
    guard case .string(let text) = try required(key) else { throw wrongType(key) }
    return text
  }

  func optionalString(_ key: String) throws -> String? {
    guard optional(key) != nil else { return nil }
    return try string(key)
  }

  /// A number read as `T` (`Int`, `UInt64`, `Double`).
  func number<T: LosslessStringConvertible>(_ key: String, as type: T.Type = T.self) throws -> T {
    guard case .number(let text) = try required(key), let number = T(text) else { throw wrongType(key) }
    return number
  }

  func optionalNumber<T: LosslessStringConvertible>(_ key: String, as type: T.Type = T.self) throws -> T? {
    guard optional(key) != nil else { return nil }
    return try number(key, as: type)
  }

  func object(_ key: String) throws -> JSONFields { try JSONFields(required(key), path: name(key)) }

  /// An object that may be missing (or null).
  func optionalObject(_ key: String) throws -> JSONFields? {
    guard let value = optional(key), value != .null else { return nil }
    return try JSONFields(value, path: name(key))
  }

  /// The elements of an array, each read by `read` with its path.
  func array<Element>(_ key: String, _ read: (JSONValue, String) throws -> Element) throws -> [Element] {
    guard case .array(let elements) = try required(key) else { throw wrongType(key) }
    return try elements.enumerated().map { try read($1, "\(name(key)).\($0)") }
  }

  /// A string that must be one of `T`'s raw values.
  func raw<T: RawRepresentable>(_ key: String, as type: T.Type = T.self) throws -> T where T.RawValue == String {
    guard let value = T(rawValue: try string(key)) else {
      throw EventDecodingError(reason: "field \(name(key)) is invalid")
    }
    return value
  }
}
