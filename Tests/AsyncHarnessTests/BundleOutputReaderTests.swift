@testable import AsyncHarness
import XCTest

/// A Swift Testing worker's output read into notes: event records (real lines of the fixture
/// Tests/Fixtures/ExistingTests, Swift 6.3.1, paths and backtraces trimmed) and the tests'
/// output on the same pipe; and the invocation that selects exactly the tests asked for.
final class BundleOutputReaderTests: XCTestCase {
  private static let parameterized = "LedgerTests.LedgerSuite/parameterized(amount:)/LedgerSwiftTests.swift:38:4"

  func testRecordsBecomeStartsIssuesSkipsAndEndsAndOtherLinesOutput() {
    var reader = BundleOutputReader(.swiftTesting)
    let read = { (line: String) in reader.read(line[...], running: nil) }
    XCTAssertEqual(read(#"{"kind":"event","payload":{"instant":{"absolute":1,"since1970":2},"kind":"testStarted","messages":[],"testID":"LedgerTests.LedgerSuite\/parameterized(amount:)\/LedgerSwiftTests.swift:38:4"},"version":0}"#),
                   [.started(Self.parameterized)])
    XCTAssertEqual(read("stdout line from prints()"), [.output("stdout line from prints()")])
    XCTAssertEqual(read(#"{"kind":"event","payload":{"_comments":["amount 2"],"_testCase":{"displayName":"2","id":"Parameterized test case ID"},"instant":{"absolute":1,"since1970":2},"issue":{"isKnown":false,"sourceLocation":{"column":5,"fileID":"LedgerTests\/LedgerSwiftTests.swift","line":41}},"kind":"issueRecorded","messages":[{"symbol":"fail","text":"Expectation failed: (ledger.balance → 2) != 2"},{"symbol":"details","text":"amount 2"}],"testID":"LedgerTests.LedgerSuite\/parameterized(amount:)\/LedgerSwiftTests.swift:38:4"},"version":0}"#),
                   [.issue(Issue(kind: .expectationFailed,
                                 message: "Expectation failed: (ledger.balance → 2) != 2 - amount 2 (arguments: 2)",
                                 sourceLocation: SourceLocation(fileID: "LedgerTests/LedgerSwiftTests.swift",
                                                                filePath: "LedgerTests/LedgerSwiftTests.swift", line: 41,
                                                                column: 5)))])
    // A print without a newline, then the record on the same line.
    XCTAssertEqual(read(#"no newline{"kind":"event","payload":{"instant":{"absolute":1,"since1970":2},"kind":"testEnded","messages":[],"testID":"LedgerTests.LedgerSuite\/parameterized(amount:)\/LedgerSwiftTests.swift:38:4"},"version":0}"#),
                   [.output("no newline"), .ended(skipReason: nil, seconds: nil)])
    XCTAssertEqual(read(#"{"kind":"event","payload":{"_comments":["not on this machine"],"instant":{"absolute":1,"since1970":2},"kind":"testSkipped","messages":[],"testID":"LedgerTests.LedgerSuite\/disabled()\/LedgerSwiftTests.swift:28:4"},"version":0}"#),
                   [.started("LedgerTests.LedgerSuite/disabled()/LedgerSwiftTests.swift:28:4"),
                    .ended(skipReason: "not on this machine", seconds: 0)])
    XCTAssertEqual(read(#"{"kind":"event","payload":{"instant":{"absolute":1,"since1970":2},"kind":"runEnded","messages":[]},"version":0}"#), [])
    XCTAssertEqual(read(#"{"kind":"almost a record"}"#), [.output(#"{"kind":"almost a record"}"#)])
  }

  func testTheFilterSelectsExactlyTheTestsAskedForByTheirEscapedIDs() {
    let test = ExistingTest(library: .swiftTesting, suite: "LedgerTests.LedgerSuite", name: "parameterized(amount:)",
                            id: Self.parameterized, isParameterized: true)
    var free = test
    free.id = "LedgerTests.freeFunction()/LedgerSwiftTests.swift:118:2"
    let (arguments, environment) = BundleOutputReader(.swiftTesting).invocation(of: [test, free])
    XCTAssertEqual(arguments, [
      "--testing-library", "swift-testing", "--filter",
      #"^(LedgerTests\.LedgerSuite/parameterized\(amount:\)/LedgerSwiftTests\.swift:38:4|LedgerTests\.freeFunction\(\)/LedgerSwiftTests\.swift:118:2)$"#,
      "--no-parallel", "--quiet", "--event-stream-output-path", "/dev/stdout", "--event-stream-version", "0",
    ])
    XCTAssertEqual(environment, ["NO_COLOR": "1"])
    XCTAssertEqual(BundleOutputReader(.swiftTesting).name(of: test), Self.parameterized)
  }
}
