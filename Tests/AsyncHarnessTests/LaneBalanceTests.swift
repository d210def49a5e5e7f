@testable @_spi(ForToolsIntegrationOnly) import AsyncHarness
import XCTest

/// Issue 51: several lanes share another package's tests by the last run's durations
/// (``LaneBalance``): XCTest classes, and Swift Testing suites known to hold no serialized
/// test, cut where each lane's share ends, other Swift Testing suites whole, the pieces of one library in one lane's share chained (one worker runs them), the
/// chains handed out longest first; a lane takes the rest of its chain, and the run's owner
/// ends a class cut in pieces once, after its last piece.
final class LaneBalanceTests: XCTestCase {
  private func xctest(_ seconds: [Double]) -> LaneBalance.Load {
    LaneBalance.Load(tests: seconds, whole: seconds.reduce(0, +), library: .xctest)
  }

  private func suite(_ seconds: [Double], whole: Double, serialized: Bool = true) -> LaneBalance.Load {
    LaneBalance.Load(tests: seconds, whole: whole, library: .swiftTesting, serialized: serialized)
  }

  /// `chains` as text, in the order they are handed out: each piece `entry:lower..<upper`,
  /// then the chain's seconds.
  private func outline(_ chains: [[LaneBalance.Piece]]) -> [String] {
    chains.map { chain in
      chain.map { "\($0.entry):\($0.tests.lowerBound)..<\($0.tests.upperBound) " }.joined()
        + "\((chain.reduce(0) { $0 + $1.seconds } * 1000).rounded() / 1000)"
    }
  }

  /// Part 10's XCTest-heavy package: five classes of 0.2 s and a Swift Testing suite of
  /// 0.05 s; handed out whole, one lane runs three classes (0.6 s). Cut at each lane's share
  /// (0.525 s), every lane ends at 0.525 s; no two classes are chained, as they would be past
  /// half a share.
  func testFiveEqualClassesOverTwoLanesAreCutSoThatTheLanesEndTogether() {
    let loads = (0..<5).map { _ in xctest(Array(repeating: 0.005, count: 40)) }
      + [suite(Array(repeating: 0.005, count: 40), whole: 0.05)]
    let chains = LaneBalance.chains(of: loads, lanes: 2)
    XCTAssertEqual(outline(chains), ["0:0..<40 0.2", "1:0..<40 0.2", "3:0..<40 0.2", "4:0..<40 0.2",
                                     "2:0..<25 0.125", "2:25..<40 0.075", "5:0..<40 0.05"])
    XCTAssertEqual(simulatedLanes(chains, lanes: 2).map { ($0 * 1000).rounded() }, [525, 525])
  }

  /// The lanes' ends when each free lane takes the next chain, every piece taking what was
  /// estimated.
  private func simulatedLanes(_ chains: [[LaneBalance.Piece]], lanes: Int) -> [Double] {
    var ends = Array(repeating: 0.0, count: lanes)
    for chain in chains { ends[ends.indices.min { ends[$0] < ends[$1] }!] += chain.reduce(0) { $0 + $1.seconds } }
    return ends.sorted()
  }

  /// Small Swift Testing suites in one lane's share are chained, each chain run by one worker
  /// (side by side, as one worker runs them with one lane), up to half a share (0.406 s): two
  /// workers for five suites, not five; the class before them is cut at the share.
  func testSwiftTestingSuitesInOneLanesShareAreChainedUpToHalfAShare() {
    let loads = [xctest([0.25, 0.25, 0.25, 0.25])] + (0..<5).map { _ in suite([0.0625, 0.0625], whole: 0.125) }
    XCTAssertEqual(outline(LaneBalance.chains(of: loads, lanes: 2)),
                   ["0:0..<3 0.75", "1:0..<2 2:0..<2 3:0..<2 0.375", "0:3..<4 0.25", "4:0..<2 5:0..<2 0.25"])
  }

  /// A Swift Testing suite that is, or may be, serialized (the listing's library said nothing)
  /// is never cut: one longer than a lane's share takes a lane alone, and the classes the other.
  func testASwiftTestingSuiteThatMayBeSerializedIsNeverCut() {
    let chains = LaneBalance.chains(of: [xctest([0.1, 0.1, 0.1]), suite(Array(repeating: 0.1, count: 10), whole: 0.6)],
                                    lanes: 2)
    XCTAssertEqual(outline(chains), ["1:0..<10 0.6", "0:0..<3 0.3"])
  }

  /// A Swift Testing suite known to hold no serialized test is cut as a class is, where the
  /// lanes' share ends (0.4 s), by its tests' times scaled to its own time (0.5 s: its tests
  /// overlap): the lanes end together, where the suite kept whole leaves one 0.2 s later.
  func testASwiftTestingSuiteWithoutASerializedTestIsCutAtTheShare() {
    let tests = Array(repeating: 0.1, count: 10)
    let cut = LaneBalance.chains(of: [xctest([0.1, 0.1, 0.1]), suite(tests, whole: 0.5, serialized: false)], lanes: 2)
    XCTAssertEqual(outline(cut), ["1:2..<10 0.4", "0:0..<3 0.3", "1:0..<2 0.1"])
    XCTAssertEqual(simulatedLanes(cut, lanes: 2).map { ($0 * 1000).rounded() }, [400, 400])
    let whole = LaneBalance.chains(of: [xctest([0.1, 0.1, 0.1]), suite(tests, whole: 0.5)], lanes: 2)
    XCTAssertEqual(outline(whole), ["1:0..<10 0.5", "0:0..<3 0.3"])
    XCTAssertEqual(simulatedLanes(whole, lanes: 2).map { ($0 * 1000).rounded() }, [300, 500])
  }

  /// A suite in a serialized suite goes whole into the chain of the entry before it (the
  /// serialized suite's), past half a share and across the lanes' shares: one worker runs them.
  func testASuiteInASerializedSuiteJoinsItsChain() {
    var inside = suite([0.3, 0.3], whole: 0.6)
    inside.joinsPrevious = true
    let chains = LaneBalance.chains(of: [suite([0.2, 0.2], whole: 0.4), inside, xctest([0.5, 0.5])], lanes: 2)
    XCTAssertEqual(outline(chains), ["0:0..<2 1:0..<2 1.0", "2:0..<2 1.0"])
  }

  /// A suite's piece, too, lasts at least the smallest piece: a suite of 40 ms is not cut.
  func testNoPieceOfASuiteIsShorterThanTheSmallestPiece() {
    XCTAssertEqual(outline(LaneBalance.chains(of: [suite([0.01, 0.01, 0.01, 0.01], whole: 0.04, serialized: false)],
                                              lanes: 2)), ["0:0..<4 0.04"])
  }

  /// A class is cut only where both parts last at least the smallest piece: a worker's start
  /// and the class's set-up stay small beside each.
  func testNoPieceOfAClassIsShorterThanTheSmallestPiece() {
    XCTAssertEqual(outline(LaneBalance.chains(of: [xctest([0.01, 0.01, 0.01, 0.01])], lanes: 2)), ["0:0..<4 0.04"])
    let quarters = [xctest([0.25, 0.25, 0.25, 0.25])]
    XCTAssertEqual(outline(LaneBalance.chains(of: quarters, lanes: 2, smallestPiece: 0.75)), ["0:0..<4 1.0"])
    XCTAssertEqual(outline(LaneBalance.chains(of: quarters, lanes: 2, smallestPiece: 0.5)), ["0:0..<2 0.5", "0:2..<4 0.5"])
    // The cut nearest the share (after 0.9 s of a 1 s class) would leave 0.1 s: it is dropped.
    XCTAssertEqual(outline(LaneBalance.chains(of: [xctest([0.05, 0.15]), xctest([0.9, 0.1])], lanes: 2,
                                              smallestPiece: 0.2)),
                   ["1:0..<2 1.0", "0:0..<2 0.2"])
  }

  /// One class over three lanes is cut twice, at each lane's share, by its tests' times.
  func testAClassOverThreeLanesIsCutAtEachShareByItsTestsTimes() {
    let chains = LaneBalance.chains(of: [xctest([0.5, 0.25, 0.125, 0.125, 0.25, 0.25])], lanes: 3)
    XCTAssertEqual(outline(chains), ["0:0..<1 0.5", "0:1..<4 0.5", "0:4..<6 0.5"])
  }

  // MARK: The plan

  private func existing(_ library: TestLibrary, _ suite: String, _ names: [String]) -> [ExistingTest] {
    names.map { ExistingTest(library: library, suite: suite, name: $0, displayName: nil, id: "\(suite)/\($0)",
                             isParameterized: false, sourceLocation: nil) }
  }

  private func plan(durations: RecordedDurations?, configure: (inout Configuration) -> Void = { _ in }) throws -> Runner.Plan {
    var configuration = Configuration()
    configuration.lastDurations = durations
    configure(&configuration)
    let catalog = Catalog(existing: existing(.xctest, "M.A", ["testA", "testB", "testC", "testD"])
      + existing(.xctest, "M.B", ["testE"]) + existing(.swiftTesting, "M.S", ["s()"]))
    return try Runner.Plan(catalog: catalog, configuration: configuration, registry: .builtIn)
  }

  private let timed = RecordedDurations(tests: [
    TestPath(suite: "M.A", name: "testA"): 0.8, TestPath(suite: "M.A", name: "testB"): 0.05,
    TestPath(suite: "M.A", name: "testC"): 0.05, TestPath(suite: "M.B", name: "testE"): 0.05,
    TestPath(suite: "M.S", name: "s()"): 0.9,
  ], suites: ["M.S": 0.05])

  /// A piece as `Suite[tests]`.
  private func name(_ entry: Runner.Plan.Entry) -> String {
    "\(entry.group.name)[\(entry.tests.map(\.name).joined(separator: ","))]"
  }

  /// The chains, each its pieces (``name(_:)``) separated by spaces.
  private func names(_ chains: [[Runner.Plan.Entry]]?) -> [String]? {
    chains?.map { $0.map(name).joined(separator: " ") }
  }

  /// The last run timed five tests of six: the untimed `testD` counts as their median
  /// (0.05 s), the Swift Testing suite as its own time last run (0.05 s), not its test's
  /// (0.9 s); the class of 0.95 s is cut at the lanes' share (0.525 s), nearest after `testA`;
  /// its second piece and the class after it are chained, each piece knowing the pieces after it.
  func testThePlanIsCutByTheLastRunsDurations() throws {
    let chains = try XCTUnwrap(LaneBalance.entries(of: try plan(durations: timed), lanes: 2))
    XCTAssertEqual(names(chains), ["M.A[testA]", "M.A[testB,testC,testD] M.B[testE]", "M.S[s()]"])
    XCTAssertEqual(chains[1].map { $0.chain.map(name) }, [["M.B[testE]"], []])
  }

  /// The plan's Swift Testing suites: `M.T`, whose tests the listing's library said are not
  /// serialized, is cut at the first share of four lanes (0.5 s); `M.Z`, serialized, is not, at
  /// the third; nor is `M.T` when the library said nothing.
  func testThePlanCutsOnlyTheSwiftTestingSuitesKnownNotSerialized() throws {
    func catalog(_ serialized: Bool?) -> Catalog {
      let tests = existing(.swiftTesting, "M.T", ["t1()", "t2()", "t3()", "t4()"]).map { test in
        var test = test
        test.isSerialized = serialized
        return test
      }
      let serializedTests = existing(.swiftTesting, "M.Z", ["z1()", "z2()", "z3()", "z4()"]).map { test in
        var test = test
        test.isSerialized = true
        return test
      }
      return Catalog(existing: tests + serializedTests)
    }
    var durations = RecordedDurations(suites: ["M.T": 1, "M.Z": 1])
    for (suite, name) in ["t1()", "t2()", "t3()", "t4()"].map({ ("M.T", $0) }) + ["z1()", "z2()", "z3()", "z4()"].map({ ("M.Z", $0) }) {
      durations.tests[TestPath(suite: suite, name: name)] = 0.25
    }
    var configuration = Configuration()
    configuration.lastDurations = durations
    let known = try Runner.Plan(catalog: catalog(false), configuration: configuration, registry: .builtIn)
    XCTAssertEqual(names(LaneBalance.entries(of: known, lanes: 4)),
                   ["M.Z[z1(),z2(),z3(),z4()]", "M.T[t1(),t2()]", "M.T[t3(),t4()]"])
    let unknown = try Runner.Plan(catalog: catalog(nil), configuration: configuration, registry: .builtIn)
    XCTAssertEqual(names(LaneBalance.entries(of: unknown, lanes: 4)), ["M.T[t1(),t2(),t3(),t4()]", "M.Z[z1(),z2(),z3(),z4()]"])
  }

  /// The suites in a serialized suite (`M.Z` holds `M.Z/In`) are laid right after it, in its
  /// chain, even where another suite lies between them in the plan; with no record too, and
  /// with repeated tests (`--repeat`), where every other entry is a chain of its own, in plan
  /// order.
  func testTheSuitesInASerializedSuiteRunInItsChainWithOrWithoutARecord() throws {
    func tests(_ suite: String, _ names: [String], in serialized: String?) -> [ExistingTest] {
      existing(.swiftTesting, suite, names).map { test in
        var test = test
        test.isSerialized = serialized != nil
        test.serializedSuite = serialized
        return test
      }
    }
    let catalog = Catalog(existing: tests("M.Z", ["z()"], in: "M.Z") + tests("M.T", ["t()"], in: nil)
      + tests("M.Z/In", ["i()"], in: "M.Z"))
    let none = try Runner.Plan(catalog: catalog, configuration: Configuration(), registry: .builtIn)
    XCTAssertEqual(names(LaneBalance.entries(of: none, lanes: 2)), ["M.Z[z()] M.Z/In[i()]", "M.T[t()]"])
    XCTAssertEqual(LaneBalance.entries(of: none, lanes: 2)?.first?.first?.chain.map(name), ["M.Z/In[i()]"])
    var configuration = Configuration()
    configuration.lastDurations = RecordedDurations(tests: [
      TestPath(suite: "M.Z", name: "z()"): 0.1, TestPath(suite: "M.T", name: "t()"): 0.5,
      TestPath(suite: "M.Z/In", name: "i()"): 0.1,
    ])
    let timed = try Runner.Plan(catalog: catalog, configuration: configuration, registry: .builtIn)
    XCTAssertEqual(names(LaneBalance.entries(of: timed, lanes: 2)), ["M.T[t()]", "M.Z[z()] M.Z/In[i()]"])
    configuration.repetitions = 2
    let repeated = try Runner.Plan(catalog: catalog, configuration: configuration, registry: .builtIn)
    XCTAssertEqual(names(LaneBalance.entries(of: repeated, lanes: 2)), ["M.Z[z()] M.Z/In[i()]", "M.T[t()]"])
  }

  /// Without a record, with one lane, or with no test timed, nothing changes: entries whole,
  /// in plan order.
  func testWithoutDurationsOrWithOneLaneThePlanIsNotCut() throws {
    XCTAssertNil(LaneBalance.entries(of: try plan(durations: nil), lanes: 2))
    XCTAssertNil(LaneBalance.entries(of: try plan(durations: timed), lanes: 1))
    XCTAssertNil(LaneBalance.entries(of: try plan(durations: RecordedDurations()), lanes: 2))
    XCTAssertNil(LaneBalance.entries(of: try plan(durations: timed) { $0.explorations = 3 }, lanes: 2),
                 "explored tests each run alone in a worker of their own")
    XCTAssertNil(LaneBalance.entries(of: try plan(durations: timed) { $0.repetitions = 2 }, lanes: 2))
    // After a run of one test of six (`--filter`), the others would all count as its time.
    let one = RecordedDurations(tests: [TestPath(suite: "M.A", name: "testA"): 0.8])
    XCTAssertNil(LaneBalance.entries(of: try plan(durations: one), lanes: 2))
    let harness = try Runner.Plan(suites: [Suite("S") { Test("t") { _ in } }],
                                  configuration: { var c = Configuration(); c.lastDurations = timed; return c }(),
                                  registry: .builtIn)
    XCTAssertNil(LaneBalance.entries(of: harness, lanes: 2), "harness suites are planned as before")
  }

  /// The run's owner announces a class cut in pieces as its first piece is taken, and ends it
  /// once, after its last piece ended, with every test of both pieces counted.
  func testAClassCutInPiecesStartsAndEndsOnce() throws {
    let recorder = EventRecorder()
    let channel = ReportingChannel([recorder])
    let plan = try plan(durations: timed)
    let run = RunLife(queue: WorkQueue(plan: plan, splitsParallelEntries: true, lanes: 2), channel: channel, stop: nil)
    let tests = TestLife(rules: TestLife.Rules(slow: nil, watchesHangs: false, hangGrace: nil, stop: nil, replaying: nil,
                                               hung: { _, _ in }),
                         events: channel.sink)
    XCTAssertEqual(run.mostAtOnce, 3)
    run.begin(RunInfo())
    var taken: [Runner.Plan.Entry] = []
    while case .entry(let entry)? = run.next(startingWith: tests, lane: 1) { taken.append(entry) }
    XCTAssertEqual(taken.map(name), ["M.A[testA]", "M.A[testB,testC,testD]", "M.B[testE]", "M.S[s()]"])
    for entry in taken.reversed() {
      for planned in plan.plannedTests(of: entry, repetition: 1) {
        run.ended(planned, with: TestResult(verdict: planned.id.name == "testD" ? .failed : .passed))
      }
      run.ended(entry)
    }
    _ = run.end()
    try channel.finish()
    XCTAssertEqual(recorder.events.map(\.outline), [
      "runStarted", "suiteStarted M.A", "suiteStarted M.B", "suiteStarted M.S",
      "suiteEnded M.S 1/0", "suiteEnded M.B 1/0", "suiteEnded M.A 3/1", "runEnded 5/1",
    ])
  }

  /// A lane that took a chain takes the rest of it, and no other lane does: one worker may run
  /// the chain whole.
  func testALaneTakesTheRestOfItsChainAndNoOtherLaneDoes() throws {
    var queue = WorkQueue(plan: try plan(durations: timed), splitsParallelEntries: true, lanes: 2)
    func take(_ lane: Int) -> String {
      guard case .work(.entry(let entry)) = queue.take(lane: lane).next else { return "none" }
      return name(entry)
    }
    XCTAssertEqual([take(1), take(2), take(1), take(2), take(1), take(2)],
                   ["M.A[testA]", "M.A[testB,testC,testD]", "M.S[s()]", "M.B[testE]", "none", "none"])
  }

  /// A stopped run ends the class whose pieces were not all taken, with what ran.
  func testAStoppedRunEndsAClassWhosePiecesWereNotAllTaken() throws {
    var queue = WorkQueue(plan: try plan(durations: timed), splitsParallelEntries: true, lanes: 2)
    guard case .work(.entry(let first)) = queue.take().next else { return XCTFail("a piece is handed out") }
    XCTAssertFalse(queue.ended(first), "the class has a piece left")
    XCTAssertEqual(queue.closeOpenEntries().map(\.group.name), ["M.A"])
  }

  /// The record keeps each test's and suite's seconds, and reads back without them (a record
  /// an earlier build wrote).
  func testTheRecordKeepsTheDurations() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lane-balance-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("last-run.json").path
    let test = TestPath(suite: "M.A", name: "testA")
    let record = RunRecord(arguments: [], tests: [
      .init(id: test, waiter: "xctest", repetition: 1, verdict: .passed, seconds: 0.25),
      .init(id: test, waiter: "xctest", repetition: 2, verdict: .passed, seconds: 0.5),
    ], suites: [.init(suite: "M.S", waiter: "swift-testing", seconds: 0.125)])
    try record.write(to: path, executable: "harness test")
    let read = try XCTUnwrap(try RunRecord.read(from: path))
    XCTAssertEqual(read, record)
    XCTAssertEqual(read.durations, RecordedDurations(tests: [test: 0.75], suites: ["M.S": 0.125]))
    try Data(#"{"arguments":[],"executable":"h","tests":[{"id":"M.A/testA","repetition":1,"verdict":"passed","waiter":"xctest"}],"version":1}"#.utf8)
      .write(to: URL(fileURLWithPath: path))
    XCTAssertEqual(try RunRecord.read(from: path)?.durations, RecordedDurations())
  }
}
