@_spi(ForToolsIntegrationOnly) @testable import AsyncHarness
import AsyncHarnessShared
import XCTest

/// A test bundle's private channel read into notes: Swift Testing's own event records (real
/// lines of the fixture Tests/Fixtures/ExistingTests, Swift 6.3.1) and the preloaded library's
/// own (``ChannelRecord``), one it cannot read refused by name; the invocation that selects
/// exactly the tests asked for; the output cut at the observer's markers; and XCTest's own
/// lines left out of a test's output.
final class BundleChannelReaderTests: XCTestCase {
  private static let parameterized = "LedgerTests.LedgerSuite/parameterized(amount:)/LedgerSwiftTests.swift:38:4"

  func testSwiftTestingRecordsBecomeStartsIssuesSkipsAndEnds() {
    var reader = BundleChannelReader(.swiftTesting)
    let read = { (line: String) in reader.read(Array(line.utf8)[...]) }
    XCTAssertEqual(read(#"{"kind":"event","payload":{"instant":{"absolute":1,"since1970":2},"kind":"testStarted","messages":[],"testID":"LedgerTests.LedgerSuite\/parameterized(amount:)\/LedgerSwiftTests.swift:38:4"},"version":0}"#),
                   [.started(Self.parameterized, at: Date(timeIntervalSince1970: 2))])
    XCTAssertEqual(read(#"{"kind":"event","payload":{"_comments":["amount 2"],"_testCase":{"displayName":"2","id":"Parameterized test case ID"},"instant":{"absolute":1,"since1970":2},"issue":{"isKnown":false,"sourceLocation":{"column":5,"fileID":"LedgerTests\/LedgerSwiftTests.swift","line":41}},"kind":"issueRecorded","messages":[{"symbol":"fail","text":"Expectation failed: (ledger.balance → 2) != 2"},{"symbol":"details","text":"amount 2"}],"testID":"LedgerTests.LedgerSuite\/parameterized(amount:)\/LedgerSwiftTests.swift:38:4"},"version":0}"#),
                   [.issue(Self.parameterized, Issue(kind: .expectationFailed,
                                 message: "Expectation failed: (ledger.balance → 2) != 2 - amount 2 (arguments: 2)",
                                 sourceLocation: SourceLocation(fileID: "LedgerTests/LedgerSwiftTests.swift",
                                                                filePath: "LedgerTests/LedgerSwiftTests.swift", line: 41,
                                                                column: 5)))])
    XCTAssertEqual(read(#"{"kind":"event","payload":{"instant":{"absolute":1.25,"since1970":2.25},"kind":"testEnded","messages":[],"testID":"LedgerTests.LedgerSuite\/parameterized(amount:)\/LedgerSwiftTests.swift:38:4"},"version":0}"#),
                   [.ended(Self.parameterized, skipReason: nil, seconds: 0.25)], "its seconds are its records' times apart")
    XCTAssertEqual(read(#"{"kind":"event","payload":{"_comments":["not on this machine"],"instant":{"absolute":1,"since1970":2},"kind":"testSkipped","messages":[],"testID":"LedgerTests.LedgerSuite\/disabled()\/LedgerSwiftTests.swift:28:4"},"version":0}"#),
                   [.started("LedgerTests.LedgerSuite/disabled()/LedgerSwiftTests.swift:28:4"),
                    .ended("LedgerTests.LedgerSuite/disabled()/LedgerSwiftTests.swift:28:4", skipReason: "not on this machine",
                           seconds: 0)])
    XCTAssertEqual(read(#"{"kind":"event","payload":{"instant":{"absolute":1,"since1970":2},"kind":"runEnded","messages":[]},"version":0}"#), [])
    XCTAssertEqual(read(#"{"kind":"almost a record"}"#), [])
  }

  func testXCTestRecordsBecomeStartsFailuresSkipsAndEndsWithXCTestsOwnOutcome() {
    var reader = BundleChannelReader(.xctest)
    let read = { (record: ChannelRecord) in reader.read(record.encoded()[...]) }
    let test = "LedgerTests.BalanceXCTests/testTwoFailuresInOneTest"
    XCTAssertEqual(read(.started(test: test)), [.started(test)])
    XCTAssertEqual(read(.issue(test: test, message: "XCTAssertTrue failed - first", place: .file("/p/LedgerXCTests.swift", line: 53))),
                   [.issue(test, Issue(kind: .expectationFailed, message: "XCTAssertTrue failed - first",
                                 sourceLocation: SourceLocation(fileID: "LedgerTests/LedgerXCTests.swift",
                                                                filePath: "/p/LedgerXCTests.swift", line: 53, column: 1)))])
    XCTAssertEqual(read(.ended(test: test, outcome: .failed, duration: 0.25, failures: 1, unexpected: 0)),
                   [.ended(test, skipReason: nil, seconds: 0.25)])
    XCTAssertEqual(read(.started(test: "M.C/testThrows")), [.started("M.C/testThrows")])
    XCTAssertEqual(read(.issue(test: "M.C/testThrows", message: #"threw error "E""#, place: .thrown)),
                   [.issue("M.C/testThrows", Issue(kind: .errorThrown, message: #"threw error "E""#, sourceLocation: nil))])
    XCTAssertEqual(read(.ended(test: "M.C/testThrows", outcome: .failed, duration: 0, failures: 1, unexpected: 1)),
                   [.ended("M.C/testThrows", skipReason: nil, seconds: 0)])
    XCTAssertEqual(read(.started(test: "M.C/testSkips")), [.started("M.C/testSkips")])
    XCTAssertEqual(read(.ended(test: "M.C/testSkips", outcome: .skipped(reason: "not here"), duration: 0, failures: 0, unexpected: 0)),
                   [.ended("M.C/testSkips", skipReason: "not here", seconds: 0)])
    XCTAssertEqual(read(.classStarted("M.C")), [.classStarted("M.C")])
    XCTAssertEqual(read(.classEnded("M.C")), [.classEnded("M.C")])
    XCTAssertEqual(reader.read(Array("Test Case 'C.testX' passed (0.001 seconds)".utf8)[...]), [], "only records are read")
  }

  /// The library's records of either library's bundle: the children a test left, a schedule's
  /// steps, a step said under `--trace`, a stuck test.
  func testTheLibrarysOwnRecordsBecomeNotesInEitherLibrarysBundle() {
    for library in [TestLibrary.xctest, .swiftTesting] {
      var reader = BundleChannelReader(library)
      let read = { (record: ChannelRecord) in reader.read(record.encoded()[...]) }
      XCTAssertEqual(read(.children(["41 (sleep 60)"])), [.leftProcesses(["41 (sleep 60)"])])
      XCTAssertEqual(read(.schedule(steps: 12, hash: 0xFEED, jobs: 9, outside: 2, firstOutsideStep: 4, escapedAt: 7, hookedAt: nil)),
                     [.schedule(ScheduleTrace(steps: 12, hash: 0xFEED, firstOutsideStep: 4), jobs: 9, outside: 2, escapedAt: 7)])
      XCTAssertEqual(read(.step(3, ran: "task #2", virtualTime: 1_500_000_000)),
                     [.step(3, ran: "task #2", virtualTime: .milliseconds(1500))])
      XCTAssertEqual(read(.stuck(virtualTime: 2_000)), [.stuck(virtualTime: .microseconds(2))])
    }
  }

  /// A record the decoder refuses is said, by name, with the start of the line: never dropped.
  func testARecordOfAnotherVersionOrKindIsRefusedByName() throws {
    var reader = BundleChannelReader(.xctest)
    let notes = reader.read(Array(#"{"v":2,"record":"started","test":"M.C/testA"}"#.utf8)[...])
    XCTAssertEqual(notes, [.refused("The library the harness preloaded into the test bundle sent a record of version 2, "
      + "which this harness does not read (it reads version 1: the library is not the harness's own); the harness refuses "
      + #"it, and what it said of the bundle's tests is lost: {"v":2,"record":"started","test":"M.C/testA"}"#)])
    var swiftTesting = BundleChannelReader(.swiftTesting)
    let unknown = swiftTesting.read(Array(#"{"v":1,"record":"paused","test":"M.C/testA"}"#.utf8)[...])
    guard case .refused(let message)? = unknown.first, unknown.count == 1 else { return XCTFail("\(unknown)") }
    XCTAssertTrue(message.contains(#"a record of an unknown kind, "paused""#), message)
    // A long line is shown by its start only.
    let long = reader.read(Array((#"{"v":1,"record":"started","test":""# + String(repeating: "x", count: 5_000)).utf8)[...])
    guard case .refused(let cut)? = long.first else { return XCTFail("\(long)") }
    XCTAssertTrue(cut.contains("a malformed record: a string does not end"), cut)
    XCTAssertTrue(cut.hasSuffix("xxx…"), cut)
    XCTAssertLessThan(cut.utf8.count, 600)
  }

  func testAnXCTestFailedWithoutTellingAFailureStillFails() {
    var reader = BundleChannelReader(.xctest)
    let read = { (record: ChannelRecord) in reader.read(record.encoded()[...]) }
    _ = read(.started(test: "M.C/testX"))
    let untold = Issue(kind: .expectationFailed, message: "XCTest counted 1 more failure(s) than it reported to its observers")
    XCTAssertEqual(read(.ended(test: "M.C/testX", outcome: .failed, duration: 0, failures: 0, unexpected: 0)),
                   [.issue("M.C/testX", untold), .ended("M.C/testX", skipReason: nil, seconds: 0)])
    _ = read(.started(test: "M.C/testY"))
    XCTAssertEqual(read(.ended(test: "M.C/testY", outcome: .passed, duration: 0, failures: 1, unexpected: 0)),
                   [.issue("M.C/testY", untold), .ended("M.C/testY", skipReason: nil, seconds: 0)])
    // An error XCTest counted as thrown (unexpected) and never told of is an error.
    _ = read(.started(test: "M.C/testZ"))
    XCTAssertEqual(read(.ended(test: "M.C/testZ", outcome: .failed, duration: 0, failures: 1, unexpected: 1)),
                   [.issue("M.C/testZ", Issue(kind: .errorThrown, message: untold.message)),
                    .ended("M.C/testZ", skipReason: nil, seconds: 0)])
    // Told failures are not counted again.
    _ = read(.started(test: "M.C/testW"))
    _ = read(.issue(test: "M.C/testW", message: "m", place: .file("/p/F.swift", line: 3)))
    XCTAssertEqual(read(.ended(test: "M.C/testW", outcome: .failed, duration: 0, failures: 1, unexpected: 0)),
                   [.ended("M.C/testW", skipReason: nil, seconds: 0)])
  }

  func testTheFilterSelectsExactlyTheTestsAskedForByTheirEscapedIDsAndTheStreamGoesToTheChannel() {
    let test = ExistingTest(library: .swiftTesting, suite: "LedgerTests.LedgerSuite", name: "parameterized(amount:)",
                            id: Self.parameterized, isParameterized: true)
    var free = test
    free.id = "LedgerTests.freeFunction()/LedgerSwiftTests.swift:118:2"
    XCTAssertEqual(BundleInvocation(library: .swiftTesting).arguments(running: [test, free]), [
      "--testing-library", "swift-testing", "--filter",
      #"^(LedgerTests\.LedgerSuite/parameterized\(amount:\)/LedgerSwiftTests\.swift:38:4|LedgerTests\.freeFunction\(\)/LedgerSwiftTests\.swift:118:2)$"#,
      "--verbosity", "-9223372036854775808", "--event-stream-output-path", "/dev/fd/3",
      "--event-stream-version", "6.3",
    ])
    XCTAssertEqual(BundleInvocation(library: .swiftTesting).environment, ["NO_COLOR": "1"])
    let xctest = ExistingTest(library: .xctest, suite: "M.C", name: "testA", id: "M.C/testA", isParameterized: false)
    var other = xctest
    other.id = "M.C/testB"
    XCTAssertEqual(BundleInvocation(library: .xctest).arguments(running: [xctest, other]), ["M.C/testA,M.C/testB"])
    XCTAssertEqual(BundleInvocation(library: .xctest).environment, [:])
    // A run that chose none of its tests runs XCTest's as `swift test` does when one
    // invocation runs them all: no argument. One that runs some of them names them.
    let unchosen = BundleInvocation(library: .xctest, allTests: [.xctest: 2, .swiftTesting: 2])
    XCTAssertEqual(unchosen.arguments(running: [xctest, other]), [])
    XCTAssertEqual(unchosen.arguments(running: [other]), ["M.C/testB"])
    XCTAssertEqual(unchosen.arguments(running: [other, other]), ["M.C/testB,M.C/testB"])
    // Swift Testing's too: no `--filter`, which it matches against every test it finds.
    let unchosenSwift = BundleInvocation(library: .swiftTesting, allTests: [.xctest: 2, .swiftTesting: 2])
    XCTAssertEqual(unchosenSwift.arguments(running: [test, free]), [
      "--testing-library", "swift-testing",
      "--verbosity", "-9223372036854775808", "--event-stream-output-path", "/dev/fd/3",
      "--event-stream-version", "6.3",
    ])
    XCTAssertEqual(unchosenSwift.arguments(running: [free]).prefix(4), [
      "--testing-library", "swift-testing", "--filter", #"^(LedgerTests\.freeFunction\(\)/LedgerSwiftTests\.swift:118:2)$"#,
    ])
  }
}
