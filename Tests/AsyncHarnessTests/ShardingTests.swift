import AsyncHarness
import Foundation
import HarnessTestSupport
import XCTest

/// Exact test IDs, `--only`, `--shard` and the Bazel test protocol (issue 10).
final class ShardingTests: XCTestCase {
  /// Eight suites of three tests, and one whose names need escaping.
  private let suites: [Suite] = (1...8).map { number in
    Suite("Suite \(number)") {
      for test in ["loads", "saves", "deletes"] { Test(test) { t in t.expect(true) } }
    }
  } + [
    Suite("Paths/and names") {
      Test("a/b", .tags("slashes")) { t in t.expect(true) }
      Test("ünïcödé 名前") { t in t.expect(true) }
      Test("back\\slash and\nnewline") { t in t.expect(true) }
    },
  ]

  private func run(_ arguments: [String], environment: [String: String] = [:])
    -> (status: Int32, output: String, errors: String) {
    let output = WrittenText()
    let errors = WrittenText()
    let status = HarnessMain.status(arguments: arguments, suites: suites, console: .plain, output: output.write,
                                    errors: errors.write, environment: environment)
    return (status, output.text, errors.text)
  }

  private func list(_ arguments: [String] = [], environment: [String: String] = [:]) -> [String] {
    let result = run(["--list"] + arguments, environment: environment)
    XCTAssertEqual(result.status, 0, result.errors)
    return result.output.split(separator: "\n").map(String.init)
  }

  private func temporaryFile(_ text: String) throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("only-\(UUID()).txt").path
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
    return path
  }

  // MARK: Identities

  func testIDsEscapeSlashesBackslashesAndLineBreaksOnly() {
    XCTAssertEqual(TestPath(suite: "Paths/and names", name: "a/b").description, #"Paths\/and names/a\/b"#)
    XCTAssertEqual(TestPath(suite: "S", name: "back\\slash and\nnewline\r").description, #"S/back\\slash and\nnewline\r"#)
    XCTAssertEqual(TestPath(suite: "Ünï cödé", name: "名前 ").description, "Ünï cödé/名前 ")
  }

  func testIDsRoundTrip() throws {
    let names = ["a/b", "/", "//", "\\", "\\/", "a\\nb", "line\nbreak", "crlf\r\n", "名前 with spaces ", "", "ü/\\n/"]
    for suite in names {
      for name in names {
        let test = TestPath(suite: suite, name: name)
        XCTAssertEqual(try TestPath(parsing: test.description), test, test.description)
        XCTAssertFalse(test.description.contains("\n"), test.description)
      }
    }
  }

  func testMalformedIDsNameTheProblem() {
    let cases = [
      ("Calculator", "\"Calculator\" is not a test ID (Suite/test): no / between the suite and the test"),
      ("a/b/c", "\"a/b/c\" is not a test ID (Suite/test): a second unescaped / (write a / inside a name as \\/)"),
      (#"a/b\x"#, #""a/b\x" is not a test ID (Suite/test): unknown escape \x (escapes are \\, \/, \n, \r)"#),
      (#"a/b\"#, #""a/b\" is not a test ID (Suite/test): a \ at the end (write a \ inside a name as \\)"#),
    ]
    for (id, message) in cases {
      XCTAssertThrowsError(try TestPath(parsing: id), id) { XCTAssertEqual("\($0)", message) }
    }
  }

  func testListPrintsOneIDALine() {
    XCTAssertEqual(list(["--filter", "Paths"]), [#"Paths\/and names/a\/b"#, "Paths\\/and names/ünïcödé 名前",
                                                 #"Paths\/and names/back\\slash and\nnewline"#])
  }

  func testListAsJSONGivesSuiteNameTagsFileAndLine() throws {
    let lines = list(["--format", "json", "--filter", "a/b"])
    XCTAssertEqual(lines.count, 1)
    let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
    XCTAssertEqual(object["id"] as? String, #"Paths\/and names/a\/b"#)
    XCTAssertEqual(object["suite"] as? String, "Paths/and names")
    XCTAssertEqual(object["name"] as? String, "a/b")
    XCTAssertEqual(object["tags"] as? [String], ["slashes"])
    XCTAssertEqual(object["file"] as? String, "Tests/AsyncHarnessTests/ShardingTests.swift")
    XCTAssertEqual(object["line"] as? Int, 15)
  }

  func testTheListFedBackSelectsExactlyThoseTests() throws {
    let all = list()
    XCTAssertEqual(all.count, 27)
    let chosen = [all[1], all[24], all[25], all[26]]
    XCTAssertEqual(list(chosen.flatMap { ["--only", $0] }), chosen)
    XCTAssertEqual(list(["--only-from", try temporaryFile(chosen.joined(separator: "\r\n") + "\n\n")]), chosen)
    // --only is exact, where --filter matches a part: "Suite 1/loads" is not "Suite 1/loads" of "Suite 10".
    XCTAssertEqual(list(["--only", "Suite 1/loads", "--filter", "Suite"]), ["Suite 1/loads"])
  }

  func testUnknownOrMalformedIDsAreUsageErrors() throws {
    let unknown = run(["--only", "Suite 1/flies"])
    XCTAssertEqual(unknown.status, 2)
    XCTAssertEqual(unknown.errors, "error: --only \"Suite 1/flies\": no such test (--list shows the test IDs)\n")
    let malformed = run(["--only", "Suite 1"])
    XCTAssertEqual(malformed.errors, "error: --only: \"Suite 1\" is not a test ID (Suite/test): no / between the suite and the test\n")
    let file = try temporaryFile("Suite 1/loads\nSuite 2/sings\n")
    XCTAssertEqual(run(["--only-from", file]).errors,
                   "error: --only-from \(file):2: no test \"Suite 2/sings\" (--list shows the test IDs)\n")
    let missing = run(["--only-from", "/nonexistent/ids.txt"])
    XCTAssertEqual(missing.status, 2)
    XCTAssertEqual(missing.errors, "error: --only-from /nonexistent/ids.txt: cannot read the file: No such file or directory\n")
    XCTAssertTrue(run(["--format", "json"]).errors.hasPrefix("error: --format applies to --list only\n"))
  }

  // MARK: Shards

  func testTheHashIsFNV1a64() {
    // The published FNV-1a 64 test vectors.
    XCTAssertEqual(StableHash.fnv1a64(""), 0xcbf2_9ce4_8422_2325)
    XCTAssertEqual(StableHash.fnv1a64("a"), 0xaf63_dc4c_8601_ec8c)
    XCTAssertEqual(StableHash.fnv1a64("foobar"), 0x8594_4171_f739_67e8)
  }

  /// Pinned so that no Swift upgrade or refactoring reshuffles the shards of a CI matrix
  /// silently: the values were computed by an independent implementation (Python).
  func testTheAssignmentOfAFixedListIsPinned() {
    let pinned: [(String, [Int])] = [  // shards of 2, 3 and 5
      ("Calculator", [2, 3, 4]),
      ("Calculator/adds", [1, 2, 2]),
      ("Calculator/subtracts", [1, 1, 1]),
      ("MessageLoader", [1, 1, 1]),
      ("MessageLoader/greets with hello", [1, 1, 1]),
      (#"Paths\/and names/a\/b"#, [2, 2, 4]),
      ("Ünïcödé/名前", [2, 3, 5]),
      ("ImageStore/saves 3 images", [1, 1, 1]),
    ]
    for (key, shards) in pinned {
      XCTAssertEqual([2, 3, 5].map { StableHash.shard(of: key, count: $0) }, shards, key)
    }
  }

  func testShardsPartitionTheListForEveryCountAndGranularity() {
    let all = list()
    for granularity in ["suite", "test"] {
      for count in 1...5 {
        let shards = (1...count).map { list(["--shard", "\($0)/\(count)", "--shard-by", granularity]) }
        XCTAssertEqual(shards.flatMap { $0 }.sorted(), all.sorted(), "\(count) shards by \(granularity)")
        let viaBazel = (0..<count).map { index in
          list(["--shard-by", granularity], environment: ["TEST_TOTAL_SHARDS": "\(count)", "TEST_SHARD_INDEX": "\(index)"])
        }
        XCTAssertEqual(viaBazel, shards, "\(count) shards by \(granularity), from TEST_TOTAL_SHARDS")
        let viaGTest = (0..<count).map { index in
          list(["--shard-by", granularity], environment: ["GTEST_TOTAL_SHARDS": "\(count)", "GTEST_SHARD_INDEX": "\(index)"])
        }
        XCTAssertEqual(viaGTest, shards, "\(count) shards by \(granularity), from GTEST_TOTAL_SHARDS")
        if granularity == "suite" {
          for shard in shards {
            let suitesHere = Set(shard.map { try! TestPath(parsing: $0).suite })
            for suite in suitesHere { XCTAssertEqual(shard.filter { $0.hasPrefix(suite.replacingOccurrences(of: "/", with: "\\/") + "/") }.count, 3) }
          }
        }
      }
    }
  }

  func testAnEmptyShardIsAPassingRun() {
    // Three tests of one suite in five shards: at least four shards are empty.
    let result = run(["--filter", "Suite 3/", "--shard", "2/5"])
    let owner = StableHash.shard(of: "Suite 3", count: 5)
    XCTAssertEqual(result.status, 0, result.errors)
    XCTAssertTrue(result.output.hasPrefix("Shard 2/5 of the selected tests\n"), result.output)
    XCTAssertTrue(result.output.contains(owner == 2 ? "Result: 3 passed" : "Result: 0 passed"), result.output)
  }

  func testBadShardsAreUsageErrorsNamingTheFlagOrVariable() {
    let cases: [([String], [String: String], String)] = [
      (["--shard", "0/3"], [:],
       "error: --shard 0/3: shards are counted from 1 (1/3 to 3/3); add 1 to an index counted from 0, such as CIRCLE_NODE_INDEX\n"),
      (["--shard", "4/3"], [:], "error: --shard 4/3: INDEX must be from 1 to 3\n"),
      (["--shard", "1/0"], [:], "error: --shard 1/0: COUNT must be at least 1\n"),
      (["--shard", "one/3"], [:], "error: --shard \"one/3\" is not INDEX/COUNT, e.g. --shard 1/3\n"),
      (["--shard-by", "test"], [:], "error: --shard-by needs --shard INDEX/COUNT\n"),
      // Only harness test balances its workers by the report's times.
      (["--shard-timings", "/tmp/old.xml", "--workers", "2"], [:],
       "error: --shard-timings needs --shard INDEX/COUNT (or, for harness test, --workers N)\n"),
      (["--shard", "1/2", "--shard-timings", "/tmp/old.xml"], [:],
       "error: --shard-timings needs the AsyncHarnessJUnit product: call HarnessMain.run(suites, junit: JUnitReporter.factory)\n"),
      ([], ["TEST_TOTAL_SHARDS": "3", "TEST_SHARD_INDEX": "3"],
       "error: TEST_SHARD_INDEX=\"3\" is not a shard of 3: it is counted from 0, so 0 to 2\n"),
      ([], ["TEST_TOTAL_SHARDS": "three", "TEST_SHARD_INDEX": "0"],
       "error: TEST_TOTAL_SHARDS=\"three\" is not a number of shards (a whole number, at least 1)\n"),
      ([], ["GTEST_SHARD_INDEX": "1"], "error: GTEST_SHARD_INDEX=1 is set but GTEST_TOTAL_SHARDS is not\n"),
    ]
    for (arguments, environment, message) in cases {
      let result = run(arguments, environment: environment)
      XCTAssertEqual(result.status, 2, "\(arguments) \(environment)")
      XCTAssertTrue(result.errors.hasPrefix(message), "\(arguments) \(environment): \(result.errors)")
      XCTAssertEqual(result.output, "")
    }
  }

  func testTheRunStartedEventNamesTheShard() throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("shard-\(UUID()).jsonl").path
    addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
    XCTAssertEqual(run(["--shard", "2/3", "--json", path]).status, 0)
    let first = try XCTUnwrap(String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").first)
    XCTAssertTrue(first.contains(#""shard":{"count":3,"index":2}"#), String(first))
    guard case .runStarted(let run) = try Event(jsonLine: first).kind else { return XCTFail(String(first)) }
    XCTAssertEqual(run.shard, Shard(index: 2, count: 3))
  }

  func testTheShardFlagWinsOverTheVariables() {
    XCTAssertEqual(list(["--shard", "1/1"], environment: ["TEST_TOTAL_SHARDS": "5", "TEST_SHARD_INDEX": "4"]), list())
  }

  // MARK: Timings

  func testLongestFirstBalancingWithTheMedianForMissingTests() {
    let tests = (1...5).map { TestPath(suite: "S", name: "t\($0)") }
    // t1…t4 took 8, 4, 3 and 1 s (t2 under two waiters, 2 s each; t3 in two repetitions);
    // t5 is new and counts as the median, 3.5 s.
    let timings = [
      TestTiming(classname: "S [expectation]", name: "t1", seconds: 8),
      TestTiming(classname: "S [expectation]", name: "t2", seconds: 2),
      TestTiming(classname: "S [semaphore]", name: "t2", seconds: 2),
      TestTiming(classname: "S", name: "t3", seconds: 1),
      TestTiming(classname: "S", name: "t3 #2", seconds: 2),
      TestTiming(classname: "S [expectation]", name: "t4", seconds: 1),
      TestTiming(classname: "Other", name: "t1", seconds: 100),
    ]
    let assignment = Sharding(Shard(index: 1, count: 2), granularity: .test, timings: timings).assignment(of: tests)
    XCTAssertEqual(assignment.timedTests, 4)
    // Longest first: t1 (8) → 1; t2 (4) → 2; t5 (3.5) → 2; t3 (3) → 2; t4 (1) → 1.
    XCTAssertEqual(tests.map { assignment.shards[$0] }, [1, 2, 2, 1, 2])
    XCTAssertEqual(assignment.predictedSeconds, [9, 10.5])
  }
}
