import AsyncHarness
import Foundation
import Synchronization
import XCTest

@testable import AsyncHarnessJUnit

/// The bridges' JUnit reports, from real child `swift test` runs of the fixture package
/// (Tests/Fixtures/BridgesFixture): its XCTest tests through AsyncHarnessXCTestJUnit, its
/// Swift Testing tests through their event stream (also from a run that crashed), and both
/// through `harness-junit swift-test`. Each report is checked with exact totals, messages,
/// files and lines, and by the shared JUnit checker when it is beside the checkout.
final class BridgeReportTests: ReportTestCase {
  func testXCTestRunIsReportedWithMessagesFilesLinesSkipsAndTimes() throws {
    let report = path("xctest.xml")
    let run = try BridgesFixture.swiftTest([], environment: [
      "ASYNCHARNESS_JUNIT": report, "ASYNCHARNESS_JUNIT_PROFILE": "github",
    ])
    XCTAssertEqual(run.status, 1, run.errors)

    // The Swift Testing pass of the same run (the same executable) did not replace it.
    let document = try XMLReader.readDocument(report)
    try checkJUnit(report, tests: 6, failures: 2, errors: 1, skipped: 1)
    XCTAssertEqual(document.elements(named: "testsuite").map { $0.attribute("name")! },
                   ["FixtureXCTests.PlainTests", "FixtureXCTests.WaitingTests [semaphore]"])
    let cases = testCases(document)
    XCTAssertEqual(cases["testFails"]?.attributeMap, [
      "name": "testFails", "classname": "FixtureXCTests.PlainTests", "time": cases["testFails"]!.attribute("time")!,
      "file": "Tests/FixtureXCTests/FixtureXCTests.swift", "line": "15",
    ])
    XCTAssertEqual(cases["testFails"]?.elements(named: "failure").first?.text,
                   #"XCTAssertEqual failed: ("2") is not equal to ("3") - one and one Tests/FixtureXCTests/FixtureXCTests.swift:15"#)
    XCTAssertEqual(cases["testThrows"]?.elements(named: "error").first?.attribute("message"), #"threw error "FixtureError()""#)
    XCTAssertEqual(cases["testSkips"]?.elements.map(\.name), ["skipped"])
    XCTAssertEqual(cases["testPasses"]?.elements.count, 0)
    XCTAssertEqual(cases["testTimesOut"]?.attribute("line"), "38")
    XCTAssertEqual(cases["testTimesOut"]?.elements(named: "failure").first?.attribute("message"),
                   #"Exceeded timeout of 0.05 seconds, with unfulfilled expectations: "never fulfilled" created at Tests/FixtureXCTests/FixtureXCTests.swift:37"#)
    // The wait lasted its 50 ms timeout, and the test's time says so.
    XCTAssertGreaterThanOrEqual(Double(cases["testTimesOut"]!.attribute("time")!)!, 0.05)
  }

  func testAnUnknownProfileStopsTheTestsNamingTheVariable() throws {
    let run = try BridgesFixture.swiftTest(["--filter", "PlainTests"], environment: [
      "ASYNCHARNESS_JUNIT": path("xctest.xml"), "ASYNCHARNESS_JUNIT_PROFILE": "fancy",
    ])
    XCTAssertNotEqual(run.status, 0)
    XCTAssertTrue(
      run.errors.contains("AsyncHarness: ASYNCHARNESS_JUNIT_PROFILE=fancy is not a JUnit profile (standard, github)\n"),
      run.errors)
    XCTAssertFalse(run.output.contains("Test Case 'PlainTests.testPasses' started"), run.output)
    XCTAssertFalse(FileManager.default.fileExists(atPath: path("xctest.xml")))
  }

  func testAReportThatCannotBeWrittenStopsTheTestsNamingThePath() throws {
    let report = path("missing/xctest.xml")
    let run = try BridgesFixture.swiftTest(["--filter", "PlainTests"], environment: ["ASYNCHARNESS_JUNIT": report])
    XCTAssertNotEqual(run.status, 0)
    XCTAssertTrue(
      run.errors.contains("AsyncHarness: ASYNCHARNESS_JUNIT=\(report) cannot be written: the directory \(path("missing")) does not exist\n"),
      run.errors)
    XCTAssertFalse(run.output.contains("Test Case 'PlainTests.testPasses' started"), run.output)
  }

  func testSwiftTestingEventStreamBecomesJUnit() throws {
    let events = path("events.jsonl")
    let run = try BridgesFixture.swiftTest(
      ["--no-parallel", "--event-stream-output-path", events, "--event-stream-version", "0"])
    XCTAssertEqual(run.status, 1, run.errors)

    let summary = try convertSwiftTestingEvents(events, toJUnit: path("st.xml"), profile: .github)
    XCTAssertEqual(summary, counts(passed: 3, failed: 2, errored: 1, skipped: 1))
    try checkJUnit(path("st.xml"), tests: 7, failures: 2, errors: 1, skipped: 1)
    let document = try XMLReader.readDocument(path("st.xml"))
    XCTAssertEqual(document.elements(named: "testsuite").map { $0.attribute("name")! },
                   ["FixtureSwiftTests.Arithmetic", "FixtureSwiftTests"])
    let cases = testCases(document)
    // Relative to the working directory of this conversion: the checkout.
    let file = ".build/fixtures/BridgesFixture/Tests/FixtureSwiftTests/FixtureSwiftTests.swift"
    XCTAssertEqual(cases["fails()"]?.attribute("file"), file)
    XCTAssertEqual(cases["fails()"]?.attribute("line"), "14")
    XCTAssertEqual(cases["fails()"]?.elements(named: "failure").first?.text,
                   "Expectation failed: (1 + 1 → 2) == 3 - one and one \(file):14")
    XCTAssertEqual(cases["throwsAnError()"]?.elements(named: "error").first?.attribute("message"),
                   "Caught error: FixtureError()")
    XCTAssertEqual(cases["skipped()"]?.elements(named: "skipped").first?.attribute("message"), "not on this machine")
    XCTAssertEqual(cases["parameterized(value:)"]?.elements(named: "failure").first?.attribute("message"),
                   "Expectation failed: (value → 2) == 1 (arguments: 2)")
    XCTAssertEqual(cases["afterTheCrash()"]?.elements.count, 0)
  }

  func testATestThatNeverEndedIsAnErrorNamingItAndTheTestsAfterItWereNotRun() throws {
    let events = path("crashed.jsonl")
    let run = try BridgesFixture.swiftTest(
      ["--no-parallel", "--event-stream-output-path", events, "--event-stream-version", "0"],
      environment: ["FIXTURE_CRASH": "1"])
    XCTAssertNotEqual(run.status, 0)
    XCTAssertTrue(run.output.contains("the fixture crashes") || run.errors.contains("the fixture crashes"))

    let summary = try convertSwiftTestingEvents(events, toJUnit: path("crashed.xml"), profile: .github)
    XCTAssertEqual(summary, counts(passed: 1, failed: 2, errored: 2, skipped: 2))
    try checkJUnit(path("crashed.xml"), tests: 7, failures: 2, errors: 2, skipped: 2)
    let cases = testCases(try XMLReader.readDocument(path("crashed.xml")))
    let message = "FixtureSwiftTests/crashes() started and never ended: the test process stopped while it ran "
      + "(it crashed or exited, in this test or in one running beside it)"
    XCTAssertEqual(cases["crashes()"]?.elements(named: "error").first?.attributeMap,
                   ["message": message, "type": "crashed"])
    XCTAssertEqual(cases["crashes()"]?.attribute("line"), "29")
    XCTAssertEqual(cases["afterTheCrash()"]?.elements(named: "skipped").first?.attribute("message"),
                   "not run: the test process stopped before this test started")
    // What ended before the crash keeps its verdict.
    XCTAssertEqual(cases["fails()"]?.elements(named: "failure").count, 1)
  }

  func testFromSwiftTestingNamesBadInputAndExitsWithOneOrTwo() throws {
    let tool = try harnessJUnit()
    try """
      {"kind":"event","payload":{"kind":"runStarted","instant":{"since1970":1}},"version":0}
      {"kind":"event","payload":
      """.write(toFile: path("torn.jsonl"), atomically: true, encoding: .utf8)
    try #"{"kind":"event","payload":{"kind":"runStarted","instant":{"since1970":1}},"version":1}"#
      .write(toFile: path("v1.jsonl"), atomically: true, encoding: .utf8)
    let cases: [(String, String)] = [
      ("torn.jsonl", "line 2 is not an event stream record"),
      ("v1.jsonl", "line 1 is version 1; this tool reads versions 0 and 6.3 (swift test --event-stream-version 6.3)"),
      ("missing.jsonl", "No such file or directory"),
    ]
    for (file, reason) in cases {
      let run = try runToEnd(tool, ["from-swift-testing", path(file), "-o", path("out.xml")])
      XCTAssertEqual(run.status, 1, file)
      XCTAssertEqual(run.errors, "Error: cannot read the Swift Testing event stream \(path(file)): \(reason)\n")
    }
    XCTAssertFalse(FileManager.default.fileExists(atPath: path("out.xml")))
    let usage = try runToEnd(tool, ["from-swift-testing", path("v1.jsonl")])
    XCTAssertEqual(usage.status, 2)
    XCTAssertTrue(usage.errors.hasPrefix("Error: Missing expected argument '--output <output>'\n"), usage.errors)
  }

  func testSwiftTestCommandWritesOneReportOfBothFrameworks() throws {
    let report = path("junit.xml")
    // The user's command, run in the package: swift run builds the tool, then the tool runs
    // swift test in the same package (swift run gives up the build lock first).
    let run = try BridgesFixture.swift(
      ["run"] + BridgesFixture.packageArguments
        + ["harness-junit", "swift-test", "-o", report, "--profile", "github", "--"] + BridgesFixture.packageArguments)
    XCTAssertEqual(run.status, 1, run.errors)
    XCTAssertTrue(run.output.hasSuffix("harness-junit: swift test exited with status 1; JUnit report: \(report)\n"),
                  run.output)

    try checkJUnit(report, tests: 13, failures: 4, errors: 2, skipped: 2)
    let document = try XMLReader.readDocument(report)
    XCTAssertEqual(document.elements(named: "testsuite").map { $0.attribute("name")! }, [
      "FixtureXCTests.PlainTests", "FixtureXCTests.WaitingTests [semaphore]", "FixtureSwiftTests.Arithmetic",
      "FixtureSwiftTests",
    ])
    XCTAssertEqual(testCases(document)["testFails"]?.attribute("line"), "15")
    XCTAssertEqual(testCases(document)["fails()"]?.attribute("line"), "14")
  }

  func testSwiftTestCommandRefusesParallelRuns() throws {
    let run = try runToEnd(try harnessJUnit(), ["swift-test", "-o", path("junit.xml"), "--", "--parallel"])
    XCTAssertEqual(run.status, 2)
    XCTAssertTrue(run.errors.hasPrefix(
      "Error: swift test --parallel cannot be combined with swift-test: it reports XCTest tests from one process "
        + "and sets the event stream itself\n"), run.errors)
  }

  // MARK: Helpers

  private func testCases(_ document: ParsedElement) -> [String: ParsedElement] {
    Dictionary(uniqueKeysWithValues: document.testCases.map { ($0.attribute("name")!, $0) })
  }

  private func counts(passed: Int, failed: Int, errored: Int, skipped: Int) -> Summary {
    var summary = Summary()
    summary.passed = passed
    summary.failed = failed
    summary.errored = errored
    summary.skipped = skipped
    return summary
  }

  /// Runs the shared JUnit checker (`../shared/junit-check`) with the expected totals, the
  /// `file` and `line` attributes allowed, when it is beside the checkout.
  private func checkJUnit(_ report: String, tests: Int, failures: Int, errors: Int, skipped: Int) throws {
    let checker = BridgesFixture.checkout.deletingLastPathComponent().appendingPathComponent("shared/junit-check")
    let cache = ProcessInfo.processInfo.environment["XDG_CACHE_HOME"]
      ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache").path
    let python = URL(fileURLWithPath: cache).appendingPathComponent("junit-check/venv/bin/python3")
    guard FileManager.default.isExecutableFile(atPath: python.path) else {
      print("BridgeReportTests: the JUnit checker is not set up; \(report) checked by these tests only")
      return
    }
    let run = try runToEnd(python, [
      checker.appendingPathComponent("check_junit.py").path, report, "--allow-attrs", "file,line",
      "--expect-tests", "\(tests)", "--expect-failures", "\(failures)", "--expect-errors", "\(errors)",
      "--expect-skipped", "\(skipped)",
    ])
    XCTAssertEqual(run.status, 0, run.output + run.errors)
    XCTAssertTrue(run.output.contains("junit-check: PASS"), run.output)
  }
}

/// The fixture package, copied to `.build/fixtures/BridgesFixture` beside a link named
/// `AsyncHarness` to the checkout (a path dependency is named after its directory), and built
/// once per test process with a scratch path of its own: its `swift test` never waits for the
/// build lock of the `swift test` running these tests.
enum BridgesFixture {
  static let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
  static let directory = checkout.appendingPathComponent(".build/fixtures")
  static let package = directory.appendingPathComponent("BridgesFixture")
  static let packageArguments = [
    "--package-path", package.path, "--scratch-path", directory.appendingPathComponent("scratch").path,
  ]
  private static let built = Mutex<Result<Void, BuildFailure>?>(nil)

  /// `swift test` of the fixture, built first, with `arguments` and `environment` added.
  static func swiftTest(_ arguments: [String], environment: [String: String] = [:]) throws
    -> (status: Int32, output: String, errors: String)
  {
    try build()
    return try swift(["test", "--skip-build"] + packageArguments + arguments, environment: environment)
  }

  /// `swift` with `arguments`, run in the fixture package's directory.
  static func swift(_ arguments: [String], environment: [String: String] = [:]) throws
    -> (status: Int32, output: String, errors: String)
  {
    try runToEnd(URL(fileURLWithPath: "/usr/bin/env"), ["swift"] + arguments,
                 environment: ProcessInfo.processInfo.environment.merging(environment) { $1 }, in: package)
  }

  private static func build() throws {
    try built.withLock { built in
      if built == nil { built = buildOnce() }
      try built!.get()
    }
  }

  private static func buildOnce() -> Result<Void, BuildFailure> {
    do {
      try prepare()
      let run = try swift(["build", "--build-tests"] + packageArguments)
      return run.status == 0 ? .success(()) : .failure(BuildFailure(log: run.output + run.errors))
    } catch {
      return .failure(BuildFailure(log: "\(error)"))
    }
  }

  /// Copies the fixture's files that changed (an unchanged file keeps its time, so nothing
  /// is rebuilt) and links the checkout.
  private static func prepare() throws {
    let files = FileManager.default
    let source = checkout.appendingPathComponent("Tests/Fixtures/BridgesFixture")
    try files.createDirectory(at: directory, withIntermediateDirectories: true)
    let link = directory.appendingPathComponent("AsyncHarness")
    if (try? files.destinationOfSymbolicLink(atPath: link.path)) != checkout.path {
      try? files.removeItem(at: link)
      try files.createSymbolicLink(at: link, withDestinationURL: checkout)
    }
    let enumerator = files.enumerator(at: source, includingPropertiesForKeys: [.isRegularFileKey])
    while let file = enumerator?.nextObject() as? URL {
      guard try file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true else { continue }
      let relative = String(file.standardizedFileURL.path.dropFirst(source.standardizedFileURL.path.count + 1))
      let copy = package.appendingPathComponent(relative)
      let contents = try Data(contentsOf: file)
      guard (try? Data(contentsOf: copy)) != contents else { continue }
      try files.createDirectory(at: copy.deletingLastPathComponent(), withIntermediateDirectories: true)
      try contents.write(to: copy)
    }
  }

  /// The fixture did not build: its log.
  struct BuildFailure: Error, CustomStringConvertible {
    var log: String
    var description: String { "the fixture package did not build:\n\(log)" }
  }
}
