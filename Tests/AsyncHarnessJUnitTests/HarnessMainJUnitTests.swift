import AsyncHarness
import Foundation
import XCTest

@testable import AsyncHarnessJUnit

/// `--junit` and `--junit-profile` on a suites executable, end to end through the runner.
final class HarnessMainJUnitTests: ReportTestCase {
  private let suites = [
    Suite("Calculator") {
      Test("adds") { t in t.expect(1 + 1 == 2) }
      Test("subtracts wrongly", .knownIssue("returns a + b")) { t in t.expect(3 + 1 == 2) }
      Test("fails") { t in t.fail("broken") }
    },
  ]

  private func run(_ arguments: [String]) -> (status: Int32, errors: String) {
    var errors = ""
    let status = HarnessMain.status(arguments: arguments, suites: suites, junit: JUnitReporter.factory,
                                    console: .plain, output: { _ in }, errors: { errors += $0 })
    return (status, errors)
  }

  func testJUnitReportOfTheWholeMatrix() throws {
    let status = run(["--waiter", "all", "--junit", path("run.xml")]).status
    XCTAssertEqual(status, 1)
    let root = try XMLReader.readDocument(path("run.xml"))
    XCTAssertEqual(root.name, "testsuites")
    XCTAssertEqual(root.attribute("tests"), "15")
    XCTAssertEqual(root.attribute("failures"), "5")
    XCTAssertEqual(root.elements.filter { $0.name == "testsuite" }.map { $0.attribute("name") },
                   WaiterRegistry.builtIn.names.map { "Calculator [\($0)]" })
  }

  func testUnknownProfileIsAUsageError() {
    let result = run(["--junit", path("run.xml"), "--junit-profile", "jenkins"])
    XCTAssertEqual(result.status, 2)
    XCTAssertEqual(result.errors, "error: unknown JUnit profile \"jenkins\"; profiles: standard, github\n")
    XCTAssertFalse(FileManager.default.fileExists(atPath: path("run.xml")))
  }

  func testMissingDirectoryFailsBeforeAnyTestRuns() {
    let result = run(["--junit", path("missing/run.xml")])
    XCTAssertEqual(result.status, 2)
    XCTAssertTrue(result.errors.hasPrefix("error: cannot write the JUnit report to \(path("missing/run.xml")):"), result.errors)
  }
}
