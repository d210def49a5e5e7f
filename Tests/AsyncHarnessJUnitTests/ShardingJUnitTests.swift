import AsyncHarness
import AsyncHarnessShared
import Foundation
import HarnessTestSupport
import XCTest
@testable import AsyncHarnessJUnit

/// Shards end to end with their JUnit reports: balancing by a previous report's times,
/// merging the shards' reports into the unsharded run's, and the Bazel test protocol.
final class ShardingJUnitTests: ReportTestCase {
  /// Twelve tests that each wait on a probe until their duration has passed: 10 ms to 120 ms.
  private let durations: [Suite] = [
    Suite("Durations") {
      for milliseconds in stride(from: 120, through: 10, by: -10) {
        Test("takes \(milliseconds) ms") { t in
          let deadline = ContinuousClock.now + .milliseconds(milliseconds)
          try t.wait(until: "\(milliseconds) ms passed", timeout: .seconds(5)) { ContinuousClock.now >= deadline }
        }
      }
    },
  ]

  /// Passing, failing, skipped and known-issue tests in four suites.
  private let mixed: [Suite] = [
    Suite("Calculator") {
      Test("adds") { t in t.expect(1 + 1 == 2) }
      Test("fails") { t in t.fail("broken") }
      Test("skipped", .skip("not today")) { _ in }
    },
    Suite("Loader") {
      Test("loads") { t in t.expect(true) }
      Test("known", .knownIssue("flaky server")) { t in t.fail("timeout") }
    },
    Suite("Store") { for name in ["saves", "deletes", "a/b"] { Test(name) { t in t.expect(true) } } },
    Suite("Paths/ünï") { Test("名前") { t in t.expect(true) } },
  ]

  private func run(_ arguments: [String], suites: [Suite], environment: [String: String] = [:])
    -> (status: Int32, output: String, errors: String) {
    let output = WrittenText()
    let errors = WrittenText()
    let status = HarnessMain.status(arguments: arguments, suites: suites, junit: JUnitReporter.factory, console: .plain,
                                    output: output.write, errors: errors.write, environment: environment)
    return (status, output.text, errors.text)
  }

  /// Each testcase of a report as `classname | name | result element`, sorted.
  private func testCases(_ report: String) throws -> [String] {
    let root = try XMLReader.readDocument(report)
    return root.elements(named: "testsuite").flatMap { suite in
      suite.elements(named: "testcase").map { testCase in
        let result = testCase.elements.first { ["failure", "error", "skipped"].contains($0.name) }?.name ?? "passed"
        return "\(testCase.attribute("classname")!) | \(testCase.attribute("name")!) | \(result)"
      }
    }.sorted()
  }

  /// How far the slowest shard's predicted time is above total/N, in percent.
  private func excess(_ predicted: [Double]) -> Double {
    100 * (predicted.max()! * Double(predicted.count) / predicted.reduce(0, +) - 1)
  }

  func testLongestFirstKeepsTheSlowestShardWithinTenPercentOnKnownDurations() throws {
    // Forty tests in eight suites with known durations from 0.05 s to 3 s, as a report.
    var generator = SeededRandomGenerator(seed: 10)
    let tests = (1...40).map { TestPath(suite: "Suite \($0 % 8)", name: "test \($0)") }
    let seconds = tests.map { _ in Double(Int.random(in: 50...3000, using: &generator)) / 1000 }
    let events = runEvents((0..<8).flatMap { suite -> [Event] in
      let run = SuiteRun(suite: "Suite \(suite)", host: "semaphore")
      return [Event(.suiteStarted(run))] + tests.indices.filter { tests[$0].suite == run.suite }.flatMap { index in
        let test = TestID(suite: run.suite, name: tests[index].name, host: "semaphore")
        return [Event(.testStarted(test)), Event(.testEnded(test, TestEnd(once: TestResult(verdict: .passed), duration: seconds[index])))]
      } + [Event(.suiteEnded(run, Summary(), duration: 1))]
    })
    _ = try report(events, file: "known.xml")
    let timings = try readJUnitTimings(path("known.xml"))
    XCTAssertEqual(timings.count, 40)
    for count in 2...5 {
      let balanced = try XCTUnwrap(Sharding(Shard(index: 1, count: count), granularity: .test, timings: timings)
        .assignment(of: tests).predictedSeconds)
      XCTAssertEqual(balanced.reduce(0, +), seconds.reduce(0, +), accuracy: 1e-6)
      XCTAssertLessThanOrEqual(excess(balanced), 10, "\(count) shards: \(balanced)")
      let hashed = Sharding(Shard(index: 1, count: count), granularity: .test).assignment(of: tests)
      let hashedSeconds = (1...count).map { shard in tests.indices.filter { hashed.shards[tests[$0]] == shard }.map { seconds[$0] }.reduce(0, +) }
      print(String(format: "balance: %d shards, slowest above total/N: %.1f %% by timings, %.1f %% by hash",
                   count, excess(balanced), excess(hashedSeconds)))
    }
  }

  func testTimingsOfARealRunBalanceItsShards() throws {
    XCTAssertEqual(run(["--junit", path("previous.xml")], suites: durations).status, 0)
    let timings = try readJUnitTimings(path("previous.xml"))
    XCTAssertEqual(timings.count, 12)
    let tests = durations[0].tests.map { TestPath(suite: "Durations", name: $0.name) }
    let assignment = Sharding(Shard(index: 1, count: 3), granularity: .test, timings: timings).assignment(of: tests)
    let predicted = try XCTUnwrap(assignment.predictedSeconds)
    XCTAssertEqual(predicted.reduce(0, +), timings.reduce(0) { $0 + $1.seconds }, accuracy: 1e-9)
    // Twelve tests of 10 ms to 120 ms (and what running them added): measured, so 15 % rather
    // than 10 %, with room for a loaded machine.
    XCTAssertLessThanOrEqual(excess(predicted), 15, "\(predicted)")
    print(String(format: "balance: a real run's 3 shards, slowest above total/3: %.1f %%", excess(predicted)))
    // The shards the command line runs are the ones the plan predicts, and cover every test once.
    let lists = (1...3).map { index in
      run(["--list", "--shard", "\(index)/3", "--shard-by", "test", "--shard-timings", path("previous.xml")],
          suites: durations).output.split(separator: "\n").map(String.init)
    }
    for (index, list) in lists.enumerated() {
      XCTAssertEqual(list, tests.filter { assignment.shards[$0] == index + 1 }.map(\.description))
    }
  }

  func testATimingsReportOfOtherTestsIsAWarning() throws {
    _ = run(["--junit", path("other.xml")], suites: mixed)
    let result = run(["--list", "--shard", "1/2", "--shard-by", "test", "--shard-timings", path("other.xml")], suites: durations)
    XCTAssertEqual(result.status, 0)
    XCTAssertEqual(result.errors, "warning: --shard-timings \(path("other.xml")) holds none of the 12 selected tests: "
      + "each counts as 1 s, so shards are balanced by test count\n")
    XCTAssertEqual(result.output.split(separator: "\n").count, 6, "12 tests of 1 s each, 6 a shard")
  }

  func testAnUnreadableTimingsReportIsAUsageError() {
    let result = run(["--shard", "1/2", "--shard-timings", path("missing.xml")], suites: mixed)
    XCTAssertEqual(result.status, 2)
    XCTAssertEqual(result.errors, "error: cannot read the JUnit report \(path("missing.xml")): No such file or directory\n")
  }

  func testMergingEveryShardGivesTheUnshardedRun() throws {
    for granularity in ["suite", "test"] {
      XCTAssertEqual(run(["--waiter", "all", "--junit", path("all.xml")], suites: mixed).status, 1)
      let shards = (1...3).map { path("shard-\($0).xml") }
      for (index, shard) in shards.enumerated() {
        _ = run(["--waiter", "all", "--shard", "\(index + 1)/3", "--shard-by", granularity, "--junit", shard], suites: mixed)
        XCTAssertEqual(try XMLReader.readDocument(shard).attribute("name"), "AsyncHarness (shard \(index + 1)/3)")
      }
      try mergeJUnitReports(shards, into: path("merged.xml"), expectShards: 3)
      XCTAssertEqual(try testCases(path("merged.xml")), try testCases(path("all.xml")), granularity)
      let merged = try XMLReader.readDocument(path("merged.xml"))
      let all = try XMLReader.readDocument(path("all.xml"))
      for count in ["tests", "failures", "errors"] {
        XCTAssertEqual(merged.attribute(count), all.attribute(count), "\(count) by \(granularity)")
      }
    }
  }

  func testMergingWithExpectShardsNamesWhatIsMissing() throws {
    for index in 1...3 { _ = run(["--shard", "\(index)/3", "--junit", path("shard-\(index).xml")], suites: mixed) }
    _ = run(["--junit", path("unsharded.xml")], suites: mixed)
    _ = run(["--shard", "1/2", "--junit", path("other.xml")], suites: mixed)
    let cases: [([String], String)] = [
      (["shard-1.xml", "shard-3.xml"],
       "the reports are not those of every shard: no report of shard 2/3 (it may have ended before writing one); 2 of 3 shards reported"),
      (["shard-1.xml", "shard-2.xml", "shard-2.xml", "shard-3.xml"],
       "the reports are not those of every shard: shard 2/3 reported more than once: \(path("shard-2.xml")), \(path("shard-2.xml"))"),
      (["shard-1.xml", "unsharded.xml"],
       "the reports are not those of every shard: \(path("unsharded.xml")) is not a shard's report (its root is named \"AsyncHarness\", not \"AsyncHarness (shard I/N)\")"),
      (["shard-1.xml", "other.xml"],
       "the reports are not those of every shard: \(path("other.xml")) is the report of shard 1/2, not of one of 3 shards"),
    ]
    for (inputs, message) in cases {
      XCTAssertThrowsError(try mergeJUnitReports(inputs.map(path), into: path("merged.xml"), expectShards: 3)) {
        XCTAssertEqual("\($0)", message)
      }
      XCTAssertFalse(FileManager.default.fileExists(atPath: path("merged.xml")))
    }
  }

  func testARunUnderBazelNeedsNoFlags() throws {
    let xml = path("test.xml")
    let status = path("shard-status")
    let premature = path("premature-exit")
    // A test that sees the premature-exit file while the run is going on.
    let suites = mixed + [
      Suite("Store under Bazel") { Test("sees the premature-exit file") { t in t.expect(FileManager.default.fileExists(atPath: premature)) } },
    ]
    for index in 0..<2 {
      let result = run([], suites: suites, environment: [
        "TEST_TOTAL_SHARDS": "2", "TEST_SHARD_INDEX": "\(index)", "TEST_SHARD_STATUS_FILE": status,
        "XML_OUTPUT_FILE": xml, "TEST_PREMATURE_EXIT_FILE": premature, "TESTBRIDGE_TEST_ONLY": "Store",
      ])
      XCTAssertEqual(result.status, 0, result.errors)
      XCTAssertTrue(FileManager.default.fileExists(atPath: status))
      XCTAssertFalse(FileManager.default.fileExists(atPath: premature), "a normal end removes the premature-exit file")
      let root = try XMLReader.readDocument(xml)
      XCTAssertEqual(root.attribute("name"), "AsyncHarness (shard \(index + 1)/2)")
      // The filter selects the suites Store and Store under Bazel, each in its shard.
      let expected = ["Store": 3, "Store under Bazel": 1].filter { StableHash.shard(of: $0.key, count: 2) == index + 1 }.values.reduce(0, +)
      XCTAssertEqual(root.attribute("tests"), "\(expected)")
    }
  }

  func testTheGitHubProfileGivesEveryTestcaseItsFileForSplitters() throws {
    XCTAssertEqual(run(["--junit", path("github.xml"), "--junit-profile", "github"], suites: mixed).status, 1)
    let testCases = try XMLReader.readDocument(path("github.xml")).elements(named: "testsuite").flatMap { $0.elements(named: "testcase") }
    XCTAssertEqual(testCases.count, 9)
    for testCase in testCases {
      XCTAssertEqual(testCase.attribute("file"), "Tests/AsyncHarnessJUnitTests/ShardingJUnitTests.swift", "\(testCase.attributes)")
      XCTAssertNotNil(testCase.attribute("time"))
    }
    let lines = testCases.map { "\($0.attribute("name")!):\($0.attribute("line")!)" }
    // Where each test is declared, and for the failing one, where it failed.
    XCTAssertEqual(lines, ["adds:26", "fails:27", "skipped:28", "loads:31", "known:32", "saves:34", "deletes:34", "a/b:34", "名前:35"])
  }

  /// The fixture run as Bazel runs a test: only variables, no flag.
  private func bazelEnvironment(filter: String) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    environment["TMPDIR"] = nil
    environment["TEST_TMPDIR"] = directory.path
    environment["TEST_PREMATURE_EXIT_FILE"] = path("premature-exit")
    environment["XML_OUTPUT_FILE"] = path("test.xml")
    environment["TESTBRIDGE_TEST_ONLY"] = filter
    return environment
  }

  func testUnderBazelWorkersGetTestTmpdirAndANormalEndRemovesThePrematureExitFile() throws {
    let run = try runToEnd(try harnessFixture(), [], environment: bazelEnvironment(filter: "Environment/"))
    XCTAssertEqual(run.status, 0, run.errors)
    XCTAssertFalse(FileManager.default.fileExists(atPath: path("premature-exit")))
    let testCase = try XCTUnwrap(XMLReader.readDocument(path("test.xml")).elements(named: "testsuite").first?
      .elements(named: "testcase").first)
    XCTAssertEqual(testCase.attribute("name"), "prints the temporary directory")
    XCTAssertEqual(testCase.elements(named: "system-out").first?.text, directory.path + "\n")
  }

  func testUnderBazelARunEndedBySIGKILLLeavesThePrematureExitFile() throws {
    let process = Process()
    process.executableURL = try harnessFixture()
    process.arguments = ["--no-capture"]  // in-process, and "blocking" reaches the pipe
    process.environment = bazelEnvironment(filter: "Fixture/blocks")
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    var seen = ""
    while !seen.contains("blocking\n") {
      let data = output.fileHandleForReading.availableData
      guard !data.isEmpty else { break }
      seen += String(decoding: data, as: UTF8.self)
    }
    XCTAssertEqual(seen, "blocking\n")
    XCTAssertTrue(FileManager.default.fileExists(atPath: path("premature-exit")), "created at the start")
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    XCTAssertEqual(process.terminationReason, .uncaughtSignal)
    XCTAssertTrue(FileManager.default.fileExists(atPath: path("premature-exit")), "left behind by a premature exit")
  }
}
