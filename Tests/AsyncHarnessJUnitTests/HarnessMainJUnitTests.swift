import AsyncHarness
import Foundation
import HarnessTestSupport
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

  private func run(_ arguments: [String]) -> (status: Int32, errors: String, output: String) {
    let errors = WrittenText()
    let output = WrittenText()
    let status = HarnessMain.status(arguments: arguments, suites: suites, junit: JUnitReporter.factory,
                                    console: .plain, output: output.write, errors: errors.write)
    return (status, errors.text, output.text)
  }

  func testJUnitReportOfTheWholeMatrix() throws {
    let status = run(["--waiter", "all", "--junit", path("run.xml")]).status
    XCTAssertEqual(status, 1)
    let root = try XMLReader.readDocument(path("run.xml"))
    XCTAssertEqual(root.name, "testsuites")
    XCTAssertEqual(root.attribute("tests"), "18")
    XCTAssertEqual(root.attribute("failures"), "6")
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

  // MARK: Destinations (issue 8)

  func testBadDestinationsAreUsageErrorsNamingThePathBeforeAnyTestAndClobberNothing() throws {
    try "keep me".write(toFile: path("events.jsonl"), atomically: true, encoding: .utf8)
    let longName = String(repeating: "a", count: 240) + ".xml"
    let cases: [(String, String)] = [
      (directory.path + "/reports/", "the path ends with /, so it names a directory, not a file"),
      (directory.path, "it is a directory"),
      ("/proc/report.xml", "cannot create a file in /proc: No such file or directory"),
      (path(longName), "the file name is too long: 244 bytes, at most 255 (238 with the 17 bytes its temporary file adds) in \(directory.path)"),
    ]
    for (junit, reason) in cases {
      let result = run(["--json", path("events.jsonl"), "--junit", junit])
      XCTAssertEqual(result.status, 2, junit)
      XCTAssertEqual(result.errors, "error: cannot write the JUnit report to \(junit): \(reason)\n")
      XCTAssertEqual(result.output, "", "no test ran")
    }
    let json = run(["--json", path("events.jsonl") + "/", "--junit", path("report.xml")])
    XCTAssertEqual(json.errors, "error: cannot write the JSON Lines stream to \(path("events.jsonl"))/: the path ends with /, so it names a directory, not a file\n")
    XCTAssertEqual(try String(contentsOfFile: path("events.jsonl"), encoding: .utf8), "keep me")
    XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), ["events.jsonl"])
  }

  func testProfileWithoutJUnitAndOneFileForBothAreUsageErrors() {
    XCTAssertEqual(run(["--junit-profile", "github"]).errors, "error: --junit-profile needs --junit PATH\n")
    let same = run(["--json", path("r.xml"), "--junit", directory.path + "/./r.xml"])
    XCTAssertEqual(same.status, 2)
    XCTAssertEqual(same.errors, "error: --json and --junit name the same file \(path("r.xml"))\n")
  }
}
