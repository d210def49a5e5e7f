@testable @_spi(ForToolsIntegrationOnly) import AsyncHarness
import Foundation
import HarnessTestSupport
import Synchronization
import XCTest

/// Issue 23, tests of a suite in parallel: the runner's work queue hands a parallel suite's
/// tests to whichever lane is free, while every report still sees suites and tests start in
/// plan order, each suite end after its last test, and the same results as one lane. The
/// lanes' executors here run no test code: they say which lane ran a step, and a test whose
/// name starts with "fails" records a failure, as does one named "breaks in repetition N" in
/// repetition N.
final class ParallelRunTests: XCTestCase {
  /// What the lanes ran: each step's test and the lane that ran it, in the order they ran.
  private final class LaneLog: Sendable {
    private let entries = Mutex<[(lane: Int, test: TestID)]>([])
    private let lanes = Mutex(0)

    var ran: [(lane: Int, test: TestID)] { entries.withLock { $0 } }

    func makeExecutor(holdingFirstStepUntilAnotherLaneRuns: Bool = false,
                      onRun: @escaping @Sendable (TestID) -> Void = { _ in }) -> @Sendable () -> any TestExecutor {
      { [self] in
        let lane = lanes.withLock { lanes in
          lanes += 1
          return lanes
        }
        return LaneExecutor(lane: lane, log: self, waitsForCompany: holdingFirstStepUntilAnotherLaneRuns, onRun: onRun)
      }
    }

    func record(_ test: TestID, lane: Int) {
      entries.withLock { $0.append((lane, test)) }
    }

    /// Whether a lane other than `lane` has run a step.
    func anotherLaneRan(than lane: Int) -> Bool {
      entries.withLock { $0.contains { $0.lane != lane } }
    }
  }

  private struct LaneExecutor: TestExecutor {
    let lane: Int
    let log: LaneLog
    /// Whether the first step run waits (up to 10 s) until another lane has run one: two
    /// lanes then must have run at once.
    let waitsForCompany: Bool
    /// Told of each step as it runs.
    let onRun: @Sendable (TestID) -> Void
    /// It runs no test code, so lanes may run it at once.
    let isolatesTests = true

    func run(_ step: Runner.PlannedTest, events: EventSink) -> AttemptEnd {
      log.record(step.id, lane: lane)
      onRun(step.id)
      if waitsForCompany {
        let deadline = ContinuousClock().now + .seconds(10)
        while !log.anotherLaneRan(than: lane) && ContinuousClock().now < deadline { sched_yield() }
      }
      if step.test.name.hasPrefix("fails") || step.test.name == "breaks in repetition \(step.id.repetition)" {
        events(.issueRecorded(step.id, Issue(kind: .expectationFailed, message: "fails on purpose")))
      }
      return .returned(duration: 0)
    }
  }

  /// Tests of one process cannot run side by side (they share its main thread, streams and
  /// globals): with an executor that runs tests in this process, the runner runs one lane,
  /// on the calling thread, whatever `lanes` says.
  func testAnInProcessExecutorRunsOneLaneOnTheCallingThread() throws {
    let made = Mutex(0)
    let onMainThread = Mutex<[Bool]>([])
    let suite = Suite("InProcess", .parallel) {
      for index in 0..<8 {
        Test("test \(index)") { _ in onMainThread.withLock { $0.append(Thread.isMainThread) } }
      }
    }
    let recorder = EventRecorder()
    let makeExecutor: @Sendable () -> any TestExecutor = {
      made.withLock { $0 += 1 }
      return InProcessExecutor()
    }
    try Runner(suites: [suite], lanes: 4, makeExecutor: makeExecutor, reporters: [recorder]).run()
    XCTAssertEqual(made.withLock { $0 }, 1, "one lane, one executor")
    XCTAssertEqual(onMainThread.withLock { $0 }, Array(repeating: true, count: 8))
    XCTAssertEqual(recorder.results.map(\.result.verdict), Array(repeating: .passed, count: 8))
  }

  private func suite(_ name: String, _ traits: SuiteTrait..., tests names: [String]) -> Suite {
    Suite(name, traits: traits) {
      for name in names { Test(name) { _ in } }
    }
  }

  private func run(_ suites: [Suite], lanes: Int, log: LaneLog = LaneLog(), waitsForCompany: Bool = false,
                   configure: (inout Configuration) -> Void = { _ in }) throws -> [Event] {
    let recorder = EventRecorder()
    var configuration = Configuration()
    configure(&configuration)
    try Runner(suites: suites, configuration: configuration, lanes: lanes,
               makeExecutor: log.makeExecutor(holdingFirstStepUntilAnotherLaneRuns: waitsForCompany),
               reporters: [recorder]).run()
    return recorder.events
  }

  func testTheTestsOfAParallelSuiteRunInSeveralLanesAtOnce() throws {
    let log = LaneLog()
    let events = try run([suite("Wide", .parallel, tests: (0..<8).map { "test \($0)" })], lanes: 4, log: log,
                         waitsForCompany: true)
    XCTAssertGreaterThan(Set(log.ran.map(\.lane)).count, 1, "\(log.ran)")
    XCTAssertEqual(events.compactMap { if case .testEnded(_, let result) = $0.kind { result.verdict } else { nil } },
                   Array(repeating: Verdict.passed, count: 8))
  }

  /// Without the trait (or with `.serialized` under `--parallel`), a suite runs whole in one
  /// lane, in order, however many lanes there are.
  func testASuiteThatIsNotParallelRunsInOrderInOneLane() throws {
    for (traits, parallelTests) in [([SuiteTrait](), false), ([.serialized], true)] {
      let log = LaneLog()
      let names = (0..<8).map { "test \($0)" }
      _ = try run([Suite("Ordered", traits: traits) { for name in names { Test(name) { _ in } } }], lanes: 4, log: log) {
        $0.parallelTests = parallelTests
      }
      XCTAssertEqual(log.ran.map(\.test.name), names)
      XCTAssertEqual(Set(log.ran.map(\.lane)).count, 1)
    }
  }

  /// `--parallel` spreads the tests of a suite without a trait.
  func testTheRunFlagMakesEverySuiteParallel() throws {
    let log = LaneLog()
    _ = try run([suite("Plain", tests: (0..<8).map { "test \($0)" })], lanes: 4, log: log, waitsForCompany: true) {
      $0.parallelTests = true
    }
    XCTAssertGreaterThan(Set(log.ran.map(\.lane)).count, 1, "\(log.ran)")
  }

  /// Repeated 200 times: whichever lane takes what, suites start in plan order, a parallel
  /// suite's tests start in plan order (repeated names included), every test's events come between its suite's start
  /// and end, each suite's counts are its own, and the results are those of one lane.
  func testParallelRunsReportInPlanOrderWithTheResultsOfOneLane() throws {
    let suites = [
      suite("First", .parallel, tests: ["a", "fails b", "c", "a", "fails e", "c", "a"]),
      suite("Middle", tests: ["one", "fails two", "three"]),
      suite("Last", .parallel, tests: (0..<10).map { "test \($0)" }),
    ]
    func configure(_ configuration: inout Configuration) {
      configuration.repetitions = 2
      configuration.waiters = .named("semaphore")
    }
    let serial = try run(suites, lanes: 1, configure: configure)
    for round in 0..<200 {
      let events = try run(suites, lanes: 3, configure: configure)
      XCTAssertEqual(Set(events.map(\.withoutTimes)), Set(serial.map(\.withoutTimes)), "round \(round)")
      XCTAssertEqual(events.compactMap(\.suiteStarted), ["First", "Middle", "Last"], "round \(round)")
      for name in ["First", "Last"] {
        let started = events.compactMap(\.testStarted).filter { $0.suite == name }
        let planned = serial.compactMap(\.testStarted).filter { $0.suite == name }
        XCTAssertEqual(started, planned, "round \(round)")
      }
      for name in ["First", "Middle", "Last"] {
        let start = try XCTUnwrap(events.firstIndex { $0.suiteStarted == name })
        let end = try XCTUnwrap(events.firstIndex { if case .suiteEnded(let run, _, _) = $0.kind { run.suite == name } else { false } })
        let own = events.indices.filter { events[$0].test?.suite == name }
        XCTAssertTrue(own.allSatisfy { $0 > start && $0 < end }, "round \(round): \(name)")
      }
    }
  }

  /// With `--until-failure`, a parallel suite's next repetition starts only after every test
  /// of the last one ended, and none does after a repetition with a failure. Repeated 100
  /// times.
  func testUntilFailureEndsAParallelSuiteAfterTheFirstFailingRepetition() throws {
    let suites = [suite("Repeated", .parallel, tests: ["a", "b", "breaks in repetition 2", "c", "d"])]
    for round in 0..<100 {
      let events = try run(suites, lanes: 4) {
        $0.repetitions = 5
        $0.untilFailure = true
      }
      let ended = events.compactMap { if case .testEnded(let test, _) = $0.kind { test } else { nil } }
      XCTAssertEqual(ended.map(\.repetition).sorted(), Array(repeating: 1, count: 5) + Array(repeating: 2, count: 5),
                     "round \(round)")
      let lastEndOfFirst = try XCTUnwrap(events.lastIndex { if case .testEnded(let test, _) = $0.kind { test.repetition == 1 } else { false } })
      let firstStartOfSecond = try XCTUnwrap(events.firstIndex { $0.testStarted?.repetition == 2 })
      XCTAssertLessThan(lastEndOfFirst, firstStartOfSecond, "round \(round)")
    }
  }

  /// A run stopped while a parallel suite's tests run in two lanes ends that suite once, with
  /// the tests that ran, just before the run ends; 100 rounds, as the lanes race to the stop.
  /// The stop is requested as test 3 starts, so no test after it is handed out, and the first
  /// lane holds test 0 until the second has run one, so both lanes run.
  func testAStoppedRunEndsItsOpenParallelSuite() throws {
    for round in 1...100 {
      let stop = StopRequest()
      let log = LaneLog()
      let recorder = EventRecorder()
      let suite = Suite("Stopped", .parallel) {
        for number in 0..<20 { Test("test \(number)") { _ in } }
      }
      // Stopped as test 3 runs: the other lane may be running a test it took before; no lane
      // takes another.
      let ranAtStop = Mutex(0)
      let makeExecutor = log.makeExecutor(holdingFirstStepUntilAnotherLaneRuns: true) { test in
        guard test.name == "test 3" else { return }
        ranAtStop.withLock { $0 = log.ran.count }
        stop.request(signal: SIGINT)
      }
      try Runner(suites: [suite], lanes: 2, makeExecutor: makeExecutor, stop: stop, reporters: [recorder]).run()
      let ran = Set(log.ran.map(\.test.name))
      XCTAssertEqual(Set(log.ran.map(\.lane)), [1, 2], "round \(round): both lanes ran")
      XCTAssertTrue(ran.isSuperset(of: ["test 0", "test 1", "test 2", "test 3"]), "round \(round): \(ran)")
      XCTAssertLessThanOrEqual(ran.count, ranAtStop.withLock { $0 } + 1, "round \(round): a test was taken after the stop")
      XCTAssertEqual(recorder.results.count, ran.count, "round \(round): every test that ran ended")
      let suiteEnds = recorder.events.filter { if case .suiteEnded = $0.kind { true } else { false } }
      XCTAssertEqual(suiteEnds.count, 1, "round \(round)")
      guard case .suiteEnded(_, let summary, _) = recorder.events.dropLast().last?.kind else {
        return XCTFail("round \(round): the suite did not end last: \(recorder.events.suffix(2))")
      }
      XCTAssertEqual(summary.passed, ran.count, "round \(round)")
    }
  }
}

extension Event {
  var suiteStarted: String? { if case .suiteStarted(let run) = kind { run.suite } else { nil } }
  var testStarted: TestID? { if case .testStarted(let test) = kind { test } else { nil } }
}
