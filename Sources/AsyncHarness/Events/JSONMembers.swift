#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A JSON object read member by member straight from its bytes, with the cursor of
/// ``JSONValue/parse(_:)``, but without building a ``JSONValue`` of it: for the lines a run
/// reads by the thousand whose members are known, a worker's ``TimelineMark``s. Keys are
/// matched against `StaticString`s byte by byte (`case "ref":`), integers are read from their
/// digits, and only a string member becomes a `String`.
struct JSONMembers: ~Copyable {
  private var reader: JSONReader
  private var started = false
  private var ended = false

  private init(_ bytes: UnsafeBufferPointer<UInt8>) { reader = JSONReader(bytes: bytes) }

  /// Reads the object `bytes` hold with `read`, which takes its members in turn
  /// (``nextKey()``, then the value) and may stop early; what `read` returns. When `read`
  /// reached the object's end, nothing but whitespace may follow it.
  /// - Throws: what `read` throws; ``EventDecodingError`` when `bytes` are not one JSON object.
  static func read<Result>(_ bytes: some Collection<UInt8>, _ read: (inout JSONMembers) throws -> Result) throws -> Result {
    func readAll(_ buffer: UnsafeBufferPointer<UInt8>) throws -> Result {
      var members = JSONMembers(buffer)
      let result = try read(&members)
      try members.end()
      return result
    }
    if let result = try bytes.withContiguousStorageIfAvailable({ try readAll($0) }) { return result }
    return try Array(bytes).withUnsafeBufferPointer { try readAll($0) }
  }

  /// The next member's key, its value to be read next; nil after the last member.
  /// - Throws: ``EventDecodingError`` when the text is not an object's members.
  mutating func nextKey() throws -> JSONKey? {
    reader.skipWhitespace()
    if !started {
      started = true
      guard reader.consume(UInt8(ascii: "{")) else { throw Self.notAnObject }
      reader.skipWhitespace()
      if reader.consume(UInt8(ascii: "}")) { return endOfObject() }
    } else {
      if reader.consume(UInt8(ascii: "}")) { return endOfObject() }
      guard reader.consume(UInt8(ascii: ",")) else { throw Self.notAnObject }
      reader.skipWhitespace()
    }
    let key = try readKey()
    reader.skipWhitespace()
    guard reader.consume(UInt8(ascii: ":")) else { throw Self.notAnObject }
    return key
  }

  /// A key, its opening quote next: its bytes as they are when it has no escape (the common
  /// case, no `String` made), else what it decodes to.
  private mutating func readKey() throws -> JSONKey {
    let bytes = reader.bytes
    guard reader.position < bytes.count, bytes[reader.position] == UInt8(ascii: "\"") else { throw Self.notAnObject }
    var end = reader.position + 1
    while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"), bytes[end] >= 0x20 { end += 1 }
    if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
      defer { reader.position = end + 1 }
      return JSONKey(raw: UnsafeBufferPointer(rebasing: bytes[(reader.position + 1)..<end]))
    }
    guard let decoded = reader.string() else { throw Self.notAnObject }
    return JSONKey(decoded: decoded)
  }

  /// The current member's value, a string.
  /// - Throws: ``EventDecodingError`` naming `key` when it is not one.
  mutating func string(_ key: StaticString) throws -> String {
    reader.skipWhitespace()
    guard reader.position < reader.bytes.count, reader.bytes[reader.position] == UInt8(ascii: "\""),
          let text = reader.string() else { throw Self.wrongType(key) }
    return text
  }

  /// The current member's value, an integer written without a fraction or an exponent, that
  /// fits in 64 bits.
  /// - Throws: ``EventDecodingError`` naming `key` when it is not one.
  mutating func integer(_ key: StaticString) throws -> Int64 {
    reader.skipWhitespace()
    let negative = reader.consume(UInt8(ascii: "-"))
    let start = reader.position
    guard reader.digits() > 0, reader.bytes[start] != UInt8(ascii: "0") || reader.position == start + 1 else {
      throw Self.wrongType(key)
    }
    var value: Int64 = 0
    for byte in reader.bytes[start..<reader.position] {
      let digit = Int64(byte - UInt8(ascii: "0"))
      let (times10, overflowed) = value.multipliedReportingOverflow(by: 10)
      let (sum, overflowedAgain) = negative ? times10.subtractingReportingOverflow(digit) : times10.addingReportingOverflow(digit)
      guard !overflowed, !overflowedAgain else { throw Self.wrongType(key) }
      value = sum
    }
    // A fraction or an exponent makes it a number of another kind.
    if reader.position < reader.bytes.count {
      switch reader.bytes[reader.position] {
      case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): throw Self.wrongType(key)
      default: break
      }
    }
    return value
  }

  /// Reads past the current member's value, whatever it is.
  /// - Throws: ``EventDecodingError`` when it is not JSON.
  mutating func skipValue() throws {
    guard reader.value(depth: 1) != nil else { throw Self.notAnObject }
  }

  private mutating func endOfObject() -> JSONKey? {
    ended = true
    return nil
  }

  /// After the object's end: nothing but whitespace may follow it.
  private mutating func end() throws {
    guard ended else { return }
    reader.skipWhitespace()
    guard reader.position == reader.bytes.count else { throw Self.notAnObject }
  }

  private static var notAnObject: EventDecodingError { EventDecodingError(reason: "not a JSON object") }

  static func wrongType(_ key: StaticString) -> EventDecodingError {
    EventDecodingError(reason: "field \(key) has the wrong type")
  }

  static func missing(_ key: StaticString) -> EventDecodingError {
    EventDecodingError(reason: "missing field \(key)")
  }
}

/// A member's key as ``JSONMembers`` reads it: its bytes in the text, or what a key written
/// with escapes decodes to. Valid only inside the ``JSONMembers/read(_:_:)`` that read it.
struct JSONKey {
  private let raw: UnsafeBufferPointer<UInt8>?
  private let decoded: String?

  fileprivate init(raw: UnsafeBufferPointer<UInt8>) { (self.raw, decoded) = (raw, nil) }
  fileprivate init(decoded: String) { (raw, self.decoded) = (nil, decoded) }

  /// Whether the key is `name`: `case "ref":` in a `switch` over keys.
  static func ~= (name: StaticString, key: JSONKey) -> Bool {
    let expected = UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
    guard let raw = key.raw else { return key.decoded.map { $0.utf8.elementsEqual(expected) } ?? false }
    return raw.count == expected.count && (raw.isEmpty || memcmp(raw.baseAddress!, expected.baseAddress!, raw.count) == 0)
  }
}
