extension ChannelRecord {
  /// Reads one line of the channel (without its newline), as ``encoded()`` writes a record.
  /// A string's invalid UTF-8, if any, reads as U+FFFD; members it does not know are skipped.
  /// - Throws: ``ChannelRecordError``: ``ChannelRecordError/notARecord`` for a line that is
  ///   not the library's (it does not begin `{"v":`), else why the record is refused.
  package init(decoding line: ArraySlice<UInt8>) throws(ChannelRecordError) {
    self = try line.withUnsafeBufferPointer { line in
      Result { () throws(ChannelRecordError) in try Self(reading: line) }
    }.get()
  }

  private init(reading line: UnsafeBufferPointer<UInt8>) throws(ChannelRecordError) {
    var reader = ObjectReader(line)
    // The library's records before they had versions began so.
    if reader.skip(#"{"record":"#) { throw .unknownVersion("") }
    guard reader.skip(#"{"v":"#) else { throw .notARecord }
    let version = reader.token()
    guard version.elementsEqual("\(Self.version)".utf8) else {
      throw .unknownVersion(String(decoding: version.prefix(40), as: UTF8.self))
    }
    let fields = try Fields(try reader.members())
    switch fields.kind {
    case "classStarted": self = .classStarted(try fields.string("class"))
    case "classEnded": self = .classEnded(try fields.string("class"))
    case "started": self = .started(test: try fields.string("test"))
    case "issue":
      let place: IssuePlace
      if try fields.optional("thrown", "a Boolean", \.bool) == true {
        place = .thrown
      } else if let file = try fields.optional("file", "a string", \.string) {
        place = .file(file, line: try fields.integer("line"))
      } else {
        place = .unknown
      }
      self = .issue(test: try fields.string("test"), message: try fields.string("message"), place: place)
    case "ended":
      let outcome: Outcome
      switch try fields.string("outcome") {
      case "passed": outcome = .passed
      case "failed": outcome = .failed
      case "skipped": outcome = .skipped(reason: try fields.optional("skipReason", "a string", \.string) ?? "")
      case let other: throw .malformed("the ended record's outcome \"\(other)\" is none of passed, failed, skipped")
      }
      self = .ended(test: try fields.string("test"), outcome: outcome,
                    duration: try fields.required("duration", "a number", \.double),
                    failures: try fields.integer("failures"), unexpected: try fields.integer("unexpected"))
    case "children":
      self = .children(try fields.required("processes", "a list of strings", \.strings))
    case "schedule":
      guard let hash = UInt64(try fields.string("hash"), radix: 16) else {
        throw .malformed("the schedule record's \"hash\" is not hexadecimal")
      }
      self = .schedule(
        steps: try fields.integer("steps"), hash: hash, jobs: try fields.integer("jobs"), outside: try fields.integer("outside"),
        firstOutsideStep: try fields.optional("firstOutsideStep", "an integer", \.integer),
        escapedAt: try fields.optional("escapedAt", "an integer", \.integer),
        hookedAt: try fields.optional("hookedAt", "an integer", \.integer))
    case "step":
      self = .step(try fields.integer("step"), ran: try fields.string("ran"), virtualTime: try fields.integer("virtualTime"))
    case "stuck":
      self = .stuck(virtualTime: try fields.integer("virtualTime"))
    case "declared":
      self = .declared(test: try fields.string("test"), suite: try fields.required("suite", "a Boolean", \.bool),
                       serialized: try fields.required("serialized", "a Boolean", \.bool))
    case "discovered":
      self = .discovered(tests: try fields.integer("tests"))
    case let other:
      throw .unknownKind(other)
    }
  }
}

/// The value of a member of a record: records hold no nested object.
private enum JSONScalar {
  case string(String)
  /// A number, as written.
  case number(String)
  case bool(Bool)
  case null
  case strings([String])

  var string: String? { if case .string(let text) = self { text } else { nil } }
  var integer: Int? { if case .number(let text) = self { Int(text) } else { nil } }
  var int64: Int64? { if case .number(let text) = self { Int64(text) } else { nil } }
  var double: Double? { if case .number(let text) = self { Double(text) } else { nil } }
  var bool: Bool? { if case .bool(let flag) = self { flag } else { nil } }
  var strings: [String]? { if case .strings(let strings) = self { strings } else { nil } }
}

/// A record's members, by name (the last of a name wins), and the record's name.
private struct Fields {
  let members: [(name: String, value: JSONScalar)]
  /// The value of `"record"`.
  let kind: String

  init(_ members: [(name: String, value: JSONScalar)]) throws(ChannelRecordError) {
    self.members = members
    guard case .string(let kind)? = members.last(where: { $0.name == "record" })?.value else {
      throw .malformed("it has no string \"record\" naming it")
    }
    self.kind = kind
  }

  /// The value of `name`, `what` it should be, as `read` reads it; `nil` when it is missing
  /// or `null`.
  /// - Throws: ``ChannelRecordError/malformed(_:)`` when it is there but is not `what`.
  func optional<Value>(_ name: String, _ what: String, _ read: (JSONScalar) -> Value?) throws(ChannelRecordError) -> Value? {
    guard let value = members.last(where: { $0.name == name })?.value else { return nil }
    if case .null = value { return nil }
    guard let read = read(value) else { throw .malformed("the \(kind) record's \"\(name)\" is not \(what)") }
    return read
  }

  /// The value of `name`, `what` it should be, as `read` reads it.
  /// - Throws: ``ChannelRecordError/malformed(_:)`` when it is missing or is not `what`.
  func required<Value>(_ name: String, _ what: String, _ read: (JSONScalar) -> Value?) throws(ChannelRecordError) -> Value {
    guard let value = try optional(name, what, read) else { throw .malformed("the \(kind) record lacks \(what) \"\(name)\"") }
    return value
  }

  func string(_ name: String) throws(ChannelRecordError) -> String { try required(name, "a string", \.string) }
  func integer(_ name: String) throws(ChannelRecordError) -> Int { try required(name, "an integer", \.integer) }
  func integer(_ name: String) throws(ChannelRecordError) -> Int64 { try required(name, "an integer", \.int64) }
}

/// Reads the members of one flat JSON object, as ``ObjectWriter`` writes them (no spaces).
private struct ObjectReader {
  private let bytes: UnsafeBufferPointer<UInt8>
  private var index = 0

  init(_ bytes: UnsafeBufferPointer<UInt8>) {
    self.bytes = bytes
  }

  /// Skips `text` when the bytes go on with it.
  mutating func skip(_ text: StaticString) -> Bool {
    let count = text.utf8CodeUnitCount
    guard bytes.count - index >= count,
      bytes[index..<index + count].elementsEqual(UnsafeBufferPointer(start: text.utf8Start, count: count))
    else { return false }
    index += count
    return true
  }

  /// The bytes up to the next `,` or `}` (a number, as written).
  mutating func token() -> Slice<UnsafeBufferPointer<UInt8>> {
    let start = index
    while index < bytes.count, bytes[index] != UInt8(ascii: ","), bytes[index] != UInt8(ascii: "}") { index += 1 }
    return bytes[start..<index]
  }

  /// The members after the first (the version), through the object's end, which ends the line.
  mutating func members() throws(ChannelRecordError) -> [(name: String, value: JSONScalar)] {
    var members: [(name: String, value: JSONScalar)] = []
    while skip(",") {
      let name = try string()
      guard skip(":") else { throw .malformed("a member \"\(name.prefix(40))\" has no colon") }
      members.append((name, try value()))
    }
    guard skip("}"), index == bytes.count else { throw .malformed("the object does not end where the line does") }
    return members
  }

  private mutating func value() throws(ChannelRecordError) -> JSONScalar {
    guard index < bytes.count else { throw .malformed("a member has no value") }
    switch bytes[index] {
    case UInt8(ascii: "\""): return .string(try string())
    case UInt8(ascii: "["):
      index += 1
      var strings: [String] = []
      if skip("]") { return .strings(strings) }
      repeat { strings.append(try string()) } while skip(",")
      guard skip("]") else { throw .malformed("a list holds something other than strings") }
      return .strings(strings)
    default:
      if skip("true") { return .bool(true) }
      if skip("false") { return .bool(false) }
      if skip("null") { return .null }
      let number = token()
      guard !number.isEmpty, number.allSatisfy({ Self.numberBytes.contains($0) }) else {
        throw .malformed("a value is neither a string, a list of strings, a number, true, false nor null")
      }
      return .number(String(decoding: number, as: UTF8.self))
    }
  }

  /// The bytes a JSON number is written with.
  private static let numberBytes = Set("0123456789+-.eE".utf8)

  /// A JSON string. One without escapes is read straight from the line.
  private mutating func string() throws(ChannelRecordError) -> String {
    guard skip("\"") else { throw .malformed("a string was expected") }
    let start = index
    while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\"), bytes[index] >= 0x20 {
      index += 1
    }
    guard index < bytes.count else { throw .malformed("a string does not end") }
    if bytes[index] == UInt8(ascii: "\"") {
      index += 1
      return String(decoding: bytes[start..<index - 1], as: UTF8.self)
    }
    var decoded = Array(bytes[start..<index])
    while index < bytes.count {
      let byte = bytes[index]
      index += 1
      switch byte {
      case UInt8(ascii: "\""): return String(decoding: decoded, as: UTF8.self)
      case UInt8(ascii: "\\"):
        guard JSONEscape.read(bytes, at: &index, into: &decoded) else {
          throw .malformed("a string holds an escape JSON does not know, or a surrogate alone")
        }
      case ..<0x20: throw .malformed("a string holds a control character unescaped")
      default: decoded.append(byte)
      }
    }
    throw .malformed("a string does not end")
  }
}
