import AsyncHarnessShared
@_spi(ForToolsIntegrationOnly) @testable import AsyncHarness
import XCTest

/// The listings of a package's own test bundle, read into plain values.
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

  /// What the bundle prints before XCTest's header (a library's banner as it loads) and after
  /// the tests the header counts is its own output, not the listing.
  func testWhatTheBundlePrintsAroundTheXCTestListingIsNotTheListing() throws {
    let text = "libledger 1.0 loaded\nlibledger unloaded\nListing 2 tests in debug.xctest:\n\nM.A/testOne\nM.A/testTwo\n"
      + "a last word\n"
    XCTAssertEqual(try ExistingTest.xctestListing(text).map(\.id), ["M.A/testOne", "M.A/testTwo"])
    XCTAssertEqual(try ExistingTest.xctestListing("libledger 1.0 loaded\nListing 1 test in debug.xctest:\n\nM.A/testOne\n")
      .map(\.id), ["M.A/testOne"])
    XCTAssertEqual(try ExistingTest.xctestListing("libledger 1.0 loaded\nListing 0 tests in debug.xctest:\n\n"), [])
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
    XCTAssertTrue(tests.allSatisfy { $0.library == .swiftTesting })
  }

  /// A type of tests without `@Suite` is declared by no record of the listing, but its tests'
  /// IDs name it, and Swift Testing runs it as a suite: it is their suite.
  func testATypeOfTestsWithoutSuiteIsTheirSuite() throws {
    let unmarked = #"{"kind":"test","payload":{"id":"LedgerTests.Unmarked\/Inner\/opens()\/UnmarkedSuites.swift:13:4","#
      + #""kind":"function","name":"opens()","sourceLocation":{"column":4,"fileID":"LedgerTests\/UnmarkedSuites.swift","#
      + #""line":13}},"version":0}"#
    let tests = try ExistingTest.swiftTestingListing(Self.swiftTestingList + "\n" + unmarked + "\n")
    XCTAssertEqual(tests.last?.suite, "LedgerTests.Unmarked/Inner")
    XCTAssertNil(tests.last?.suiteDisplayName)
    XCTAssertEqual(tests.first { $0.name == "freeFunction()" }?.suite, "LedgerTests")
    XCTAssertNil(SwiftTestingRecord.type(ofFunction: "LedgerTests.freeFunction()/LedgerSwiftTests.swift:118:2",
                                           named: "freeFunction()"))
  }

  /// A function's ID names the type it is declared in, whose name may hold `/` (an operator).
  func testAFunctionsIDNamesTheTypeItIsDeclaredIn() {
    XCTAssertEqual(SwiftTestingRecord.type(ofFunction: "Snap.BaseSuite/MainActorTests/dump()/A.swift:17:8", named: "dump()"),
                   "Snap.BaseSuite/MainActorTests")
    XCTAssertEqual(SwiftTestingRecord.type(ofFunction: "M.S//(lhs:rhs:)/A.swift:3:4", named: "/(lhs:rhs:)"), "M.S")
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

  // MARK: What the library preloaded into the listing declares

  /// The records the library writes during the listing (AsyncHarnessBundleDiscovery.swift) for
  /// the listing below: its suites and functions, SerializedSuite `.serialized`, and `serialized`
  /// functions besides when given.
  private func declarations(serializedFunctions: Set<String> = [], leaving left: Set<String> = [],
                            count: Int? = nil) -> String {
    let suites = ["LedgerTests.LedgerSuite", "LedgerTests.LedgerSuite/Nested", "LedgerTests.LedgerSuite/Nested/Deeper",
                  "LedgerTests.SerializedSuite"]
    let functions = ["LedgerTests.LedgerSuite/namedTest()/LedgerSwiftTests.swift:24:4",
                     "LedgerTests.LedgerSuite/parameterized(amount:)/LedgerSwiftTests.swift:38:4",
                     "LedgerTests.LedgerSuite/Nested/insideNested()/LedgerSwiftTests.swift:65:6",
                     "LedgerTests.LedgerSuite/Nested/Deeper/insideDeeper()/LedgerSwiftTests.swift:70:8",
                     "LedgerTests.SerializedSuite/first()/LedgerSwiftTests.swift:77:4",
                     "LedgerTests.freeFunction()/LedgerSwiftTests.swift:118:2"]
    let records = suites.map { ChannelRecord.declared(test: $0, suite: true, serialized: $0.hasSuffix("SerializedSuite")) }
      + functions.filter { !left.contains($0) }.map {
        ChannelRecord.declared(test: $0, suite: false, serialized: serializedFunctions.contains($0))
      }
    return (records + [.discovered(tests: count ?? records.count)])
      .map { String(decoding: $0.encoded(), as: UTF8.self) + "\n" }.joined()
  }

  /// A test is serialized when it or a suite around it carries `.serialized`: SerializedSuite's
  /// `first()`, and a function that carries it itself.
  func testATestIsSerializedWhenItOrASuiteAroundItCarriesTheTrait() throws {
    let tests = try ExistingTest.swiftTestingListing(Self.swiftTestingList)
    XCTAssertEqual(ExistingTest.withSerialization(declarations(), of: tests).map(\.isSerialized),
                   [false, false, false, false, true, false])
    XCTAssertEqual(ExistingTest.withSerialization(declarations(), of: tests).map(\.serializedSuite),
                   [nil, nil, nil, nil, "LedgerTests.SerializedSuite", nil])
    let own = ExistingTest.withSerialization(
      declarations(serializedFunctions: ["LedgerTests.freeFunction()/LedgerSwiftTests.swift:118:2"]), of: tests)
    XCTAssertEqual(own.map(\.isSerialized), [false, false, false, false, true, true])
    XCTAssertNil(own.last?.serializedSuite, "a function's own trait serializes only its cases")
  }

  /// Records that are not whole, or that do not declare exactly the listed tests, say nothing:
  /// no test is known serialized or not.
  func testDeclarationsThatAreNotWholeOrNotTheListingsSayNothing() throws {
    let tests = try ExistingTest.swiftTestingListing(Self.swiftTestingList)
    let whole = declarations()
    let unknown = [Bool?](repeating: nil, count: tests.count)
    XCTAssertEqual(ExistingTest.withSerialization("", of: tests).map(\.isSerialized), unknown)
    let withoutEnd = whole.split(separator: "\n").dropLast().map { $0 + "\n" }.joined()
    XCTAssertEqual(ExistingTest.withSerialization(withoutEnd, of: tests).map(\.isSerialized), unknown)
    XCTAssertEqual(ExistingTest.withSerialization(declarations(count: 11), of: tests).map(\.isSerialized), unknown)
    let left = declarations(leaving: ["LedgerTests.freeFunction()/LedgerSwiftTests.swift:118:2"])
    XCTAssertEqual(ExistingTest.withSerialization(left, of: tests).map(\.isSerialized), unknown)
    XCTAssertEqual(ExistingTest.withSerialization(whole + "not a record\n", of: tests).map(\.isSerialized), unknown)
    XCTAssertEqual(ExistingTest.withSerialization(whole + whole, of: tests).map(\.isSerialized), unknown,
                   "records after the end")
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

  /// The reason of a listing error; `nil` for any other error.
  private func reason(of error: any Error) -> String? {
    (error as? ExistingTestsListingError)?.reason
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
