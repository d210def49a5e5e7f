@testable import AsyncHarness
import XCTest

/// The listings and the XCTest output of a package's own test bundle, read into plain values.
/// The texts are real output of the fixture Tests/Fixtures/ExistingTests (see
/// docs/RUNNING-EXISTING-TESTS.md for the commands), captured on Linux with Swift 6.3.1.
final class ExistingTestsParsingTests: XCTestCase {
  // MARK: XCTest listing

  func testTheXCTestListingIsEveryTestWithItsClassInOrder() throws {
    let tests = try ExistingTest.xctestListing(Self.xctestList)
    XCTAssertEqual(tests.count, 14)
    XCTAssertEqual(
      tests.first,
      ExistingTest(
        library: .xctest, suite: "LedgerTests.BalanceXCTests", name: "testEmptyBalance",
        id: "LedgerTests.BalanceXCTests/testEmptyBalance", isParameterized: false))
    XCTAssertEqual(
      Set(tests.map(\.suite)), ["LedgerTests.BalanceXCTests", "LedgerTests.LedgerXCTests", "LedgerTests.RudeXCTests"])
    XCTAssertEqual(tests.last?.id, "LedgerTests.RudeXCTests/testE_AfterTheRudeOnes")
    XCTAssertTrue(tests.allSatisfy { $0.sourceLocation == nil && $0.displayName == nil && $0.library == .xctest })
  }

  func testAnXCTestIsNamedOnItsOutputLinesWithoutItsModule() throws {
    let test = try XCTUnwrap(ExistingTest.xctestListing(Self.xctestList).first)
    XCTAssertEqual(test.xctestOutputName, "BalanceXCTests.testEmptyBalance")
  }

  func testALineThatIsNotClassSlashMethodIsRefusedWithItsNumber() {
    XCTAssertThrowsError(try ExistingTest.xctestListing("Listing 1 tests in debug.xctest:\n\nLedgerTests.A/b/c")) {
      XCTAssertEqual(reason(of: $0), "line 3 is not Module.Class/method: LedgerTests.A/b/c")
    }
  }

  // MARK: Swift Testing listing

  func testTheSwiftTestingListingGivesSuitesDisplayNamesAndLocationsInDeclarationOrder() throws {
    let tests = try ExistingTest.swiftTestingListing(Self.swiftTestingList)
    XCTAssertEqual(
      tests.map(\.name),
      ["namedTest()", "parameterized(amount:)", "insideNested()", "insideDeeper()", "first()", "freeFunction()"])
    XCTAssertEqual(
      tests.map(\.suite),
      [
        "LedgerTests.LedgerSuite", "LedgerTests.LedgerSuite", "LedgerTests.LedgerSuite/Nested",
        "LedgerTests.LedgerSuite/Nested/Deeper", "LedgerTests.SerializedSuite", "LedgerTests",
      ])
    XCTAssertEqual(
      tests.map(\.suiteDisplayName), ["Ledger arithmetic", "Ledger arithmetic", nil, "Deeper, with a display name", nil, nil])
    XCTAssertEqual(tests.map(\.displayName), ["A test with a display name", nil, nil, nil, nil, nil])
    XCTAssertEqual(tests.map(\.isParameterized), [false, true, false, false, false, false])
    XCTAssertTrue(tests.allSatisfy { $0.library == .swiftTesting && $0.xctestOutputName == nil })
  }

  func testASwiftTestingTestIsSelectedByItsFullIDAndPointsAtItsDeclaration() throws {
    let tests = try ExistingTest.swiftTestingListing(Self.swiftTestingList)
    let test = try XCTUnwrap(tests.first { $0.name == "parameterized(amount:)" })
    XCTAssertEqual(test.id, "LedgerTests.LedgerSuite/parameterized(amount:)/LedgerSwiftTests.swift:38:4")
    XCTAssertEqual(test.sourceLocation?.fileID, "LedgerTests/LedgerSwiftTests.swift")
    XCTAssertEqual(
      test.sourceLocation?.filePath.hasSuffix("/Tests/Fixtures/ExistingTests/Tests/LedgerTests/LedgerSwiftTests.swift"), true)
    XCTAssertEqual(test.sourceLocation?.line, 38)
    XCTAssertEqual(test.sourceLocation?.column, 4)
  }

  func testEventRecordsAreSkippedAndOtherVersionsOrBrokenLinesRefused() throws {
    let event = #"{"kind":"event","payload":{"kind":"runStarted"},"version":0}"#
    XCTAssertEqual(try ExistingTest.swiftTestingListing(event + "\n"), [])
    let newer = #"{"kind":"test","payload":{},"version":"6.3.0"}"#
    XCTAssertThrowsError(try ExistingTest.swiftTestingListing(event + "\n" + newer)) {
      XCTAssertEqual(reason(of: $0), "line 2 is not a version 0 record")
    }
    XCTAssertThrowsError(try ExistingTest.swiftTestingListing("not json")) {
      XCTAssertEqual(reason(of: $0), "line 1 is not a JSON object")
    }
    let nameless = #"{"kind":"test","payload":{"id":"M.f()","kind":"function"},"version":0}"#
    XCTAssertThrowsError(try ExistingTest.swiftTestingListing(nameless)) {
      XCTAssertEqual(reason(of: $0)?.hasPrefix("line 1 is a test record that cannot be read"), true)
    }
  }

  // MARK: XCTest output

  func testEachXCTestOfARunIsOneRecordWithItsOutcomeFailuresSkipAndOutput() throws {
    let records = read(Self.xctestRun)
    XCTAssertEqual(records.count, 14)
    XCTAssertEqual(
      records.map(\.outcome),
      [.passed, .failed, .failed, .passed, .failed, .passed, .passed, .skipped, .failed] + Array(repeating: .passed, count: 5))
    let byName = Dictionary(uniqueKeysWithValues: records.map { ($0.test, $0) })
    let path = "/work/wt-bundle/Tests/Fixtures/ExistingTests/Tests/LedgerTests/LedgerXCTests.swift"
    XCTAssertEqual(
      byName["BalanceXCTests.testTwoFailuresInOneTest"]?.failures,
      [
        .init(message: "XCTAssertTrue failed - first", file: path, line: 53),
        .init(message: "failed - second", file: path, line: 54),
      ])
    XCTAssertEqual(
      byName["LedgerXCTests.testThrows"]?.failures,
      [.init(message: #"threw error "LedgerError: thrown by an XCTest""#, file: nil, line: nil)])
    XCTAssertEqual(byName["LedgerXCTests.testSkipped"]?.skipReason, "not on this machine")
    XCTAssertEqual(byName["LedgerXCTests.testSkipped"]?.failures, [])
    XCTAssertEqual(
      byName["LedgerXCTests.testPrints"]?.output, ["stderr line from testPrints", "stdout line from testPrints"])
    XCTAssertEqual(byName["LedgerXCTests.testAsyncFails"]?.seconds, 0.011)
    XCTAssertEqual(byName["LedgerXCTests.testPasses"]?.output, [])
  }

  func testTheTestThatCrashedIsTheOneStartedAndNeverEndedWithWhatItPrinted() {
    let records = read(Self.xctestCrash)
    XCTAssertEqual(records.map(\.test), ["LedgerXCTests.testPrints", "RudeXCTests.testA_IndexPastTheEnd"])
    XCTAssertEqual(records.map(\.outcome), [.passed, nil])
    XCTAssertEqual(records.last?.output, ["testA_IndexPastTheEnd: printed before it goes"])
  }

  func testAnXCTSkipWithoutAMessageHasAnEmptyReason() {
    let records = read(
      """
      Test Case 'A.testB' started at 2026-11-25 23:08:07.842
      /x/A.swift:3: A.testB : Test skipped
      Test Case 'A.testB' skipped (0.0 seconds)
      """)
    XCTAssertEqual(records.map(\.skipReason), [""])
    XCTAssertEqual(records.map(\.outcome), [.skipped])
  }

  /// The reason of a listing error; `nil` for any other error.
  private func reason(of error: any Error) -> String? {
    (error as? ExistingTestsListingError)?.reason
  }

  /// The records of `text`, read a line at a time.
  private func read(_ text: String) -> [XCTestOutput.Record] {
    var output = XCTestOutput()
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) { output.read(line) }
    return output.records
  }

  // MARK: Captured output

  /// `<bundle> --list-tests`.
  static let xctestList = #"""
Listing 14 tests in debug.xctest:

LedgerTests.BalanceXCTests/testEmptyBalance
LedgerTests.BalanceXCTests/testTwoFailuresInOneTest
LedgerTests.LedgerXCTests/testAsyncFails
LedgerTests.LedgerXCTests/testAsyncPasses
LedgerTests.LedgerXCTests/testFailsWithXCTAssert
LedgerTests.LedgerXCTests/testPasses
LedgerTests.LedgerXCTests/testPrints
LedgerTests.LedgerXCTests/testSkipped
LedgerTests.LedgerXCTests/testThrows
LedgerTests.RudeXCTests/testA_IndexPastTheEnd
LedgerTests.RudeXCTests/testB_FatalError
LedgerTests.RudeXCTests/testC_Exit
LedgerTests.RudeXCTests/testD_Hangs
LedgerTests.RudeXCTests/testE_AfterTheRudeOnes
"""#

  /// `<bundle>` (every XCTest test, without EXISTING_TESTS_RUDE), stdout and stderr together.
  static let xctestRun = #"""
Test Suite 'All tests' started at 2026-11-25 23:08:07.818
Test Suite 'debug.xctest' started at 2026-11-25 23:08:07.819
Test Suite 'BalanceXCTests' started at 2026-11-25 23:08:07.819
Test Case 'BalanceXCTests.testEmptyBalance' started at 2026-11-25 23:08:07.819
Test Case 'BalanceXCTests.testEmptyBalance' passed (0.001 seconds)
Test Case 'BalanceXCTests.testTwoFailuresInOneTest' started at 2026-11-25 23:08:07.820
/work/wt-bundle/Tests/Fixtures/ExistingTests/Tests/LedgerTests/LedgerXCTests.swift:53: error: BalanceXCTests.testTwoFailuresInOneTest : XCTAssertTrue failed - first
/work/wt-bundle/Tests/Fixtures/ExistingTests/Tests/LedgerTests/LedgerXCTests.swift:54: error: BalanceXCTests.testTwoFailuresInOneTest : failed - second
Test Case 'BalanceXCTests.testTwoFailuresInOneTest' failed (0.0 seconds)
Test Suite 'BalanceXCTests' failed at 2026-11-25 23:08:07.821
	 Executed 2 tests, with 2 failures (0 unexpected) in 0.001 (0.001) seconds
Test Suite 'LedgerXCTests' started at 2026-11-25 23:08:07.821
Test Case 'LedgerXCTests.testAsyncFails' started at 2026-11-25 23:08:07.821
/work/wt-bundle/Tests/Fixtures/ExistingTests/Tests/LedgerTests/LedgerXCTests.swift:42: error: LedgerXCTests.testAsyncFails : XCTAssertGreaterThan failed: ("0") is not greater than ("0") - an empty ledger has no balance
Test Case 'LedgerXCTests.testAsyncFails' failed (0.011 seconds)
Test Case 'LedgerXCTests.testAsyncPasses' started at 2026-11-25 23:08:07.831
Test Case 'LedgerXCTests.testAsyncPasses' passed (0.011 seconds)
Test Case 'LedgerXCTests.testFailsWithXCTAssert' started at 2026-11-25 23:08:07.842
/work/wt-bundle/Tests/Fixtures/ExistingTests/Tests/LedgerTests/LedgerXCTests.swift:17: error: LedgerXCTests.testFailsWithXCTAssert : XCTAssertEqual failed: ("2") is not equal to ("3") - two is not three
Test Case 'LedgerXCTests.testFailsWithXCTAssert' failed (0.0 seconds)
Test Case 'LedgerXCTests.testPasses' started at 2026-11-25 23:08:07.842
Test Case 'LedgerXCTests.testPasses' passed (0.0 seconds)
Test Case 'LedgerXCTests.testPrints' started at 2026-11-25 23:08:07.842
stderr line from testPrints
stdout line from testPrints
Test Case 'LedgerXCTests.testPrints' passed (0.0 seconds)
Test Case 'LedgerXCTests.testSkipped' started at 2026-11-25 23:08:07.842
/work/wt-bundle/Tests/Fixtures/ExistingTests/Tests/LedgerTests/LedgerXCTests.swift:25: LedgerXCTests.testSkipped : Test skipped - not on this machine
Test Case 'LedgerXCTests.testSkipped' skipped (0.0 seconds)
Test Case 'LedgerXCTests.testThrows' started at 2026-11-25 23:08:07.843
<EXPR>:0: error: LedgerXCTests.testThrows : threw error "LedgerError: thrown by an XCTest"
Test Case 'LedgerXCTests.testThrows' failed (0.0 seconds)
Test Suite 'LedgerXCTests' failed at 2026-11-25 23:08:07.843
	 Executed 7 tests, with 1 test skipped and 3 failures (1 unexpected) in 0.022 (0.022) seconds
Test Suite 'RudeXCTests' started at 2026-11-25 23:08:07.843
Test Case 'RudeXCTests.testA_IndexPastTheEnd' started at 2026-11-25 23:08:07.843
Test Case 'RudeXCTests.testA_IndexPastTheEnd' passed (0.0 seconds)
Test Case 'RudeXCTests.testB_FatalError' started at 2026-11-25 23:08:07.843
Test Case 'RudeXCTests.testB_FatalError' passed (0.0 seconds)
Test Case 'RudeXCTests.testC_Exit' started at 2026-11-25 23:08:07.843
Test Case 'RudeXCTests.testC_Exit' passed (0.0 seconds)
Test Case 'RudeXCTests.testD_Hangs' started at 2026-11-25 23:08:07.843
Test Case 'RudeXCTests.testD_Hangs' passed (0.0 seconds)
Test Case 'RudeXCTests.testE_AfterTheRudeOnes' started at 2026-11-25 23:08:07.843
Test Case 'RudeXCTests.testE_AfterTheRudeOnes' passed (0.0 seconds)
Test Suite 'RudeXCTests' passed at 2026-11-25 23:08:07.843
	 Executed 5 tests, with 0 failures (0 unexpected) in 0.0 (0.0) seconds
Test Suite 'debug.xctest' failed at 2026-11-25 23:08:07.843
	 Executed 14 tests, with 1 test skipped and 5 failures (1 unexpected) in 0.024 (0.024) seconds
Test Suite 'All tests' failed at 2026-11-25 23:08:07.843
	 Executed 14 tests, with 1 test skipped and 5 failures (1 unexpected) in 0.024 (0.024) seconds
"""#

  /// `EXISTING_TESTS_RUDE=1 stdbuf -oL <bundle> LedgerTests.LedgerXCTests/testPrints,`
  /// `LedgerTests.RudeXCTests/testA_IndexPastTheEnd,LedgerTests.RudeXCTests/testE_AfterTheRudeOnes`
  /// (one argument): stdout of a process killed by SIGILL in the second test.
  static let xctestCrash = #"""
Test Suite 'Selected tests' started at 2026-11-25 23:10:46.249
Test Suite 'LedgerXCTests' started at 2026-11-25 23:10:46.251
Test Case 'LedgerXCTests.testPrints' started at 2026-11-25 23:10:46.251
stdout line from testPrints
Test Case 'LedgerXCTests.testPrints' passed (0.001 seconds)
Test Suite 'LedgerXCTests' passed at 2026-11-25 23:10:46.252
	 Executed 1 test, with 0 failures (0 unexpected) in 0.001 (0.001) seconds
Test Suite 'RudeXCTests' started at 2026-11-25 23:10:46.252
Test Case 'RudeXCTests.testA_IndexPastTheEnd' started at 2026-11-25 23:10:46.252
testA_IndexPastTheEnd: printed before it goes
"""#

  /// Ten of the 28 records of `<bundle> --testing-library swift-testing --list-tests
  /// --event-stream-output-path FILE --event-stream-version 0`, in the order written.
  static let swiftTestingList = #"""
{"kind":"test","payload":{"id":"LedgerTests.LedgerSuite\/Nested\/Deeper\/insideDeeper()\/LedgerSwiftTests.swift:70:8","isParameterized":false,"kind":"function","name":"insideDeeper()","sourceLocation":{"_filePath":"\/work\/wt-bundle\/Tests\/Fixtures\/ExistingTests\/Tests\/LedgerTests\/LedgerSwiftTests.swift","column":8,"fileID":"LedgerTests\/LedgerSwiftTests.swift","line":70}},"version":0}
{"kind":"test","payload":{"id":"LedgerTests.SerializedSuite","kind":"suite","name":"SerializedSuite","sourceLocation":{"_filePath":"\/work\/wt-bundle\/Tests\/Fixtures\/ExistingTests\/Tests\/LedgerTests\/LedgerSwiftTests.swift","column":2,"fileID":"LedgerTests\/LedgerSwiftTests.swift","line":76}},"version":0}
{"kind":"test","payload":{"displayName":"A test with a display name","id":"LedgerTests.LedgerSuite\/namedTest()\/LedgerSwiftTests.swift:24:4","isParameterized":false,"kind":"function","name":"namedTest()","sourceLocation":{"_filePath":"\/work\/wt-bundle\/Tests\/Fixtures\/ExistingTests\/Tests\/LedgerTests\/LedgerSwiftTests.swift","column":4,"fileID":"LedgerTests\/LedgerSwiftTests.swift","line":24}},"version":0}
{"kind":"test","payload":{"id":"LedgerTests.LedgerSuite\/parameterized(amount:)\/LedgerSwiftTests.swift:38:4","isParameterized":true,"kind":"function","name":"parameterized(amount:)","sourceLocation":{"_filePath":"\/work\/wt-bundle\/Tests\/Fixtures\/ExistingTests\/Tests\/LedgerTests\/LedgerSwiftTests.swift","column":4,"fileID":"LedgerTests\/LedgerSwiftTests.swift","line":38}},"version":0}
{"kind":"test","payload":{"id":"LedgerTests.LedgerSuite\/Nested\/insideNested()\/LedgerSwiftTests.swift:65:6","isParameterized":false,"kind":"function","name":"insideNested()","sourceLocation":{"_filePath":"\/work\/wt-bundle\/Tests\/Fixtures\/ExistingTests\/Tests\/LedgerTests\/LedgerSwiftTests.swift","column":6,"fileID":"LedgerTests\/LedgerSwiftTests.swift","line":65}},"version":0}
{"kind":"test","payload":{"id":"LedgerTests.freeFunction()\/LedgerSwiftTests.swift:118:2","isParameterized":false,"kind":"function","name":"freeFunction()","sourceLocation":{"_filePath":"\/work\/wt-bundle\/Tests\/Fixtures\/ExistingTests\/Tests\/LedgerTests\/LedgerSwiftTests.swift","column":2,"fileID":"LedgerTests\/LedgerSwiftTests.swift","line":118}},"version":0}
{"kind":"test","payload":{"id":"LedgerTests.SerializedSuite\/first()\/LedgerSwiftTests.swift:77:4","isParameterized":false,"kind":"function","name":"first()","sourceLocation":{"_filePath":"\/work\/wt-bundle\/Tests\/Fixtures\/ExistingTests\/Tests\/LedgerTests\/LedgerSwiftTests.swift","column":4,"fileID":"LedgerTests\/LedgerSwiftTests.swift","line":77}},"version":0}
{"kind":"test","payload":{"displayName":"Ledger arithmetic","id":"LedgerTests.LedgerSuite","kind":"suite","name":"LedgerSuite","sourceLocation":{"_filePath":"\/work\/wt-bundle\/Tests\/Fixtures\/ExistingTests\/Tests\/LedgerTests\/LedgerSwiftTests.swift","column":2,"fileID":"LedgerTests\/LedgerSwiftTests.swift","line":7}},"version":0}
{"kind":"test","payload":{"displayName":"Deeper, with a display name","id":"LedgerTests.LedgerSuite\/Nested\/Deeper","kind":"suite","name":"Deeper","sourceLocation":{"_filePath":"\/work\/wt-bundle\/Tests\/Fixtures\/ExistingTests\/Tests\/LedgerTests\/LedgerSwiftTests.swift","column":6,"fileID":"LedgerTests\/LedgerSwiftTests.swift","line":69}},"version":0}
{"kind":"test","payload":{"id":"LedgerTests.LedgerSuite\/Nested","kind":"suite","name":"Nested","sourceLocation":{"_filePath":"\/work\/wt-bundle\/Tests\/Fixtures\/ExistingTests\/Tests\/LedgerTests\/LedgerSwiftTests.swift","column":4,"fileID":"LedgerTests\/LedgerSwiftTests.swift","line":64}},"version":0}
"""#
}
