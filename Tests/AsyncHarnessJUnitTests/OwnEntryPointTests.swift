import AsyncHarness
import Foundation
import HarnessTestSupport
import XCTest

@testable import AsyncHarnessJUnit

/// A package whose test bundle is built from an entry point of its own, `Tests/LinuxMain.swift`
/// calling `XCTMain` (Tests/Fixtures/OwnEntryPoint), as Ink, SwiftGraph and ZIPFoundation
/// have: `swift test` runs XCTest alone there, the tests the entry point hands `XCTMain`, and
/// never asks Swift Testing; `harness test` runs the same tests, and no failed listing of
/// Swift Testing's makes the run red. An entry point that never calls `XCTMain`
/// (Tests/Fixtures/OwnMain, as Spectre's and PathKit's) lists no test: `swift test` runs the
/// bundle once and takes its exit status as the verdict, and `harness test` runs it whole as
/// one test.
final class OwnEntryPointTests: ReportTestCase {
  private static let package = FixturePackage("OwnEntryPoint", scratch: "own-entry-point-scratch")
  private static let ownMain = FixturePackage("OwnMain", scratch: "own-main-scratch")

  /// A run of the fixture with `flags`, failing its second test when `failing`: its status,
  /// console, each test's verdict and issues, and the JUnit report's checked counts.
  private func run(_ flags: [String], failing: Bool = false, package: FixturePackage = package) throws
    -> (status: Int32, output: String, verdicts: [String: Verdict], issues: [String: [Issue]]) {
    try package.build()
    let json = path("events.jsonl")
    var environment = ProcessInfo.processInfo.environment
    environment["OWN_ENTRY_POINT_FAIL"] = failing ? "1" : nil
    let run = try runToEnd(try builtHarness(), [
      "test", "--package-path", package.directory.path, "--skip-build", "--json", json, "--junit", path("report.xml"),
    ] + flags + ["--", "--scratch-path", package.scratch.path], environment: environment, limit: 300)
    var verdicts: [String: Verdict] = [:]
    var issues: [String: [Issue]] = [:]
    for line in try String(contentsOfFile: json, encoding: .utf8).split(separator: "\n") {
      switch try Event(jsonLine: line).kind {
      case .testEnded(let test, let end): verdicts[test.path] = end.verdict
      case .issueRecorded(let test, let issue): issues[test.path, default: []].append(issue)
      case .outsideFailure(let failure): XCTFail("a failure outside the tests: \(failure.issue.message)")
      default: break
      }
    }
    return (run.status, run.output + run.errors, verdicts, issues)
  }

  func testItRunsTheTestsItsEntryPointRunsAndNoSwiftTestingTest() throws {
    for flags in [[], ["--workers", "2"]] {
      let run = try run(flags)
      XCTAssertEqual(run.status, 0, run.output)
      XCTAssertEqual(run.verdicts, [
        "GreetingTests.GreetingXCTests/testGreets": .passed,
        "GreetingTests.GreetingXCTests/testFailsWhenAsked": .passed,
      ], "\(flags)")
      XCTAssertTrue(run.output.contains("Result: 2 passed, 0 failed, 0 skipped in "), run.output)
      XCTAssertFalse(run.output.contains("could not be listed"), run.output)
      let report = try XMLReader.readDocument(path("report.xml"))
      XCTAssertEqual(report.testCases.map { $0.attribute("name") }, ["testGreets", "testFailsWhenAsked"])
    }
  }

  func testAFailureOfOneOfItsTestsFailsTheRunInXCTestsWords() throws {
    let run = try run([], failing: true)
    XCTAssertEqual(run.status, 1, run.output)
    XCTAssertEqual(run.verdicts["GreetingTests.GreetingXCTests/testFailsWhenAsked"], .failed)
    XCTAssertEqual(run.verdicts["GreetingTests.GreetingXCTests/testGreets"], .passed)
    let issue = try XCTUnwrap(run.issues["GreetingTests.GreetingXCTests/testFailsWhenAsked"]?.first)
    XCTAssertEqual(issue.message, "failed - asked to fail by OWN_ENTRY_POINT_FAIL")
    XCTAssertEqual(issue.sourceLocation?.line, 18)
    XCTAssertTrue(run.output.contains("Tests/GreetingTests/GreetingXCTests.swift:18: failed - asked to fail by OWN_ENTRY_POINT_FAIL"),
                  run.output)
    XCTAssertTrue(run.output.contains("Result: 1 passed, 1 failed, 0 skipped in "), run.output)
  }

  func testAnEntryPointThatNeverCallsXCTMainRunsWholeAsOneTest() throws {
    for flags in [[], ["--workers", "2"]] {
      let run = try run(flags, package: Self.ownMain)
      XCTAssertEqual(run.status, 0, run.output)
      XCTAssertEqual(run.verdicts, ["OwnMainPackageTests/LinuxMain.swift": .passed], "\(flags)")
      XCTAssertTrue(run.output.contains("Result: 1 passed, 0 failed, 0 skipped in "), run.output)
      let report = try XMLReader.readDocument(path("report.xml"))
      XCTAssertEqual(report.testCases.map { $0.attribute("name") }, ["LinuxMain.swift"])
    }
  }

  func testAnEntryPointThatNeverCallsXCTMainFailsInItsOwnWords() throws {
    for flags in [[], ["--workers", "2"]] {
      let run = try run(flags, failing: true, package: Self.ownMain)
      XCTAssertEqual(run.status, 1, run.output)
      XCTAssertEqual(run.verdicts, ["OwnMainPackageTests/LinuxMain.swift": .failed], "\(flags)")
      let message = """
        The test bundle, whose main is the package's own Tests/LinuxMain.swift, ended with exit status 1; its last output:
        -> greetings
          -> greet by name
          -> greet nobody

         greetings greet nobody
          Checks.swift:13 "Hello, " is not equal to "Hello"

        1 passes and 1 failures
        """
      XCTAssertEqual(run.issues["OwnMainPackageTests/LinuxMain.swift"]?.map(\.message), [message])
      XCTAssertTrue(run.output.contains("FAIL  OwnMainPackageTests/LinuxMain.swift ["), run.output)
      XCTAssertTrue(run.output.contains("Result: 0 passed, 1 failed, 0 skipped in "), run.output)
      let failure = try XCTUnwrap(XMLReader.readDocument(path("report.xml")).testCases.first?.elements(named: "failure").first)
      XCTAssertEqual(failure.attribute("message"), message)
    }
  }
}
