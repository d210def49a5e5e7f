import AsyncHarnessShared

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one JSON reader (RFC 8259): a cursor over UTF-8 bytes that reads a text a piece at a
/// time, an object member by member (``openObject()``, then ``nextKey()`` and the member's
/// value, until ``nextKey()`` says the object ended) and an array element by element
/// (``openArray()``, ``nextElement()``). ``JSONValue/parse(_:)`` builds a value tree with it;
/// the lines a run reads by the thousand whose members are known, a worker's
/// ``TimelineMark``s, are read with it straight from their bytes, without a tree: keys are
/// matched against `StaticString`s byte by byte (`case "ref":`), integers read from their
/// digits, and only a string member becomes a `String`. Written by hand because
/// `JSONDecoder` cost a worker's parent more than running the test did.
///
/// Text that is not JSON throws ``malformed``; a member of the wrong type throws
/// ``EventDecodingError/wrongType(_:)`` naming it.
struct JSONReader: ~Copyable {
  private let bytes: UnsafeBufferPointer<UInt8>
  private var position = 0
  /// How many objects and arrays are open.
  private var depth = 0
  /// Whether the object or array opened last has had no member or element read yet.
  private var justOpened = false
  /// Deeper nesting is refused rather than risking the stack.
  static let maximumDepth = 512

  private init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

  /// Reads `bytes` with `read`, which reads as much of them as it needs; what `read` returns.
  /// - Throws: what `read` throws.
  static func read<Result>(_ bytes: some Collection<UInt8>, _ read: (inout JSONReader) throws -> Result) rethrows -> Result {
    if let result = try bytes.withContiguousStorageIfAvailable({ buffer in
      var reader = JSONReader(buffer)
      return try read(&reader)
    }) { return result }
    return try Array(bytes).withUnsafeBufferPointer { buffer in
      var reader = JSONReader(buffer)
      return try read(&reader)
    }
  }

  /// The error of text that is not JSON (every line the harness reads is one JSON object).
  static var malformed: EventDecodingError { EventDecodingError(reason: "not a JSON object") }

  /// After the text's one value: nothing but whitespace may follow it.
  /// - Throws: ``malformed`` when something does.
  mutating func end() throws {
    skipWhitespace()
    guard position == bytes.count else { throw Self.malformed }
  }

  // MARK: Objects and arrays

  /// Reads the `{` that opens an object, its members next.
  /// - Throws: ``malformed`` when no object starts here, or it would nest too deep.
  mutating func openObject() throws { try open(UInt8(ascii: "{")) }

  /// Reads the `[` that opens an array, its elements next.
  /// - Throws: ``malformed`` when no array starts here, or it would nest too deep.
  mutating func openArray() throws { try open(UInt8(ascii: "[")) }

  /// The next member's key of the object open last, its value to be read next (or skipped,
  /// ``skipValue()``); nil past the object's closing `}`.
  /// - Throws: ``malformed`` when the text is not an object's members.
  mutating func nextKey() throws -> JSONString? {
    guard try next(closingWith: UInt8(ascii: "}")) else { return nil }
    skipWhitespace()
    guard let key = jsonString() else { throw Self.malformed }
    skipWhitespace()
    guard consume(UInt8(ascii: ":")) else { throw Self.malformed }
    return key
  }

  /// Whether another element of the array open last is next, to be read; false past the
  /// array's closing `]`.
  /// - Throws: ``malformed`` when the text is not an array's elements.
  mutating func nextElement() throws -> Bool { try next(closingWith: UInt8(ascii: "]")) }

  private mutating func open(_ bracket: UInt8) throws {
    skipWhitespace()
    guard depth < Self.maximumDepth, consume(bracket) else { throw Self.malformed }
    depth += 1
    justOpened = true
  }

  /// Past the comma before the next member or element of what is open last (none before the
  /// first): true; past its closing bracket `close`: false.
  private mutating func next(closingWith close: UInt8) throws -> Bool {
    skipWhitespace()
    let first = justOpened
    justOpened = false
    if consume(close) {
      depth -= 1
      return false
    }
    guard first || consume(UInt8(ascii: ",")) else { throw Self.malformed }
    return true
  }

  // MARK: Values

  /// The value next, whole, as a tree.
  /// - Throws: ``malformed`` when it is not JSON.
  mutating func value() throws -> JSONValue {
    skipWhitespace()
    guard position < bytes.count else { throw Self.malformed }
    switch bytes[position] {
    case UInt8(ascii: "{"):
      try openObject()
      var members: [(key: String, value: JSONValue)] = []
      while let key = try nextKey() { members.append((key.string, try value())) }
      return .object(JSONObject(members))
    case UInt8(ascii: "["):
      try openArray()
      var elements: [JSONValue] = []
      while try nextElement() { elements.append(try value()) }
      return .array(elements)
    case UInt8(ascii: "\""):
      guard let text = jsonString() else { throw Self.malformed }
      return .string(text.string)
    case UInt8(ascii: "t"): return try literal("true", .bool(true))
    case UInt8(ascii: "f"): return try literal("false", .bool(false))
    case UInt8(ascii: "n"): return try literal("null", .null)
    default:
      let start = position
      guard number() != nil else { throw Self.malformed }
      return .number(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self))
    }
  }

  /// Reads past the value next, whatever it is.
  /// - Throws: ``malformed`` when it is not JSON.
  mutating func skipValue() throws { _ = try value() }

  /// The value next, a string.
  /// - Throws: ``EventDecodingError/wrongType(_:)`` naming `key` when it is not one.
  mutating func string(_ key: StaticString) throws -> String {
    skipWhitespace()
    guard let text = jsonString() else { throw EventDecodingError.wrongType("\(key)") }
    return text.string
  }

  /// The value next, an integer written without a fraction or an exponent, that fits in 64 bits.
  /// - Throws: ``EventDecodingError/wrongType(_:)`` naming `key` when it is not one.
  mutating func integer(_ key: StaticString) throws -> Int64 {
    skipWhitespace()
    let start = position
    guard number() == true else { throw EventDecodingError.wrongType("\(key)") }
    let negative = bytes[start] == UInt8(ascii: "-")
    var value: Int64 = 0
    for byte in bytes[(negative ? start + 1 : start)..<position] {
      let digit = Int64(byte - UInt8(ascii: "0"))
      let (times10, overflowed) = value.multipliedReportingOverflow(by: 10)
      let (sum, overflowedAgain) = negative ? times10.subtractingReportingOverflow(digit) : times10.addingReportingOverflow(digit)
      guard !overflowed, !overflowedAgain else { throw EventDecodingError.wrongType("\(key)") }
      value = sum
    }
    return value
  }

  // MARK: Tokens

  private mutating func skipWhitespace() {
    while position < bytes.count {
      switch bytes[position] {
      case 0x20, 0x09, 0x0A, 0x0D: position += 1
      default: return
      }
    }
  }

  private mutating func consume(_ byte: UInt8) -> Bool {
    guard position < bytes.count, bytes[position] == byte else { return false }
    position += 1
    return true
  }

  private mutating func literal(_ word: StaticString, _ value: JSONValue) throws -> JSONValue {
    let count = word.utf8CodeUnitCount
    guard position + count <= bytes.count else { throw Self.malformed }
    for index in 0..<count where bytes[position + index] != word.utf8Start[index] { throw Self.malformed }
    position += count
    return value
  }

  /// Reads past a number as RFC 8259 writes it: `-`, digits without a leading zero, a
  /// fraction, an exponent.
  /// - Returns: whether it is an integer (no fraction, no exponent); nil when no number is next.
  private mutating func number() -> Bool? {
    _ = consume(UInt8(ascii: "-"))
    let start = position
    let count = digits()
    guard count > 0, count == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
    var integer = true
    if consume(UInt8(ascii: ".")) {
      guard digits() > 0 else { return nil }
      integer = false
    }
    if consume(UInt8(ascii: "e")) || consume(UInt8(ascii: "E")) {
      if !consume(UInt8(ascii: "+")) { _ = consume(UInt8(ascii: "-")) }
      guard digits() > 0 else { return nil }
      integer = false
    }
    return integer
  }

  private mutating func digits() -> Int {
    let start = position
    while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) { position += 1 }
    return position - start
  }

  /// A string, its opening quote next: its bytes as they are when it has no escape (the
  /// common case, no `String` made), else what its escapes decode to, surrogate pairs joined.
  /// - Returns: nil when no string is next, or it is not one.
  private mutating func jsonString() -> JSONString? {
    guard consume(UInt8(ascii: "\"")) else { return nil }
    let start = position
    while position < bytes.count {
      let byte = bytes[position]
      if byte == UInt8(ascii: "\"") {
        defer { position += 1 }
        return JSONString(raw: UnsafeBufferPointer(rebasing: bytes[start..<position]))
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
        return JSONString(decoded: String(decoding: text, as: UTF8.self))
      case UInt8(ascii: "\\"):
        guard JSONEscape.read(bytes, at: &position, into: &text) else { return nil }
      case 0..<0x20:
        return nil
      default:
        text.append(byte)
      }
    }
    return nil
  }
}

/// A string as ``JSONReader`` reads it, a key or a value: its bytes in the text, or what a
/// string written with escapes decodes to. Valid only inside the ``JSONReader/read(_:_:)``
/// that read it.
struct JSONString {
  private let raw: UnsafeBufferPointer<UInt8>?
  private let decoded: String?

  fileprivate init(raw: UnsafeBufferPointer<UInt8>) { (self.raw, decoded) = (raw, nil) }
  fileprivate init(decoded: String) { (raw, self.decoded) = (nil, decoded) }

  /// The string.
  var string: String { decoded ?? String(decoding: raw!, as: UTF8.self) }

  /// Whether the string is `name`: `case "ref":` in a `switch` over keys.
  static func ~= (name: StaticString, string: JSONString) -> Bool {
    let expected = UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
    guard let raw = string.raw else { return string.decoded.map { $0.utf8.elementsEqual(expected) } ?? false }
    return raw.count == expected.count && (raw.isEmpty || memcmp(raw.baseAddress!, expected.baseAddress!, raw.count) == 0)
  }
}
