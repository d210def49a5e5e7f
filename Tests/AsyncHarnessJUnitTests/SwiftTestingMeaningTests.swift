@_spi(ForToolsIntegrationOnly) @testable import AsyncHarness
import Foundation
import XCTest

@testable import AsyncHarnessJUnit

/// Issue 49: one meaning for each kind of Swift Testing record. The same record lines (as the
/// fixture Tests/Fixtures/ExistingTests writes them, Swift 6.3.1) read by `harness test`'s
/// bundle reader and by `harness-junit`'s converter give each test the same verdict and
/// reason: a test that cancelled itself is skipped in both, `cancelled: COMMENT`.
final class SwiftTestingMeaningTests: ReportTestCase {
  private static let suite = "LedgerTests.OtherEnds"
  private static let cancels = "LedgerTests.OtherEnds/cancelsItself()/RunLikeSwiftTest.swift:51:4"
  private static let silent = "LedgerTests.OtherEnds/cancelsSilently()/RunLikeSwiftTest.swift:55:4"
  private static let failsThenCancels = "LedgerTests.OtherEnds/failsThenCancels()/RunLikeSwiftTest.swift:59:4"
  private static let passes = "LedgerTests.OtherEnds/passes()/RunLikeSwiftTest.swift:63:4"

  private static func declaration(_ id: String, name: String, kind: String = "function", line: Int) -> String {
    #"{"kind":"test","payload":{"id":"\#(id.replacingOccurrences(of: "/", with: "\\/"))","kind":"\#(kind)","name":"\#(name)","#
      + #""sourceLocation":{"column":4,"fileID":"LedgerTests\/RunLikeSwiftTest.swift","line":\#(line)}},"version":0}"#
  }

  private static func event(_ kind: String, _ id: String?, at second: Int, extra: String = "") -> String {
    let test = id.map { #","testID":"\#($0.replacingOccurrences(of: "/", with: "\\/"))""# } ?? ""
    return #"{"kind":"event","payload":{\#(extra)"instant":{"absolute":\#(second),"since1970":\#(1_795_680_000 + second)},"#
      + #""kind":"\#(kind)","messages":[]\#(test)},"version":0}"#
  }

  /// The record lines of a run of four tests: one cancels itself with a comment, one without,
  /// one records an issue and then cancels itself, one passes.
  private static let lines: [String] = [
    declaration(suite, name: "OtherEnds", kind: "suite", line: 40),
    declaration(cancels, name: "cancelsItself()", line: 51),
    declaration(silent, name: "cancelsSilently()", line: 55),
    declaration(failsThenCancels, name: "failsThenCancels()", line: 59),
    declaration(passes, name: "passes()", line: 63),
    event("runStarted", nil, at: 0),
    event("testStarted", cancels, at: 1),
    event("testCancelled", cancels, at: 1, extra: #""_comments":["not today"],"#),
    event("testEnded", cancels, at: 1),
    event("testStarted", silent, at: 2),
    event("testCancelled", silent, at: 2),
    event("testEnded", silent, at: 2),
    event("testStarted", failsThenCancels, at: 3),
    #"{"kind":"event","payload":{"instant":{"absolute":3,"since1970":1795680003},"issue":{"isKnown":false,"sourceLocation":{"column":5,"fileID":"LedgerTests\/RunLikeSwiftTest.swift","line":60}},"kind":"issueRecorded","messages":[{"symbol":"fail","text":"Expectation failed: 1 == 2"}],"testID":"LedgerTests.OtherEnds\/failsThenCancels()\/RunLikeSwiftTest.swift:59:4"},"version":0}"#,
    event("testCancelled", failsThenCancels, at: 3, extra: #""_comments":["too late"],"#),
    event("testEnded", failsThenCancels, at: 3),
    event("testStarted", passes, at: 4),
    event("testEnded", passes, at: 4),
    event("runEnded", nil, at: 5),
  ]

  private static let failure = Issue(
    kind: .expectationFailed, message: "Expectation failed: 1 == 2",
    sourceLocation: SourceLocation(fileID: "LedgerTests/RunLikeSwiftTest.swift", filePath: "LedgerTests/RunLikeSwiftTest.swift",
                                   line: 60, column: 5))

  func testTheDecoderGivesEachKindOfRecordOneMeaning() throws {
    var decoder = SwiftTestingDecoder()
    let meanings = try Self.lines.map { try decoder.read(SwiftTestingRecord(line: Array($0.utf8))) }
    let location = { (line: Int) in
      SourceLocation(fileID: "LedgerTests/RunLikeSwiftTest.swift", filePath: "LedgerTests/RunLikeSwiftTest.swift", line: line,
                     column: 4)
    }
    XCTAssertEqual(meanings, [
      .declared(SwiftTestingDeclaration(id: Self.suite, name: "OtherEnds", isSuite: true, location: location(40))),
      .declared(SwiftTestingDeclaration(id: Self.cancels, name: "cancelsItself()", isSuite: false, location: location(51))),
      .declared(SwiftTestingDeclaration(id: Self.silent, name: "cancelsSilently()", isSuite: false, location: location(55))),
      .declared(SwiftTestingDeclaration(id: Self.failsThenCancels, name: "failsThenCancels()", isSuite: false, location: location(59))),
      .declared(SwiftTestingDeclaration(id: Self.passes, name: "passes()", isSuite: false, location: location(63))),
      .runStarted,
      .started(Self.cancels), .cancelled(Self.cancels, reason: "cancelled: not today"),
      .ended(Self.cancels, skipReason: "cancelled: not today"),
      .started(Self.silent), .cancelled(Self.silent, reason: "cancelled"), .ended(Self.silent, skipReason: "cancelled"),
      .started(Self.failsThenCancels), .issue(Self.failsThenCancels, Self.failure),
      .cancelled(Self.failsThenCancels, reason: "cancelled: too late"),
      .ended(Self.failsThenCancels, skipReason: "cancelled: too late"),
      .started(Self.passes), .ended(Self.passes, skipReason: nil),
      .runEnded,
    ])
  }

  func testACancelledTestIsSkippedWithTheSameReasonByTheBundleReaderAndByHarnessJUnit() throws {
    // `harness test`'s bundle reader.
    var reader = BundleChannelReader(.swiftTesting)
    let notes = Self.lines.flatMap { reader.read(Array($0.utf8)[...]) }
    let at = { (second: Double) in Date(timeIntervalSince1970: 1_795_680_000 + second) }
    XCTAssertEqual(notes, [
      .started(Self.cancels, at: at(1)), .ended(Self.cancels, skipReason: "cancelled: not today", seconds: 0),
      .started(Self.silent, at: at(2)), .ended(Self.silent, skipReason: "cancelled", seconds: 0),
      .started(Self.failsThenCancels, at: at(3)), .issue(Self.failsThenCancels, Self.failure),
      .ended(Self.failsThenCancels, skipReason: "cancelled: too late", seconds: 0),
      .started(Self.passes, at: at(4)), .ended(Self.passes, skipReason: nil, seconds: 0),
    ])
    // `harness-junit from-swift-testing`, from the same lines in a file.
    let stream = path("events.jsonl")
    try (Self.lines.joined(separator: "\n") + "\n").write(toFile: stream, atomically: true, encoding: .utf8)
    var ends: [String: TestEnd] = [:]
    for event in try SwiftTestingStream(path: stream).harnessEvents() {
      if case .testEnded(let id, let end) = event.kind { ends[id.name] = end }
    }
    XCTAssertEqual(ends.mapValues(\.verdict), [
      "cancelsItself()": .skipped, "cancelsSilently()": .skipped, "failsThenCancels()": .failed, "passes()": .passed,
    ])
    XCTAssertEqual(ends["cancelsItself()"]?.reason, "cancelled: not today")
    XCTAssertEqual(ends["cancelsSilently()"]?.reason, "cancelled")
    let summary = try convertSwiftTestingEvents(stream, toJUnit: path("report.xml"))
    XCTAssertEqual(summary.skipped, 2)
    let skips = try XMLReader.readDocument(path("report.xml")).elements(named: "testsuite")
      .flatMap { $0.elements(named: "testcase") }.flatMap { $0.elements(named: "skipped") }.map { $0.attribute("message") }
    XCTAssertEqual(skips, ["cancelled: not today", "cancelled"])
  }

  /// A suite's failing issue (a trait that threw) and an issue of no test («unknown») are
  /// failures outside every test, for the bundle reader and for harness-junit alike.
  func testASuitesIssueAndAnIssueOfNoTestFailOutsideEveryTestInBothReaders() throws {
    let thrown = #"{"kind":"event","payload":{"_error":{"description":"not prepared"},"instant":{"absolute":1,"since1970":1795680001},"issue":{"isKnown":false,"sourceLocation":{"column":2,"fileID":"LedgerTests\/RunLikeSwiftTest.swift","line":40}},"kind":"issueRecorded","messages":[{"symbol":"fail","text":"Caught error: not prepared"}],"testID":"LedgerTests.OtherEnds"},"version":0}"#
    let unknown = #"{"kind":"event","payload":{"instant":{"absolute":4,"since1970":1795680004},"issue":{"isKnown":false,"sourceLocation":{"column":19,"fileID":"LedgerTests\/RunLikeSwiftTest.swift","line":75}},"kind":"issueRecorded","messages":[{"symbol":"fail","text":"Issue recorded"},{"symbol":"details","text":"after its test"}]},"version":0}"#
    let lines = [Self.declaration(Self.suite, name: "OtherEnds", kind: "suite", line: 40),
                 Self.declaration(Self.passes, name: "passes()", line: 63), Self.event("runStarted", nil, at: 0),
                 Self.event("testStarted", Self.suite, at: 1), thrown, Self.event("testEnded", Self.suite, at: 1), unknown,
                 Self.event("runEnded", nil, at: 5)]
    var reader = BundleChannelReader(.swiftTesting)
    let notes = lines.flatMap { reader.read(Array($0.utf8)[...]) }
    XCTAssertEqual(notes.count, 4)
    guard case .issue(Self.suite, let suiteIssue) = notes[1], case .issueOfNoTest(let lateIssue) = notes[3] else {
      return XCTFail("\(notes)")
    }
    XCTAssertEqual(suiteIssue.message, "Caught error: not prepared")
    XCTAssertEqual(lateIssue.message, "Issue recorded - after its test")
    let stream = path("outside.jsonl")
    try (lines.joined(separator: "\n") + "\n").write(toFile: stream, atomically: true, encoding: .utf8)
    let failures = try SwiftTestingStream(path: stream).harnessEvents().compactMap { event -> OutsideFailure? in
      if case .outsideFailure(let failure) = event.kind { failure } else { nil }
    }
    XCTAssertEqual(failures.map(\.place), [.suite, .noTest])
    XCTAssertEqual(failures.map(\.suite.suite), [Self.suite, "LedgerTests"])
    XCTAssertEqual(failures.map(\.issue.message), ["Caught error: not prepared", "Issue recorded - after its test"])
    let summary = try convertSwiftTestingEvents(stream, toJUnit: path("outside.xml"))
    XCTAssertEqual(summary.outsideFailures, 2)
    XCTAssertFalse(summary.succeeded)
    let names = try XMLReader.readDocument(path("outside.xml")).elements(named: "testsuite")
      .flatMap { $0.elements(named: "testcase") }.map { $0.attribute("name") ?? "" }
    XCTAssertEqual(Set(names), ["initializationError", "executionError"])
  }

  /// An attachment (`valueAttached`, Swift 6.3.1 with the underscored fields) is an issue that
  /// fails nothing, in Swift Testing's words at the line that attached it, with the file it was
  /// saved as (`--attachments-path`) and the arguments of its case; its bytes are not kept.
  func testAnAttachmentIsSaidInSwiftTestingsWords() throws {
    let test = #"MoreTests.More\/attachesInCase(i:)\/M.swift:19:4"#
    let place = #""_sourceLocation":{"_filePath":"\/p\/M.swift","column":75,"fileID":"MoreTests\/M.swift","filePath":"\/p\/M.swift","line":19},"_testCase":{"displayName":"1","id":"…"}"#
    let said = #""kind":"valueAttached","messages":[{"symbol":"_attachment","text":"Attached 'case.txt' to attachesInCase(i:)."}"#
    let lines = [
      #"{"kind":"event","payload":{\#(place),"attachment":{"_bytes":"Y2FzZSAx","_preferredName":"case.txt"},\#(said)],"testID":"\#(test)"},"version":"6.3.0"}"#,
      #"{"kind":"event","payload":{\#(place),"attachment":{"_preferredName":"case.txt","path":"\/saved\/case.txt"},\#(said),{"symbol":"details","text":"Written to '\/saved\/case.txt'."}],"testID":"\#(test)"},"version":"6.3.0"}"#,
    ]
    var reader = BundleChannelReader(.swiftTesting)
    let notes = lines.flatMap { reader.read(Array($0.utf8)[...]) }.compactMap { note -> Issue? in
      if case .issue(_, let issue) = note { issue } else { nil }
    }
    let location = SourceLocation(fileID: "MoreTests/M.swift", filePath: "/p/M.swift", line: 19, column: 75)
    XCTAssertEqual(notes, [
      Issue(kind: .attachment, message: "Attached 'case.txt' to attachesInCase(i:). (arguments: 1)", sourceLocation: location),
      Issue(kind: .attachment, message: "Attached 'case.txt' to attachesInCase(i:); saved as /saved/case.txt (arguments: 1)",
            sourceLocation: location),
    ])
    XCTAssertFalse(notes.contains(where: \.isFailure))
  }

  /// Version 6.3 of the stream, which `harness test` and `harness-junit swift-test` ask for (an
  /// older one turns warnings off inside the run): its records are read by both readers, its
  /// warning is a warning and its thrown error an error, as the fixture's tests write them
  /// (`SWT_EXPERIMENTAL_EVENT_STREAM_FIELDS_ENABLED=1`, Swift 6.3.1, backtraces trimmed).
  func testVersionSixThreeRecordsMeanWhatVersionZeroOnesDo() throws {
    let warns = "LedgerTests.OtherEnds/recordsAWarning()/RunLikeSwiftTest.swift:47:4"
    let throwsError = "LedgerTests.OtherEnds/throwsAnError()/RunLikeSwiftTest.swift:64:4"
    let location = #""sourceLocation":{"_filePath":"\/p\/RunLikeSwiftTest.swift","column":17,"fileID":"LedgerTests\/RunLikeSwiftTest.swift","filePath":"\/p\/RunLikeSwiftTest.swift","line":48}"#
    let lines = [
      #"{"kind":"test","payload":{"id":"LedgerTests.OtherEnds","kind":"suite","name":"OtherEnds",\#(location)},"version":"6.3.0"}"#,
      Self.declaration(warns, name: "recordsAWarning()", line: 47).replacingOccurrences(of: #""version":0"#, with: #""version":"6.3.0""#),
      Self.declaration(throwsError, name: "throwsAnError()", line: 64).replacingOccurrences(of: #""version":0"#, with: #""version":"6.3.0""#),
      #"{"kind":"event","payload":{"instant":{"absolute":0,"since1970":1795680000},"kind":"runStarted","messages":[]},"version":"6.3.0"}"#,
      Self.event("testStarted", warns, at: 1).replacingOccurrences(of: #""version":0"#, with: #""version":"6.3.0""#),
      #"{"kind":"event","payload":{"_comments":["only a warning"],"instant":{"absolute":1,"since1970":1795680001},"issue":{"isFailure":false,"isKnown":false,"severity":"warning",\#(location)},"kind":"issueRecorded","messages":[{"symbol":"warning","text":"Issue recorded"},{"symbol":"details","text":"only a warning"}],"testID":"\#(warns.replacingOccurrences(of: "/", with: "\\/"))"},"version":"6.3.0"}"#,
      Self.event("testEnded", warns, at: 1).replacingOccurrences(of: #""version":0"#, with: #""version":"6.3.0""#),
      Self.event("testStarted", throwsError, at: 2).replacingOccurrences(of: #""version":0"#, with: #""version":"6.3.0""#),
      #"{"kind":"event","payload":{"instant":{"absolute":2,"since1970":1795680002},"issue":{"_error":{"description":"not prepared"},"isFailure":true,"isKnown":false,"severity":"error",\#(location)},"kind":"issueRecorded","messages":[{"symbol":"fail","text":"Caught error: not prepared"}],"testID":"\#(throwsError.replacingOccurrences(of: "/", with: "\\/"))"},"version":"6.3.0"}"#,
      Self.event("testEnded", throwsError, at: 2).replacingOccurrences(of: #""version":0"#, with: #""version":"6.3.0""#),
      #"{"kind":"event","payload":{"instant":{"absolute":3,"since1970":1795680003},"kind":"runEnded","messages":[]},"version":"6.3.0"}"#,
    ]
    var reader = BundleChannelReader(.swiftTesting)
    let issues = lines.flatMap { reader.read(Array($0.utf8)[...]) }.compactMap { note -> Issue? in
      if case .issue(_, let issue) = note { issue } else { nil }
    }
    let expected = [
      Issue(kind: .warning, message: "Issue recorded - only a warning",
            sourceLocation: SourceLocation(fileID: "LedgerTests/RunLikeSwiftTest.swift", filePath: "/p/RunLikeSwiftTest.swift", line: 48, column: 17)),
      Issue(kind: .errorThrown, message: "Caught error: not prepared",
            sourceLocation: SourceLocation(fileID: "LedgerTests/RunLikeSwiftTest.swift", filePath: "/p/RunLikeSwiftTest.swift", line: 48, column: 17)),
    ]
    XCTAssertEqual(issues, expected)
    let stream = path("six-three.jsonl")
    try (lines.joined(separator: "\n") + "\n").write(toFile: stream, atomically: true, encoding: .utf8)
    let summary = try convertSwiftTestingEvents(stream, toJUnit: path("six-three.xml"))
    XCTAssertEqual([summary.passed, summary.failed, summary.errored], [1, 0, 1])
  }
}
