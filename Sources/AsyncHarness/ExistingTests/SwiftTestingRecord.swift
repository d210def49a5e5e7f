import Foundation

/// One line of a Swift Testing event stream (`--event-stream-output-path PATH
/// --event-stream-version V`), of version 0 or 6.3: a declared test (`kind` `test`) or an
/// event (`kind` `event`).
/// The one reader of those records: `harness test`'s Swift Testing worker
/// (``BundleExecutor``) reads them as a test bundle writes them, and AsyncHarnessJUnit's
/// `convertSwiftTestingEvents` reads a whole stream; both take their meaning from one decoder
/// (``SwiftTestingDecoder``). See docs/RUNNING-EXISTING-TESTS.md for the format as measured.
package struct SwiftTestingRecord: Sendable {
  /// The record's version as written: `0`, or `6.3.0` for a stream asked for as `6.3`
  /// (``SwiftTestingRecord/runVersion``); this reader understands those two
  /// (``isReadable``).
  package var version: String
  /// `test` or `event`.
  package var kind: String
  /// The test or the event.
  package var payload: Payload

  /// The version of the stream the harness asks Swift Testing for when it runs tests (`harness
  /// test`'s workers, `harness-junit swift-test`): the oldest that runs tests as `swift test`
  /// runs them. An older version (0) turns warnings off inside the run: Swift Testing then
  /// hands a test's `Issue.record(…, severity: .warning)` to no issue handler
  /// (`IssueHandlingTrait`), so a test that counts its warnings fails where `swift test`
  /// passes it. Its underscored fields (a skip's comments, a thrown error, a test case's
  /// arguments) come only with `SWT_EXPERIMENTAL_EVENT_STREAM_FIELDS_ENABLED` set
  /// (``experimentalFieldsVariable``).
  package static let runVersion = "6.3"

  /// The variable that asks Swift Testing for its stream's underscored fields in version 6.3.
  package static let experimentalFieldsVariable = "SWT_EXPERIMENTAL_EVENT_STREAM_FIELDS_ENABLED"

  /// Whether this reader understands the record's version: 0, or 6.3 (`6.3.0`), whose records
  /// are version 0's with more fields (an issue's `severity` and `isFailure`, a warning's
  /// `issueRecorded`).
  package var isReadable: Bool {
    version == "0" || version == Self.runVersion || version.hasPrefix(Self.runVersion + ".")
  }

  /// Reads one line, with the core's JSON reader (``JSONValue``), as events and marks are read.
  /// - Throws: ``EventDecodingError`` when the line is not a record.
  package init(line: some Collection<UInt8>) throws {
    guard let value = JSONValue.parse(line) else { throw EventDecodingError(reason: "the line is not one JSON value") }
    try self.init(JSONFields(value))
  }

  /// Reads a record from its JSON object's fields.
  /// - Throws: ``EventDecodingError`` when a field is missing or has the wrong type.
  init(_ fields: JSONFields) throws {
    switch fields.optional("version") {
    case .string(let text)?: version = text
    case .number?: version = String(try fields.number("version", as: Int.self))
    default: throw fields.wrongType("version")
    }
    kind = try fields.string("kind")
    payload = try Payload(fields.object("payload"))
  }

  /// The one rule for the suite that encloses a Swift Testing test or suite, which `harness
  /// test`'s listing and AsyncHarnessJUnit's converter both follow: the closest of `suites`
  /// (IDs) that `id` goes on after with `/` or `.` (`Module.Suite/test()/…`,
  /// `Module.Suite/Nested`); `nil` for a test outside any suite (it goes under its module,
  /// `module(ofTestAt:id:)`).
  package static func enclosingSuite(of id: String, among suites: some Sequence<String>) -> String? {
    suites.filter { encloses($0, id) }.max { $0.count < $1.count }
  }

  /// The type a test function of ID `id` (`Module.Type/name()/File.swift:line:column`) is
  /// declared in (`Module.Type`; `Module.Outer/Inner` for a nested one), `nil` for a function
  /// outside any type. Swift Testing runs such a type as a suite even without `@Suite`, but its
  /// listing declares only the suites written so. `name` is the function's, which may hold `/`
  /// (an operator, `/(lhs:rhs:)`).
  package static func type(ofFunction id: String, named name: String) -> String? {
    guard let location = id.lastIndex(of: "/"), id[..<location].hasSuffix("/" + name) else { return nil }
    return String(id[..<location].dropLast(name.count + 1))
  }

  /// Whether the suite `suite` encloses the test or suite `id`.
  package static func encloses(_ suite: String, _ id: String) -> Bool {
    id.count > suite.count && id.hasPrefix(suite) && ["/", "."].contains(id[id.index(id.startIndex, offsetBy: suite.count)])
  }

  /// The module of a test outside any suite: the first component of its file ID, else of its ID.
  package static func module(ofTestAt location: SourceLocation?, id: String) -> String {
    location?.fileID.split(separator: "/").first.map(String.init) ?? id.split(separator: ".").first.map(String.init) ?? id
  }

  /// The fields of a test or an event that the harness reads; the rest is ignored.
  package struct Payload: Sendable {
    package var id: String?
    package var kind: String?
    package var name: String?
    /// A test's or suite's display name (`@Test("Adds two amounts")`), when it has one.
    package var displayName: String?
    /// Whether a test function takes arguments (`@Test(arguments:)`).
    package var isParameterized: Bool?
    package var sourceLocation: Location?
    package var instant: Instant?
    package var testID: String?
    package var messages: [Message]?
    package var issue: RecordedIssue?
    package var comments: [String]?
    package var testCase: TestCase?
    /// The value a `valueAttached` event attached.
    package var attachment: Attachment?

    init(_ fields: JSONFields) throws {
      id = try fields.optionalString("id")
      kind = try fields.optionalString("kind")
      name = try fields.optionalString("name")
      displayName = try fields.optionalString("displayName")
      switch fields.optional("isParameterized") {
      case .bool(let parameterized)?: isParameterized = parameterized
      case nil: isParameterized = nil
      default: throw fields.wrongType("isParameterized")
      }
      sourceLocation = try fields.optionalObject("sourceLocation").map(Location.init)
      instant = try fields.optionalObject("instant").map { Instant(since1970: try $0.number("since1970")) }
      testID = try fields.optionalString("testID")
      messages = try fields.optional("messages") == nil ? nil : fields.array("messages") { value, path in
        let message = try JSONFields(value, path: path)
        return Message(symbol: try message.string("symbol"), text: try message.string("text"))
      }
      issue = try fields.optionalObject("issue").map(RecordedIssue.init)
      comments = try fields.optional("_comments") == nil ? nil : fields.array("_comments") { value, path in
        guard case .string(let text) = value else { throw EventDecodingError.wrongType(path) }
        return text
      }
      testCase = try fields.optionalObject("_testCase").map { TestCase(displayName: try $0.optionalString("displayName")) }
      attachment = try fields.optionalObject("attachment").map { attachment in
        Attachment(name: try attachment.optionalString("_preferredName"), path: try attachment.optionalString("path"),
                   sourceLocation: try fields.optionalObject("_sourceLocation").map(Location.init))
      }
    }

    /// When an event happened.
    package struct Instant: Sendable {
      package var since1970: Double
    }

    /// A line of an event's message, with the symbol Swift Testing shows before it.
    package struct Message: Sendable {
      package var symbol: String
      package var text: String
    }

    /// The issue of an `issueRecorded` event.
    package struct RecordedIssue: Sendable {
      package var isKnown: Bool?
      package var severity: String?
      package var sourceLocation: Location?
      package var error: ThrownError?

      init(_ fields: JSONFields) throws {
        switch fields.optional("isKnown") {
        case .bool(let known)?: isKnown = known
        case nil, .null?: isKnown = nil
        default: throw fields.wrongType("isKnown")
        }
        severity = try fields.optionalString("severity")
        sourceLocation = try fields.optionalObject("sourceLocation").map(Location.init)
        error = try fields.optionalObject("_error").map { ThrownError(description: try $0.optionalString("description")) }
      }
    }

    /// An error a test threw.
    package struct ThrownError: Sendable {
      package var description: String?
    }

    /// A value a test attached (`Attachment.record`): its name, the path Swift Testing saved it
    /// at (with `--attachments-path`), and where it was attached, when the stream says.
    package struct Attachment: Sendable {
      package var name: String?
      package var path: String?
      package var sourceLocation: Location?
    }

    /// The case of a parameterized test an event belongs to.
    package struct TestCase: Sendable {
      /// The case's arguments as Swift Testing shows them (`"a", 10`).
      package var displayName: String?
    }

    /// The reason a `testSkipped` event gives (its comments), or `nil` when it gives none.
    package var skipReason: String? {
      let comments = comments ?? []
      return comments.isEmpty ? nil : comments.joined(separator: "; ")
    }

    /// The issue an `issueRecorded` event carries: its messages (the first, then the
    /// details after ` - `), the arguments of a parameterized test's case, and its kind. A
    /// known issue (`withKnownIssue`) and a warning do not fail a test: they are warnings,
    /// a known issue's message prefixed `known issue: `.
    package var recordedIssue: Issue? {
      guard let issue else { return nil }
      let texts = messages ?? []
      let details = texts.filter { $0.symbol == "details" }.map(\.text)
      var message = texts.first { $0.symbol != "details" }?.text ?? issue.error?.description ?? "an issue was recorded"
      if !details.isEmpty { message += " - " + details.joined(separator: " - ") }
      if let arguments = testCase?.displayName { message += " (arguments: \(arguments))" }
      let kind: Issue.Kind =
        if issue.isKnown == true { .warning }
        else if issue.severity == "warning" { .warning }
        else if issue.error != nil { .errorThrown }
        else { .expectationFailed }
      if issue.isKnown == true { message = "known issue: " + message }
      return Issue(kind: kind, message: message, sourceLocation: issue.sourceLocation?.location)
    }

    /// What a `valueAttached` event says, as an issue that fails nothing
    /// (``Issue/Kind/attachment``): Swift Testing's words (`Attached 'log.txt' to parses().`),
    /// then `; saved as PATH` when it was saved, and the arguments of a parameterized test's
    /// case, as an issue names them (`(arguments: 2)`).
    package var attachedIssue: Issue? {
      guard let attachment else { return nil }
      var message = messages?.first?.text ?? "Attached '\(attachment.name ?? "a value")'."
      if let path = attachment.path { message = (message.hasSuffix(".") ? String(message.dropLast()) : message) + "; saved as \(path)" }
      if let arguments = testCase?.displayName { message += " (arguments: \(arguments))" }
      return Issue(kind: .attachment, message: message, sourceLocation: attachment.sourceLocation?.location)
    }
  }

  /// Where a test or an issue is.
  package struct Location: Sendable {
    package var fileID: String
    package var filePath: String?
    package var line: Int
    package var column: Int

    init(_ fields: JSONFields) throws {
      fileID = try fields.string("fileID")
      filePath = try fields.optionalString("_filePath") ?? fields.optionalString("filePath")
      line = try fields.number("line")
      column = try fields.number("column")
    }

    /// The location, its path the file ID when the stream gives none.
    package var location: SourceLocation {
      SourceLocation(fileID: fileID, filePath: filePath ?? fileID, line: line, column: column)
    }
  }
}

/// What one record of a Swift Testing event stream means to the harness: each kind of record
/// has this one meaning, which `harness test`'s listing (``ExistingTest``'s
/// `swiftTestingListing`), its Swift Testing worker (``BundleChannelReader``) and
/// AsyncHarnessJUnit's converter all act on (``SwiftTestingDecoder``), so that a test
/// gets one verdict whichever of them reads it.
package enum SwiftTestingEvent: Equatable, Sendable {
  /// A test or suite the stream declares (`kind` `test`).
  case declared(SwiftTestingDeclaration)
  /// The run began (`runStarted`).
  case runStarted
  /// The run ended (`runEnded`).
  case runEnded
  /// A test or suite began (`testStarted`).
  case started(String)
  /// A test or suite was skipped and never ran (`testSkipped`: a disabled test, an unmet
  /// condition), with its reason (its comments) when it gives one.
  case skipped(String, reason: String?)
  /// A test or a suite recorded an issue (`issueRecorded`): a known issue and a warning are
  /// warnings (``SwiftTestingRecord/Payload/recordedIssue``).
  case issue(String, Issue)
  /// An issue that names no test (`issueRecorded` without `testID`: Swift Testing's
  /// «unknown», recorded where no test is current, once its test returned).
  case issueOfNoTest(Issue)
  /// A test cancelled itself (`testCancelled`, `Test.cancel`): it ends skipped, with `reason`
  /// (``SwiftTestingDecoder/cancelledReason(_:)``), unless an issue failed it first.
  case cancelled(String, reason: String)
  /// A test or suite ended (`testEnded`): skipped with `skipReason` when it cancelled itself.
  case ended(String, skipReason: String?)
}

/// A test function or suite a Swift Testing stream declares (a `test` record), as the listing
/// (`--list-tests`) and a run's stream both give it.
package struct SwiftTestingDeclaration: Equatable, Sendable {
  /// Its ID: `Module.Suite/name()/File.swift:line:column` for a function, `Module.Suite` for a suite.
  package var id: String
  /// Its name as its library shows it (`parameterized(amount:)`), when the record has one.
  package var name: String?
  package var isSuite: Bool
  /// Where it is declared, when the record says.
  package var location: SourceLocation?
  package var displayName: String?
  package var isParameterized: Bool

  package init(id: String, name: String?, isSuite: Bool, location: SourceLocation?, displayName: String? = nil,
               isParameterized: Bool = false) {
    self.id = id
    self.name = name
    self.isSuite = isSuite
    self.location = location
    self.displayName = displayName
    self.isParameterized = isParameterized
  }
}

/// The one decoder of a Swift Testing event stream's records into their meaning
/// (``SwiftTestingEvent``), record by record, as a test bundle writes them or from a file: it
/// remembers the tests that cancelled themselves until they end.
package struct SwiftTestingDecoder: Sendable {
  /// The tests that cancelled themselves and have not ended, with their reasons.
  private var cancelled: [String: String] = [:]

  package init() {}

  /// The reason of a test cancelled with `comment` (its comments, `nil` for none), as
  /// Swift Testing shows it (`➜ Test cancelsItself() was cancelled`): `cancelled: COMMENT`,
  /// or `cancelled`.
  package static func cancelledReason(_ comment: String?) -> String {
    comment.map { "cancelled: \($0)" } ?? "cancelled"
  }

  /// What `record` means, or `nil` for a record of no meaning to the harness (a test case's
  /// start and end, a kind this build does not know).
  package mutating func read(_ record: SwiftTestingRecord) -> SwiftTestingEvent? {
    let payload = record.payload
    if record.kind == "test" {
      guard let id = payload.id else { return nil }
      return .declared(SwiftTestingDeclaration(
        id: id, name: payload.name, isSuite: payload.kind == "suite", location: payload.sourceLocation?.location,
        displayName: payload.displayName, isParameterized: payload.isParameterized == true))
    }
    guard record.kind == "event", let kind = payload.kind else { return nil }
    switch kind {
    case "runStarted": return .runStarted
    case "runEnded": return .runEnded
    default: break
    }
    guard let id = payload.testID else {
      return kind == "issueRecorded" ? payload.recordedIssue.map { .issueOfNoTest($0) } : nil
    }
    switch kind {
    case "testStarted": return .started(id)
    case "testSkipped": return .skipped(id, reason: payload.skipReason)
    case "issueRecorded": return payload.recordedIssue.map { .issue(id, $0) }
    case "valueAttached": return payload.attachedIssue.map { .issue(id, $0) }
    case "testCancelled":
      let reason = Self.cancelledReason(payload.skipReason)
      cancelled[id] = reason
      return .cancelled(id, reason: reason)
    case "testEnded": return .ended(id, skipReason: cancelled.removeValue(forKey: id))
    default: return nil
    }
  }
}
