// The records of the channel between `harness test` and the library it preloads into a
// package's test bundle, compiled twice from this one source: into the module
// AsyncHarnessShared, whose decoder the harness reads the channel with
// (Executors/Bundle/BundleChannelReader.swift), and, as text embedded in AsyncHarness, into
// the library, whose encoder writes them (ExistingTests/BundleChannel/). It imports nothing,
// Foundation least of all: the library is loaded into every test bundle.

/// One record the library preloaded into a test bundle writes on its channel: one line of
/// JSON, an object whose first member is the version, `"v"`, and whose second names the
/// record, `{"v":1,"record":"started","test":"Module.Class/testA"}`. Swift Testing's own event
/// records share the channel of a Swift Testing bundle; none of them begins `{"v":`.
///
/// A record is written by ``encoded()`` and read by ``init(decoding:)``, and by nothing else.
package enum ChannelRecord: Equatable, Sendable {
  /// The version of the records this source writes and reads, carried by every record. A
  /// record of another version is refused by name (``ChannelRecordError/unknownVersion(_:)``):
  /// raise it whenever a record's fields or their meaning change.
  package static let version = 1

  /// XCTest began a class (`Module.Class`): its `class func setUp()` runs next.
  case classStarted(String)
  /// XCTest ended a class: its tests and its `class func tearDown()` ran.
  case classEnded(String)
  /// An XCTest test began, by its ID as the bundle lists it (`Module.Class/method`).
  case started(test: String)
  /// An XCTest test failed, at `place`.
  case issue(test: String, message: String, place: IssuePlace)
  /// An XCTest test ended, as XCTest judged it, after `duration` seconds, with the failures
  /// and unexpected errors XCTest counted.
  case ended(test: String, outcome: Outcome, duration: Double, failures: Int, unexpected: Int)
  /// The child processes running as the test whose end comes next ended (`PID (command line)`).
  case children([String])
  /// Under a schedule, the steps taken up to the test's end that comes next: how many, the
  /// hash of their choices, of how many `jobs`, `outside` of them sent from threads the
  /// schedule does not run while its own work ran (the first before `firstOutsideStep`);
  /// `escapedAt`, the step whose job kept the schedule's thread (Swift's own executors ran
  /// every job after it); `hookedAt`, the step after which the test's own executor hook took
  /// its jobs.
  case schedule(steps: Int, hash: UInt64, jobs: Int, outside: Int, firstOutsideStep: Int?, escapedAt: Int?, hookedAt: Int?)
  /// Under a schedule and `--trace`, the running test's step `number` ran a job of `ran`
  /// (`task #3`) at `virtualTime` nanoseconds.
  case step(Int, ran: String, virtualTime: Int64)
  /// Under a schedule, the running test's work has nothing left to run, nothing due and
  /// nothing arriving, at `virtualTime` nanoseconds.
  case stuck(virtualTime: Int64)

  /// Where an XCTest failure was.
  package enum IssuePlace: Equatable, Sendable {
    /// The test threw an error.
    case thrown
    /// An assertion at this file and line.
    case file(String, line: Int)
    /// XCTest did not say.
    case unknown
  }

  /// XCTest's verdict on a test.
  package enum Outcome: Equatable, Sendable {
    case passed, failed
    /// Skipped (`XCTSkip`), with its reason (empty when none was found).
    case skipped(reason: String)
  }

  /// The record's name: the value of its `"record"` member.
  package var kind: String {
    switch self {
    case .classStarted: "classStarted"
    case .classEnded: "classEnded"
    case .started: "started"
    case .issue: "issue"
    case .ended: "ended"
    case .children: "children"
    case .schedule: "schedule"
    case .step: "step"
    case .stuck: "stuck"
    }
  }
}

/// Why a line of the channel is not read as a ``ChannelRecord``.
package enum ChannelRecordError: Error, Equatable, CustomStringConvertible {
  /// The line does not begin `{"v":`: not a record of the library (Swift Testing's own
  /// event records share a Swift Testing bundle's channel).
  case notARecord
  /// A record of a version this source does not read, as the line spells it (empty for a
  /// record of none, as the library wrote them before they had versions).
  case unknownVersion(String)
  /// A record of this version whose `"record"` names no record this source knows.
  case unknownKind(String)
  /// A record of this version that is not well formed, and why.
  case malformed(String)

  package var description: String {
    switch self {
    case .notARecord:
      "not a record of the preloaded library (it does not begin {\"v\":)"
    case .unknownVersion(let version):
      "a record \(version.isEmpty ? "without a version" : "of version \(version)"), which this harness does not read "
        + "(it reads version \(ChannelRecord.version): the library is not the harness's own)"
    case .unknownKind(let kind):
      "a record of an unknown kind, \"\(kind)\" (version \(ChannelRecord.version) has no such record)"
    case .malformed(let reason):
      "a malformed record: \(reason)"
    }
  }
}

// MARK: - Writing

extension ChannelRecord {
  /// The record as one line of JSON, without its newline: the version first, then its name,
  /// then its fields. Any string is written exactly (quotes, backslashes and control
  /// characters escaped; every other byte of its UTF-8 as it is).
  package func encoded() -> [UInt8] {
    var object = ObjectWriter(kind: kind)
    switch self {
    case .classStarted(let name), .classEnded(let name):
      object.string("class", name)
    case .started(let test):
      object.string("test", test)
    case .issue(let test, let message, let place):
      object.string("test", test)
      object.string("message", message)
      switch place {
      case .thrown: object.member("thrown", raw: "true")
      case .file(let file, let line):
        object.string("file", file)
        object.integer("line", line)
      case .unknown: break
      }
    case .ended(let test, let outcome, let duration, let failures, let unexpected):
      object.string("test", test)
      switch outcome {
      case .passed: object.string("outcome", "passed")
      case .failed: object.string("outcome", "failed")
      case .skipped: object.string("outcome", "skipped")
      }
      object.member("duration", raw: duration.isFinite ? "\(duration)" : "0")
      object.integer("failures", failures)
      object.integer("unexpected", unexpected)
      if case .skipped(let reason) = outcome { object.string("skipReason", reason) }
    case .children(let processes):
      object.key("processes")
      object.bytes.append(UInt8(ascii: "["))
      for (index, process) in processes.enumerated() {
        if index > 0 { object.bytes.append(UInt8(ascii: ",")) }
        object.quoted(process)
      }
      object.bytes.append(UInt8(ascii: "]"))
    case .schedule(let steps, let hash, let jobs, let outside, let firstOutsideStep, let escapedAt, let hookedAt):
      object.integer("steps", steps)
      object.string("hash", String(hash, radix: 16))
      object.integer("jobs", jobs)
      object.integer("outside", outside)
      if let step = firstOutsideStep { object.integer("firstOutsideStep", step) }
      if let step = escapedAt { object.integer("escapedAt", step) }
      if let step = hookedAt { object.integer("hookedAt", step) }
    case .step(let number, let ran, let virtualTime):
      object.integer("step", number)
      object.string("ran", ran)
      object.integer("virtualTime", virtualTime)
    case .stuck(let virtualTime):
      object.integer("virtualTime", virtualTime)
    }
    object.bytes.append(UInt8(ascii: "}"))
    return object.bytes
  }
}

/// Writes one JSON object's members, in order, into bytes.
private struct ObjectWriter {
  var bytes: [UInt8] = []

  /// An object begun with the version and the record's name.
  init(kind: String) {
    bytes.reserveCapacity(128)
    bytes += #"{"v":\#(ChannelRecord.version),"record":"#.utf8
    quoted(kind)
  }

  /// `,"key":`
  mutating func key(_ key: String) {
    bytes.append(UInt8(ascii: ","))
    quoted(key)
    bytes.append(UInt8(ascii: ":"))
  }

  mutating func member(_ key: String, raw value: String) {
    self.key(key)
    bytes += value.utf8
  }

  mutating func string(_ key: String, _ value: String) {
    self.key(key)
    quoted(value)
  }

  mutating func integer(_ key: String, _ value: some BinaryInteger) {
    member(key, raw: String(value))
  }

  /// `text` as a JSON string: `"` and `\` escaped, control characters as `\n`, `\r`, `\t` or
  /// `\u00XX`; every other byte as it is (a Swift string's UTF-8 is always valid).
  mutating func quoted(_ text: String) {
    let hex = Array("0123456789abcdef".utf8)
    bytes.reserveCapacity(bytes.count + text.utf8.count + 2)
    bytes.append(UInt8(ascii: "\""))
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), byte]
      case UInt8(ascii: "\n"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
      case UInt8(ascii: "\r"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
      case UInt8(ascii: "\t"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
      case ..<0x20: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)],
                              hex[Int(byte & 0xF)]]
      default: bytes.append(byte)
      }
    }
    bytes.append(UInt8(ascii: "\""))
  }
}

// MARK: - Reading

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
