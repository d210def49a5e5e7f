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
  /// A listing's: the bundle declares the Swift Testing test or suite `test` (its ID, as the
  /// event stream spells it), which carries `.serialized` itself or not.
  case declared(test: String, suite: Bool, serialized: Bool)
  /// A listing's, after its `declared` records: the bundle declares this many tests and suites
  /// in all. Without it, what the bundle declares is not known.
  case discovered(tests: Int)

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
    case .declared: "declared"
    case .discovered: "discovered"
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
    case .declared(let test, let suite, let serialized):
      object.string("test", test)
      object.member("suite", raw: "\(suite)")
      object.member("serialized", raw: "\(serialized)")
    case .discovered(let tests):
      object.integer("tests", tests)
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
