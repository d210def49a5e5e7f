@_spi(ForToolsIntegrationOnly) @testable import AsyncHarness
import XCTest

/// `harness test --filter` and `--skip` read as `swift test` reads them: regular expressions
/// that an XCTest test's `Module.Class/method`, or a Swift Testing test's full ID or the ID of
/// a suite around it, contains (checked against `swift test` 6.3.1 on the same patterns).
final class SwiftTestPatternsTests: XCTestCase {
  private let xctest = ExistingTest(library: .xctest, suite: "Ledger.BalanceXCTests", name: "testEmpty",
                                    id: "Ledger.BalanceXCTests/testEmpty", isParameterized: false)
  private let nested = ExistingTest(library: .swiftTesting, suite: "Ledger.Suite/Nested", name: "inside()",
                                    id: "Ledger.Suite/Nested/inside()/Nested.swift:12:4", isParameterized: false)
  private let free = ExistingTest(library: .swiftTesting, suite: "Ledger", name: "free()",
                                  id: "Ledger/free()/Free.swift:3:2", isParameterized: false)

  private func selected(filters: [String] = [], skips: [String] = []) -> [String] {
    let patterns = SwiftTestPatterns(filters: filters, skips: skips)
    return [xctest, nested, free].filter(patterns.selects).map(\.name)
  }

  func testAFilterIsARegularExpressionTheIDContains() {
    XCTAssertEqual(selected(), ["testEmpty", "inside()", "free()"])
    XCTAssertEqual(selected(filters: ["^Ledger\\.Balance.*/test"]), ["testEmpty"])
    XCTAssertEqual(selected(filters: ["inside\\(\\)"]), ["inside()"])
    XCTAssertEqual(selected(filters: ["Free\\.swift"]), ["free()"], "a Swift Testing ID holds its source location")
    XCTAssertEqual(selected(filters: ["id:^Ledger/free"]), ["free()"], "id: is dropped, as Swift Testing drops it")
    XCTAssertEqual(selected(filters: ["testEmpty", "free"]), ["testEmpty", "free()"], "filters select together")
  }

  /// Swift Testing selects a suite with its tests; SwiftPM matches an XCTest class's tests
  /// only by their `Module.Class/method`, and a test outside any suite has no suite to match.
  func testASuitesIDSelectsItsTestsInSwiftTestingOnly() {
    XCTAssertEqual(selected(filters: ["Suite$"]), ["inside()"])
    XCTAssertEqual(selected(filters: ["Suite/Nested$"]), ["inside()"])
    XCTAssertEqual(selected(filters: ["BalanceXCTests$"]), [])
    XCTAssertEqual(selected(filters: ["^Ledger$"]), [])
  }

  func testASkipLeavesOutWhatItMatchesAfterTheFilters() {
    XCTAssertEqual(selected(skips: ["Suite$"]), ["testEmpty", "free()"])
    XCTAssertEqual(selected(filters: ["Ledger"], skips: ["XCTests", "free"]), ["inside()"])
  }

  func testAPatternThatIsNotARegularExpressionIsRefusedWithWhatIsWrong() {
    XCTAssertThrowsError(try SwiftTestPatterns.validate(["ok", "one("], flag: "--skip")) { error in
      XCTAssertEqual("\(error)", "--skip \"one(\" is not a regular expression: expected ')'")
    }
    XCTAssertNoThrow(try SwiftTestPatterns.validate(["a|b", "^x$", "id:y"], flag: "--filter"))
  }
}
