import AsyncHarness
import Foundation
import XCTest

@testable import AsyncHarnessJUnit

final class JUnitMergeTests: ReportTestCase {
  /// A report from another tool: wrong counts, an exponent time, a testcase without time.
  let foreign = """
    <?xml version="1.0" encoding="UTF-8"?>
    <testsuite name="Other" tests="9" failures="0" errors="0" skipped="0" time="1e-05" hostname="ci">
      <testcase classname="Other" name="a"><failure message="no">x &amp; y</failure></testcase>
      <testcase classname="Other" name="b" time="2.5"><skipped/></testcase>
    </testsuite>
    """

  func testMergeRecomputesCountsAndTotals() throws {
    let failure = TestResult(verdict: .failed, issues: [Issue(kind: .expectationFailed, message: "bad")])
    _ = try report(runEvents(suiteEvents("A", [("one", passed, []), ("two", failure, [])])), file: "a.xml")
    _ = try report(runEvents(suiteEvents("B", [("one", TestResult(verdict: .errored), [output("log")])])), file: "b.xml")
    try foreign.write(toFile: path("c.xml"), atomically: true, encoding: .utf8)

    try mergeJUnitReports([path("a.xml"), path("b.xml"), path("c.xml")], into: path("all.xml"))

    let merged = try XMLReader.readDocument(path("all.xml"))
    XCTAssertEqual(merged.attributeMap, ["name": "AsyncHarness", "time": "1.000", "tests": "5", "failures": "2", "errors": "1"])
    let suites = merged.elements(named: "testsuite")
    XCTAssertEqual(suites.map { $0.attribute("name")! }, ["A [semaphore]", "B [semaphore]", "Other"])
    XCTAssertEqual(suites.map { $0.attribute("tests")! }, ["2", "1", "2"])
    XCTAssertEqual(suites[2].attributeMap, [
      "name": "Other", "tests": "2", "failures": "1", "errors": "0", "skipped": "1", "time": "0.000", "hostname": "ci",
    ])
    XCTAssertEqual(suites[0].elements.map(\.name), ["properties", "testcase", "testcase"])
    XCTAssertEqual(suites[0].elements(named: "testcase")[1].elements(named: "failure")[0].text, "bad")
    XCTAssertEqual(suites[1].elements(named: "testcase")[0].elements(named: "system-out")[0].text, "log")
    XCTAssertEqual(merged.testCases.map { $0.attribute("time")! }, ["0.250", "0.250", "0.250", "0.000", "2.500"])
    XCTAssertEqual(merged.testCases[3].elements(named: "failure")[0].text, "x & y")
  }

  func testMergeMayReplaceOneOfItsInputs() throws {
    _ = try report(runEvents(suiteEvents("A", [("one", passed, [])])), file: "a.xml")
    _ = try report(runEvents(suiteEvents("B", [("one", passed, [])])), file: "b.xml")
    try mergeJUnitReports([path("a.xml"), path("b.xml")], into: path("a.xml"))
    XCTAssertEqual(try XMLReader.readDocument(path("a.xml")).attribute("tests"), "2")
    XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted(), ["a.xml", "b.xml"])
  }

  func testMergeNamesTheInputThatIsBroken() throws {
    try "<testsuites>\n  <testsuite name=\"a\">\n</testsuites>\n".write(toFile: path("broken.xml"), atomically: true, encoding: .utf8)
    try "<html><body/></html>".write(toFile: path("page.xml"), atomically: true, encoding: .utf8)
    _ = try report(runEvents(suiteEvents("A", [("one", passed, [])])), file: "good.xml")
    let cases = [
      ("broken.xml", "not well-formed XML (line 3: Opening and ending tag mismatch: testsuite line 2 and testsuites)"),
      ("missing.xml", "No such file or directory"),
      ("page.xml", "not a JUnit report (the root element is <html>)"),
    ]
    for (file, reason) in cases {
      XCTAssertThrowsError(try mergeJUnitReports([path("good.xml"), path(file)], into: path("all.xml"))) {
        XCTAssertEqual("\($0)", "cannot read the JUnit report \(path(file)): \(reason)")
      }
    }
    XCTAssertFalse(FileManager.default.fileExists(atPath: path("all.xml")))
    XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted(), ["broken.xml", "good.xml", "page.xml"])
  }

  func testCommandLineExitsWithZeroOneOrTwo() throws {
    let tool = try harnessJUnit()
    _ = try report(runEvents(suiteEvents("A", [("one", passed, [])])), file: "a.xml")
    try "<testsuites>\n<testsuite>\n</testsuites>\n".write(toFile: path("broken.xml"), atomically: true, encoding: .utf8)

    let twice = try launch(tool, ["merge", path("a.xml"), path("a.xml"), "-o", path("all.xml")])
    XCTAssertEqual(twice.status, 1)
    XCTAssertEqual(twice.errors, "Error: \(JUnitError.duplicateTestcases(count: 1, examples: ["A [semaphore] / one (2 times in \(path("a.xml")))"]))\n")
    XCTAssertFalse(FileManager.default.fileExists(atPath: path("all.xml")))
    XCTAssertEqual(try launch(tool, ["merge", path("a.xml"), path("a.xml"), "--duplicates", "rename", "-o", path("all.xml")]).status, 0)
    XCTAssertEqual(try XMLReader.readDocument(path("all.xml")).testCases.map { $0.attribute("name")! }, ["one", "one (2)"])

    let broken = try launch(tool, ["merge", path("broken.xml"), "-o", path("all.xml")])
    XCTAssertEqual(broken.status, 1)
    XCTAssertEqual(
      broken.errors,
      "Error: cannot read the JUnit report \(path("broken.xml")): not well-formed XML (line 3: Opening and ending tag mismatch: testsuite line 2 and testsuites)\n")

    let usage = try launch(tool, ["merge", path("a.xml")])
    XCTAssertEqual(usage.status, 2)
    XCTAssertTrue(usage.errors.hasPrefix("Error: Missing expected argument '--output <output>'"), usage.errors)

    let notShards = try launch(tool, ["merge", path("a.xml"), "--expect-shards", "2", "-o", path("all.xml")])
    XCTAssertEqual(notShards.status, 1)
    XCTAssertEqual(notShards.errors, "Error: the reports are not those of every shard: \(path("a.xml")) is not a shard's report "
      + "(its root is named \"AsyncHarness\", not \"AsyncHarness (shard I/N)\")\n")
    let noShards = try launch(tool, ["merge", path("a.xml"), "--expect-shards", "0", "-o", path("all.xml")])
    XCTAssertEqual(noShards.status, 2)
    XCTAssertTrue(noShards.errors.hasPrefix("Error: --expect-shards must be at least 1, not 0\n"), noShards.errors)
  }

  // MARK: Duplicates (issue 8)

  func testDuplicateTestcasesAreAnErrorNamingAFewAndTheirInputs() throws {
    _ = try report(runEvents(suiteEvents("A", ["one", "two", "three", "four"].map { ($0, passed, []) })), file: "a.xml")
    _ = try report(runEvents(suiteEvents("A", [("one", passed, [])])), file: "b.xml")
    XCTAssertThrowsError(try mergeJUnitReports([path("a.xml"), path("b.xml"), path("a.xml")], into: path("all.xml"))) {
      XCTAssertEqual("\($0)", """
        4 testcases would appear more than once in the merged report (dashboards keep only the first): \
        A [semaphore] / one (\(path("a.xml")), \(path("b.xml")), \(path("a.xml"))); \
        A [semaphore] / two (2 times in \(path("a.xml"))); A [semaphore] / three (2 times in \(path("a.xml"))); \
        and 1 more. Keep the last of each (keep-last) or rename the later ones (rename)
        """)
    }
    XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted(), ["a.xml", "b.xml"])
  }

  func testKeepLastKeepsTheRerunsResultInOneSuite() throws {
    let failure = TestResult(verdict: .failed, issues: [Issue(kind: .expectationFailed, message: "flaky")])
    _ = try report(runEvents(suiteEvents("A", [("one", failure, []), ("two", passed, [])])), file: "first.xml")
    _ = try report(runEvents(suiteEvents("A", [("one", passed, [])]), suiteEvents("B", [("b", passed, [])])), file: "rerun.xml")
    try mergeJUnitReports([path("first.xml"), path("rerun.xml")], into: path("all.xml"), duplicates: .keepLast)
    let merged = try XMLReader.readDocument(path("all.xml"))
    XCTAssertEqual(merged.elements(named: "testsuite").map { "\($0.attribute("name")!) \($0.attribute("tests")!)" },
                   ["A [semaphore] 2", "B [semaphore] 1"])
    XCTAssertEqual(merged.testCases.map { "\($0.attribute("name")!) \($0.elements.map(\.name))" }, ["two []", "one []", "b []"])
    XCTAssertEqual(merged.elements(named: "testsuite")[0].attribute("time"), "1.000")
    try assertCheckerPasses(path("all.xml"), ["--expect-tests", "3", "--expect-failures", "0", "--expect-errors", "0", "--expect-skipped", "0"])
  }

  func testRenamedDuplicatesNeverTakeALiteralName() throws {
    _ = try report(runEvents(suiteEvents("S", [("dup", passed, []), ("dup (2)", passed, [])])), file: "a.xml")
    _ = try report(runEvents(suiteEvents("S", [("dup", passed, []), ("dup (2)", passed, [])])), file: "b.xml")
    try mergeJUnitReports([path("a.xml"), path("b.xml")], into: path("all.xml"), duplicates: .rename)
    let merged = try XMLReader.readDocument(path("all.xml"))
    XCTAssertEqual(merged.elements(named: "testsuite").count, 1)
    XCTAssertEqual(merged.testCases.map { $0.attribute("name")! }, ["dup", "dup (2)", "dup (3)", "dup (2) (2)"])
    try assertCheckerPasses(path("all.xml"), ["--expect-tests", "4", "--expect-failures", "0", "--expect-errors", "0", "--expect-skipped", "0"])

    // The reporter renames the same way inside one suite.
    let cases = try report(runEvents(suiteEvents("S", [("dup", passed, []), ("dup", passed, []), ("dup (2)", passed, [])])))
      .testCases
    XCTAssertEqual(cases.map { $0.attribute("name")! }, ["dup", "dup (3)", "dup (2)"])
  }

  private func launch(_ tool: URL, _ arguments: [String]) throws -> (status: Int32, errors: String) {
    let run = try runToEnd(tool, arguments)
    return (run.status, run.errors)
  }
}
