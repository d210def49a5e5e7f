import AsyncHarness
import HarnessTestSupport
import XCTest

/// Tests and suites declared with one name (a `for` loop whose labels repeat): each runs its
/// own body, gets its own verdict and a name of its own everywhere, Go-style (`#01`, `#02`).
final class DuplicateNamesTests: XCTestCase {
  /// Three "adds" and an "adds#01" declared by hand; only the second "adds" fails.
  private let suites = [
    Suite("Math") {
      for (index, label) in ["adds", "adds", "subtracts", "adds", "adds#01"].enumerated() {
        Test(label) { t in t.expect(index != 1, "test \(index) fails") }
      }
    },
    Suite("Twin") { Test("only") { t in t.expect(true) } },
    Suite("Twin") { Test("only") { t in t.fail("the second twin fails") } },
  ]

  private func run(_ arguments: [String]) -> (status: Int32, output: String, errors: String) {
    let output = WrittenText()
    let errors = WrittenText()
    let status = HarnessMain.status(arguments: arguments, suites: suites, console: .plain,
                                    output: output.write, errors: errors.write)
    return (status, output.text, errors.text)
  }

  func testEachTestRunsItsOwnBodyUnderAName() throws {
    let results = try runSuites(suites).results
    XCTAssertEqual(results.map(\.test.path), ["Math/adds", "Math/adds#01", "Math/subtracts", "Math/adds#02",
                                             "Math/adds#01#01", "Twin/only", "Twin#01/only"])
    XCTAssertEqual(results.map(\.result.verdict), [.passed, .failed, .passed, .passed, .passed, .passed, .failed])
    XCTAssertEqual(results[1].result.issues.map(\.message), ["Expectation failed: test 1 fails"])
  }

  func testTheRunWarnsOnceForEachRepeatedName() {
    let result = run(["--isolation", "none"])
    XCTAssertEqual(result.status, 1)
    XCTAssertEqual(result.errors, """
      warning: the run has 2 suites named "Twin"; they are reported as "Twin", "Twin#01"
      warning: suite "Math" has 3 tests named "adds"; they are reported as "adds", "adds#01", "adds#02"
      warning: suite "Math" has a test named "adds#01", a name given to another; it is reported as "adds#01#01"

      """)
  }

  func testListOnlyAndShardKeepThemApart() {
    XCTAssertEqual(run(["--list"]).output,
                   "Math/adds\nMath/adds#01\nMath/subtracts\nMath/adds#02\nMath/adds#01#01\nTwin/only\nTwin#01/only\n")
    let only = run(["--only", "Math/adds#01", "--only", "Twin#01/only"])
    XCTAssertEqual(only.status, 1)
    XCTAssertTrue(only.output.contains("FAIL  Math/adds#01 [expectation]"), only.output)
    XCTAssertTrue(only.output.contains("Result: 0 passed, 2 failed, 0 skipped"), only.output)
    var sharded: [String] = []
    for index in 1...3 {
      sharded += run(["--list", "--shard", "\(index)/3", "--shard-by", "test"]).output.split(separator: "\n").map(String.init)
    }
    XCTAssertEqual(sharded.sorted(), run(["--list"]).output.split(separator: "\n").map(String.init).sorted())
  }
}
