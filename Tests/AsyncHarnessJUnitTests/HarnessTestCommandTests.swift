import AsyncHarness
import Foundation
import HarnessTestSupport
import XCTest

@testable import AsyncHarnessJUnit

/// Issue 32: `harness test` runs the XCTest and Swift Testing tests of a package that does
/// not depend on AsyncHarness (Tests/Fixtures/ExistingTests, with EXISTING_TESTS_RUDE=1):
/// every test is reported once with its verdict, a crash, an `exit` and a hang end only their
/// test, the run ends within seconds of its limits, and the JUnit report passes the checker.
final class HarnessTestCommandTests: ReportTestCase {
  private static let package = FixturePackage("ExistingTests", scratch: "existing-tests-scratch")
  private static var fixture: URL { package.directory }
  private static var scratch: URL { package.scratch }
  private static let timeLimit = 2.0

  /// Whether `test` fails only with EXISTING_TESTS_RUDE=1 (it crashes, exits or hangs then).
  private static func failsOnlyWhenRude(_ test: String) -> Bool {
    test.contains("Rude") || test.hasSuffix("crashesForTwo(value:)")
  }

  /// The tests that pass only when Swift Testing runs them as `swift test` does, side by side
  /// or in their suite's order. In a run where a test crashes beside them they may run again
  /// one at a time, so the rude runs only check that they end; a run without rude tests checks
  /// their verdicts (``testSwiftTestingRunsItsTestsAsSwiftTestDoes``).
  private static let passOnlyAsSwiftTestRunsThem: Set<String> = [
    "LedgerTests.OnlyInParallel/meetsTheOtherOne()", "LedgerTests.OnlyInParallel/meetsTheOtherTwo()",
    "LedgerTests.InItsOrder/second()",
  ]

  /// The line of the fixture's `RunLikeSwiftTest.swift` that contains `text`, counted from 1.
  private static func fixtureLine(containing text: String) throws -> Int {
    let source = fixture.appendingPathComponent("Tests/LedgerTests/RunLikeSwiftTest.swift")
    let lines = try String(contentsOf: source, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
    return try XCTUnwrap(lines.firstIndex { $0.contains(text) }, text) + 1
  }

  func testEveryTestIsReportedOnceWithItsVerdict() throws {
    try assertTheFixtureRuns([], attempts: 1)
  }

  /// Without rude tests, Swift Testing runs side by side and in a serialized suite's order, as
  /// under `swift test`: each test gets the verdict `swift test --filter Suite` gives it.
  func testSwiftTestingRunsItsTestsAsSwiftTestDoes() throws {
    try Self.package.build()
    let json = path("events.jsonl")
    let run = try runToEnd(try builtHarness(), [
      "test", "--package-path", Self.fixture.path, "--skip-build", "--json", json,
      "--filter", "OnlyInParallel", "--filter", "InItsOrder", "--filter", "OtherEnds",
      "--", "--scratch-path", Self.scratch.path,
    ], limit: 300)
    XCTAssertEqual(run.status, 0, run.errors)
    var verdicts: [String: Verdict] = [:]
    var ran: [String: (started: Date, ended: Date)] = [:]
    var warnings: [String: [String]] = [:]
    var attachments: [String: [String]] = [:]
    for line in try String(contentsOfFile: json, encoding: .utf8).split(separator: "\n") {
      switch try Event(jsonLine: line).kind {
      case .testEnded(let test, let result):
        verdicts[test.path] = result.verdict
        let attempt = result.lastAttempt
        ran[test.path] = try XCTUnwrap(attempt.started).map { ($0, $0 + attempt.duration) }
      case .issueRecorded(let test, let issue) where issue.kind == .warning: warnings[test.path, default: []].append(issue.message)
      case .issueRecorded(let test, let issue) where issue.kind == .attachment: attachments[test.path, default: []].append(issue.message)
      default: break
      }
    }
    var expected = Self.verdicts.filter { test in ["OnlyInParallel", "InItsOrder", "OtherEnds"].contains { test.key.contains($0) } }
    expected["LedgerTests.OtherEnds/crashesForTwo(value:)"] = .passed  // crashes only when rude
    XCTAssertEqual(verdicts, expected)
    // Warnings are on, as under `swift test`: a test's issue handler is handed its warning
    // (countsItsWarning passes), and the report shows each, which version 0 of the stream left out.
    XCTAssertEqual(warnings["LedgerTests.OtherEnds/recordsAWarning()"], ["Issue recorded - only a warning"])
    XCTAssertNil(warnings["LedgerTests.OtherEnds/countsItsWarning()"])
    // An attachment is said in Swift Testing's words, as `swift test` says it (`⎙ Attached …`),
    // and fails nothing; its megabyte (in base64, on the channel) reached the harness whole.
    XCTAssertEqual(attachments, ["LedgerTests.OtherEnds/attachesALog()": ["Attached 'ledger.log' to attachesALog()."]])
    XCTAssertTrue(run.output.contains("/LedgerTests/RunLikeSwiftTest.swift:\(try Self.fixtureLine(containing: "named: \"ledger.log\"")): "
                                        + "Attached 'ledger.log' to attachesALog().\n"), run.output)
    // The tests that meet ran at once, and their attempts say so: each started, by the
    // bundle's own records, before the other ended, though the runner heard of them in turn.
    let one = try XCTUnwrap(ran["LedgerTests.OnlyInParallel/meetsTheOtherOne()"])
    let two = try XCTUnwrap(ran["LedgerTests.OnlyInParallel/meetsTheOtherTwo()"])
    XCTAssertTrue(one.started < two.ended && two.started < one.ended, "\(one) and \(two) do not overlap")
  }

  /// `--rerun-failed` runs again exactly the tests that failed or errored in the last run of
  /// the same build, and says so. The bundle runs from a scratch path of this test's own: the
  /// record of the last run is kept beside the bundle, and the other tests of the fixture run
  /// it meanwhile (`--workers 2`).
  func testRerunFailedRunsTheTestsThatFailedLastTime() throws {
    try Self.package.build()
    let own = directory.appendingPathComponent("scratch")
    try FileManager.default.createDirectory(at: own.appendingPathComponent("debug"), withIntermediateDirectories: true)
    let bundle = "debug/ExistingTestsPackageTests.xctest"
    try FileManager.default.copyItem(at: Self.scratch.appendingPathComponent(bundle), to: own.appendingPathComponent(bundle))
    let build = ["--", "--scratch-path", own.path]
    let first = path("first.jsonl")
    var run = try runToEnd(try builtHarness(), ["test", "--package-path", Self.fixture.path, "--skip-build", "--json", first] + build,
                           limit: 300)
    XCTAssertEqual(run.status, 1, run.errors)
    var failed: Set<String> = []
    for line in try String(contentsOfFile: first, encoding: .utf8).split(separator: "\n") {
      if case .testEnded(let test, let result) = try Event(jsonLine: line).kind, result.verdict.isFailure {
        failed.insert(test.path)
      }
    }
    XCTAssertEqual(failed, Set(Self.verdicts.filter { $0.value.isFailure && !Self.failsOnlyWhenRude($0.key) }.keys))
    let again = path("again.jsonl")
    run = try runToEnd(try builtHarness(), ["test", "--package-path", Self.fixture.path, "--skip-build", "--rerun-failed",
                                       "--json", again] + build, limit: 300)
    XCTAssertEqual(run.status, 1, run.errors)
    XCTAssertTrue(run.output.hasPrefix("Rerunning \(failed.count) tests that failed or errored in the last run ("), run.output)
    var rerun: Set<String> = []
    for line in try String(contentsOfFile: again, encoding: .utf8).split(separator: "\n") {
      if case .testEnded(let test, _) = try Event(jsonLine: line).kind { rerun.insert(test.path) }
    }
    XCTAssertEqual(rerun, failed)
  }

  func testTwoWorkersRunTheSuitesSideBySide() throws {
    try assertTheFixtureRuns(["--workers", "2"], attempts: 1)
  }

  /// Issue 51: a class the times given make long (70 s of LedgerXCTests, 10 ms for every other
  /// test) is cut where each worker's share ends, and its pieces run in both workers, each in a
  /// bundle of its own: every test still ends as it does in one worker, and nothing fails
  /// outside the tests.
  func testTwoWorkersCutALongClassAndEveryTestEndsAsInOne() throws {
    let timings = path("timings.xml")
    // A path is `suite/name`; a Swift Testing suite's name holds a slash when it is nested.
    let cases = Self.verdicts.keys.sorted().map { path in
      let slash = path.lastIndex(of: "/")!
      let suite = path[..<slash]
      return "<testcase classname=\"\(suite)\" name=\"\(path[path.index(after: slash)...])\" "
        + "time=\"\(suite == "LedgerTests.LedgerXCTests" ? 10 : 0.01)\"/>"
    }
    try "<testsuites><testsuite name=\"earlier\">\(cases.joined())</testsuite></testsuites>\n"
      .write(toFile: timings, atomically: true, encoding: .utf8)
    let recorded = try assertTheFixtureRuns(["--workers", "2", "--shard-timings", timings], attempts: 1)
    let lanes = Set(recorded.ends.filter { $0.test.suite == "LedgerTests.LedgerXCTests" }.flatMap { $0.end.attempts.map(\.lane) })
    XCTAssertEqual(lanes, [1, 2], "the class ran in both workers")
  }

  func testRetriesRunEachFailingTestAgain() throws {
    try assertTheFixtureRuns(["--retries", "1"], attempts: 2)
  }

  func testADirectoryWithoutAPackageIsAUsageError() throws {
    let run = try runToEnd(try builtHarness(), ["test", "--package-path", directory.path])
    XCTAssertEqual(run.status, 2)
    XCTAssertTrue(run.errors.contains("error: no Package.swift in \(directory.path)"), run.errors)
  }

  func testAFailedBuildShowsItsOutputAndExitsWithStatus2() throws {
    try FileManager.default.createDirectory(at: directory.appendingPathComponent("Sources/Broken"),
                                            withIntermediateDirectories: true)
    try """
      // swift-tools-version: 6.0
      import PackageDescription
      let package = Package(name: "Broken", targets: [.target(name: "Broken")])
      """.write(to: directory.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
    try "let broken: Int = \"not a number\"\n"
      .write(to: directory.appendingPathComponent("Sources/Broken/Broken.swift"), atomically: true, encoding: .utf8)
    let run = try runToEnd(try builtHarness(), ["test", "--package-path", directory.path], limit: 300)
    XCTAssertEqual(run.status, 2)
    XCTAssertTrue(run.errors.contains("error: swift build --build-tests failed (exit status 1):"), run.errors)
    XCTAssertTrue(run.errors.contains("Broken.swift:1"), run.errors)
  }

  func testSkipBuildRunsWhatIsBuiltWithoutBuilding() throws {
    // A package that would not build: with --skip-build nothing builds it, so the run ends
    // at the missing bundle instead of at the build's error.
    try FileManager.default.createDirectory(at: directory.appendingPathComponent("Sources/Broken"),
                                            withIntermediateDirectories: true)
    try FileManager.default.createDirectory(at: directory.appendingPathComponent("Tests/BrokenTests"),
                                            withIntermediateDirectories: true)
    try """
      // swift-tools-version: 6.0
      import PackageDescription
      let package = Package(name: "Broken", targets: [
        .target(name: "Broken"), .testTarget(name: "BrokenTests", dependencies: ["Broken"]),
      ])
      """.write(to: directory.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
    try "let broken: Int = \"not a number\"\n"
      .write(to: directory.appendingPathComponent("Sources/Broken/Broken.swift"), atomically: true, encoding: .utf8)
    try "import XCTest\n"
      .write(to: directory.appendingPathComponent("Tests/BrokenTests/BrokenTests.swift"), atomically: true, encoding: .utf8)
    let run = try runToEnd(try builtHarness(), ["test", "--package-path", directory.path, "--skip-build"], limit: 300)
    XCTAssertEqual(run.status, 2)
    XCTAssertFalse(run.errors.contains("Building the tests"), run.errors)
    XCTAssertFalse(run.errors.contains("swift build --build-tests failed"), run.errors)
    XCTAssertTrue(run.errors.contains("error: no test bundle (*PackageTests.xctest)"), run.errors)
    XCTAssertTrue(run.errors.contains("--skip-build builds nothing"), run.errors)
  }

  func testSkipBuildRunsTheFixtureAsBuilt() throws {
    try Self.package.build()
    try assertEveryTestEnds(["--package-path", Self.fixture.path, "--skip-build", "--", "--scratch-path", Self.scratch.path])
  }

  /// Without build flags the bundle is looked for where SwiftPM builds by default,
  /// `.build/debug`, without asking SwiftPM: here a link to the fixture's build, which SwiftPM
  /// would not name (it would say `.build/<triple>/debug`, where there is nothing).
  func testWithoutBuildFlagsTheBundleIsFoundInBuildDebug() throws {
    try Self.package.build()
    try FileManager.default.createDirectory(at: directory.appendingPathComponent(".build"), withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(at: directory.appendingPathComponent(".build/debug"),
                                               withDestinationURL: Self.scratch.appendingPathComponent("debug"))
    // The package's files, which its tests read by relative paths in the package's directory.
    for item in ["Package.swift", "Tests"] {
      try FileManager.default.createSymbolicLink(at: directory.appendingPathComponent(item),
                                                 withDestinationURL: Self.fixture.appendingPathComponent(item))
    }
    try assertEveryTestEnds(["--package-path", directory.path, "--skip-build"])
  }

  /// Runs `harness test` with `arguments`, `--json`, `--trace` and `--report-html`: the fixture's tests, not rude,
  /// every one ends and the run fails.
  private func assertEveryTestEnds(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws {
    let json = path("events.jsonl")
    let run = try runToEnd(try builtHarness(), ["test", "--json", json, "--trace", path("trace.json"),
                                           "--report-html", path("report.html")] + arguments, limit: 300)
    XCTAssertEqual(run.status, 1, run.errors, file: file, line: line)
    XCTAssertFalse(run.errors.contains("Building the tests"), run.errors, file: file, line: line)
    var ended: Set<String> = []
    for line in try String(contentsOfFile: json, encoding: .utf8).split(separator: "\n") {
      if case .testEnded(let test, _) = try Event(jsonLine: line).kind { ended.insert(test.path) }
    }
    // Without EXISTING_TESTS_RUDE, the rude tests return at once: every test still ends.
    XCTAssertEqual(ended, Set(Self.verdicts.keys), file: file, line: line)
    // The trace has a slice for each, and the page a failure for each that failed.
    let trace = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path("trace.json")))) as? [String: Any]
    let slices = (trace?["traceEvents"] as? [[String: Any]] ?? []).filter { $0["cat"] as? String == "test" }
    XCTAssertEqual(Set(slices.compactMap { $0["name"] as? String }), ended)
    let page = try XMLReader.readDocument(path("report.html"))
    let failures = page.descendants.filter { $0.attribute("class") == "failure" }
    XCTAssertEqual(Set(failures.compactMap { $0.elements(named: "h3").first?.text }),
                   Set(Self.verdicts.filter { $0.value.isFailure && !Self.failsOnlyWhenRude($0.key) }.keys))
    // The page names each test's testing library where a harness suite names its waiter.
    XCTAssertTrue(page.descendants.contains { $0.attribute("class") == "facts" && $0.text.contains("libraries: xctest, swift-testing") })
    let failure = failures.first { $0.elements(named: "h3").first?.text == "LedgerTests.LedgerXCTests/testFailsWithXCTAssert" }
    XCTAssertEqual(failure?.elements(named: "p").first { $0.attribute("class") == "facts" }?.text.hasPrefix("failed · library xctest · attempt 1"), true,
                   file: file, line: line)
    XCTAssertEqual(failure?.descendants.first { $0.attribute("class") == "location" }?.text.hasSuffix("LedgerXCTests.swift:17"), true)
  }

  // MARK: Helpers

  @discardableResult
  private func assertTheFixtureRuns(_ flags: [String], attempts: Int) throws -> EventRecorder {
    let harness = try builtHarness()
    try Self.package.build()
    let junit = path("junit.xml")
    let json = path("events.jsonl")
    var environment = ProcessInfo.processInfo.environment
    environment["EXISTING_TESTS_RUDE"] = "1"
    let run = try runToEnd(harness, [
      "test", "--package-path", Self.fixture.path, "--time-limit", String(Self.timeLimit), "--junit", junit,
      "--json", json,
    ] + flags + ["--", "--scratch-path", Self.scratch.path], environment: environment, limit: 300)
    XCTAssertEqual(run.status, 1, run.errors)

    let recorded = try EventRecorder(jsonLines: String(contentsOfFile: json, encoding: .utf8))
    var results: [String: TestResult] = [:]
    var outputs: [String: String] = [:]
    var runDuration: Double?
    for (test, result, _) in recorded.results { results[test.path] = result }
    for event in recorded.events {
      switch event.kind {
      case .outputCaptured(let test, let text): outputs[test.path, default: ""] += text
      case .runEnded(_, let duration): runDuration = duration
      // Each rude test's crash is its own (it crashes again alone): none is outside every test.
      case .outsideFailure(let failure): XCTFail("no failure is outside every test: \(failure)")
      default: break
      }
    }
    XCTAssertEqual(results.mapValues(\.verdict).filter { !Self.passOnlyAsSwiftTestRunsThem.contains($0.key) },
                   Self.verdicts.filter { !Self.passOnlyAsSwiftTestRunsThem.contains($0.key) })
    XCTAssertEqual(Set(results.keys), Set(Self.verdicts.keys))
    for (test, end) in recorded.ends {
      // One attempt, or one per retry for a test that fails every attempt.
      XCTAssertEqual(end.attempts.count, end.verdict.isFailure ? attempts : 1, test.path)
      XCTAssertEqual(end.attempts.map(\.number), Array(1...end.attempts.count), test.path)
      XCTAssertTrue(end.retriedAttempts.allSatisfy(\.outcome.isFailure), test.path)
    }
    let rude = "LedgerTests.RudeXCTests/"
    let last = { (test: String) in results[test]?.issues.last }
    XCTAssertEqual(last(rude + "testA_IndexPastTheEnd")?.kind, .crashed)
    XCTAssertTrue(last(rude + "testA_IndexPastTheEnd")?.message.contains(
      "testA_IndexPastTheEnd: printed before it goes\nSwift/ContiguousArrayBuffer.swift:692: Fatal error: Index out of range")
      == true, "\(String(describing: last(rude + "testA_IndexPastTheEnd")))")
    XCTAssertTrue(last(rude + "testB_FatalError")?.message.contains("Fatal error: fatalError in an XCTest") == true)
    XCTAssertTrue(last(rude + "testC_Exit")?.message.contains("ended with exit status 3") == true)
    XCTAssertEqual(last(rude + "testD_Hangs")?.kind, .timeLimitExceeded)
    XCTAssertTrue(last(rude + "testD_Hangs")?.message.contains("testD_Hangs: printed before it goes") == true)
    XCTAssertEqual(last("LedgerTests.LedgerXCTests/testThrows")?.kind, .errorThrown)
    XCTAssertEqual(results["LedgerTests.LedgerXCTests/testSkipped"]?.reason, "not on this machine")
    let failure = try XCTUnwrap(last("LedgerTests.LedgerXCTests/testFailsWithXCTAssert"))
    XCTAssertEqual(failure.sourceLocation?.fileName, "LedgerXCTests.swift")
    XCTAssertEqual(failure.sourceLocation?.line, 17)
    XCTAssertEqual(outputs["LedgerTests.LedgerXCTests/testPrints"],
                   "stdout line from testPrints\nstderr line from testPrints\n")
    // What a test printed of its library's words is its output, never its library's.
    let forged = "LedgerTests.ForgedLinesXCTests/"
    XCTAssertEqual(last(forged + "testPrintsAPassLineThenFails")?.message, "failed - failed after printing a pass line")
    XCTAssertEqual(outputs[forged + "testPrintsAnotherTestsStartLineAndPasses"],
                   "Test Case 'ForgedLinesXCTests.testNotThere' started at 2026-11-26 12:00:00.000\n"
                   + "Test Case 'LedgerXCTests.testPasses' started at 2026-11-26 12:00:00.000\n")
    XCTAssertEqual(results["LedgerTests.ForgedLinesSwiftTests/printsAnIssueRecordAndPasses()"]?.issues, [])
    XCTAssertEqual(last("LedgerTests.ForgedLinesSwiftTests/printsAnEndedRecordThenFails()")?.message,
                   "Expectation failed: Bool(false) - failed after printing a testEnded record")
    // A child left running is the test's leak, reported as harness suites report one; the run
    // never waits for it (the duration below).
    let leak = try XCTUnwrap(results["LedgerTests.LeakingXCTests/testLeavesAChildHoldingItsOutput"]?.issues.first)
    XCTAssertEqual(leak.kind, .leaked)
    XCTAssertTrue(leak.message.hasPrefix("Leaked work: the test returned while child processes it started are still running ("),
                  leak.message)
    XCTAssertTrue(leak.message.contains("/bin/sleep 30"), leak.message)

    let swift = "LedgerTests.RudeSwiftTests/"
    XCTAssertEqual(last(swift + "indexPastTheEnd()")?.kind, .crashed)
    XCTAssertTrue(last(swift + "indexPastTheEnd()")?.message.contains(
      "indexPastTheEnd: printed before it goes\nSwift/ContiguousArrayBuffer.swift:692: Fatal error: Index out of range")
      == true, "\(String(describing: last(swift + "indexPastTheEnd()")))")
    XCTAssertTrue(last(swift + "callsFatalError()")?.message.contains("Fatal error: fatalError in a Swift Testing test") == true)
    XCTAssertTrue(last(swift + "callsExit()")?.message.contains("ended with exit status 3") == true)
    XCTAssertEqual(last(swift + "hangs()")?.kind, .timeLimitExceeded)
    XCTAssertTrue(last(swift + "hangs()")?.message.contains("hangs: printed before it goes") == true)
    let suite = "LedgerTests.LedgerSuite/"
    let expectFailure = try XCTUnwrap(last(suite + "failsWithExpect()"))
    XCTAssertEqual(expectFailure.kind, .expectationFailed)
    XCTAssertEqual(expectFailure.message, "Expectation failed: (ledger.balance → 2) == 3 - two is not three")
    XCTAssertEqual(expectFailure.sourceLocation?.fileName, "LedgerSwiftTests.swift")
    XCTAssertEqual(expectFailure.sourceLocation?.line, 17)
    XCTAssertEqual(last(suite + "throwsAnError()")?.kind, .errorThrown)
    XCTAssertEqual(last(suite + "throwsAnError()")?.sourceLocation?.line, 20)
    XCTAssertEqual(last(suite + "asyncFails()")?.sourceLocation?.line, 61)
    XCTAssertEqual(results[suite + "disabled()"]?.reason, "not on this machine")
    XCTAssertEqual(results["LedgerTests.DisabledSuite/neverRuns()"]?.reason, "the whole suite is off")
    // A known issue does not fail its test: a warning says it occurred.
    let known = try XCTUnwrap(results[suite + "knownIssue()"]?.issues)
    XCTAssertEqual(known.map(\.kind), [.warning])
    XCTAssertEqual(known.first?.message,
                   "known issue: Expectation failed: (Ledger().balance → 0) == 1 - rounding is off by one")
    XCTAssertEqual(known.first?.sourceLocation?.line, 34)
    // One test per function; the failing case is named by its arguments.
    let parameterized = try XCTUnwrap(results[suite + "parameterized(amount:)"]?.issues)
    XCTAssertEqual(parameterized.map(\.message),
                   ["Expectation failed: (ledger.balance → 2) != 2 - amount 2 (arguments: 2)"])
    XCTAssertEqual(parameterized.first?.sourceLocation?.line, 41)
    // Swift Testing runs its tests side by side: what prints() printed is its output, marked
    // as shared when other tests ran at the same moment (what they printed then is there too).
    let printed = (outputs[suite + "prints()"] ?? "").split(separator: "\n").map { $0.replacingOccurrences(of: "[shared] ", with: "") }
    XCTAssertTrue(printed.contains("stdout line from prints()") && printed.contains("stderr line from prints()"),
                  "\(printed)")
    // Names a suite repeats are numbered, each standing for its own test.
    XCTAssertEqual(last("LedgerTests.Repeats/overloaded(amount:)#01")?.message,
                   #"Expectation failed: (amount → "one") == "two" - the String overload (arguments: "one")"#)
    XCTAssertEqual(last("LedgerTests.Repeats/Same words#01")?.message, "Issue recorded - the second test with these words")

    // Each hang (one XCTest, one Swift Testing) is stopped at its limit each attempt, side
    // by side or one after the other, never waited for: they block forever. (How long the
    // rest takes depends on the machine's load: 14 s here alone, 18 s in a full run.)
    let duration = try XCTUnwrap(runDuration)
    XCTAssertGreaterThanOrEqual(duration, Self.timeLimit * Double(attempts))
    XCTAssertLessThan(duration, 90, "the hangs were stopped at their time limit")

    // The report's totals are the run's own verdicts (checked above).
    let final = results.values.map(\.verdict)
    try assertCheckerPasses(junit, [
      "--expect-tests", String(final.count),
      "--expect-failures", String(final.filter { $0 == .failed }.count),
      "--expect-errors", String(final.filter { $0 == .errored }.count),
      "--expect-skipped", String(final.filter { $0 == .skipped }.count),
    ])
    return recorded
  }
}
