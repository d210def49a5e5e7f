@testable @_spi(ForToolsIntegrationOnly) import AsyncHarness
import Synchronization
import XCTest

/// The owners of a run, each driven directly: the work queue as a plain value (no thread,
/// no event), the run's owner (suite and run events, counts), and the test's owner
/// (starts, attempts, retries, verdicts) with an executor that runs no test code.
final class RunOwnersTests: XCTestCase {
  // MARK: The work queue

  private func plan(_ suites: [Suite], configure: (inout Configuration) -> Void = { _ in }) throws -> Runner.Plan {
    var configuration = Configuration()
    configure(&configuration)
    return try Runner.Plan(suites: suites, configuration: configuration, registry: .builtIn)
  }

  private let parallel = Suite("P", .parallel) { Test("p0") { _ in }; Test("p1") { _ in }; Test("p2") { _ in } }
  private let serial = Suite("S") { Test("s0") { _ in }; Test("s1") { _ in } }

  /// What `take()` gave, as text: `entry S`, `step P/p1#2`, `wait`, `done`, after the
  /// entries it opened (`+P`).
  private func take(_ queue: inout WorkQueue, onlySideBySide: Bool = false) -> String {
    let (next, opened) = queue.take(only: onlySideBySide ? { $0.runsSideBySide } : nil)
    let prefix = opened.map { "+\($0.group.name) " }.joined()
    switch next {
    case .work(.entry(let entry)): return prefix + "entry \(entry.group.name)"
    case .work(.test(let step, let prepare)):
      XCTAssertEqual(prepare.map(\.id), [step.id], "a step handed out alone prepares that step only")
      return prefix + "step \(step.id.suite)/\(step.id.name)#\(step.id.repetition)"
    case .wait: return prefix + "wait"
    case .done: return prefix + "done"
    }
  }

  private func steps(of queue: Runner.Plan, suite: Int, repetition: Int = 1) -> [Runner.PlannedTest] {
    Array(queue.plannedTests(of: queue.entries[suite], repetition: repetition))
  }

  func testALaneRunningTestsSideBySideTakesItsShareAndLeavesTheRestToTheOtherLanes() throws {
    let awaiting = Suite("A", .parallel) { for number in 0..<6 { Test("a\(number)") { _ async in } } }
    for (lanes, first) in [(2, 3), (3, 2), (1, 6)] {
      var queue = WorkQueue(plan: try plan([awaiting]), splitsParallelEntries: lanes > 1, sideBySide: true, lanes: lanes)
      // One lane asks first and keeps asking as its tests start: it stops at its share.
      var taken: [String] = []
      while case .work(.test(let step, _)) = queue.take(only: \.runsSideBySide, holding: taken.count).next {
        taken.append(step.id.name)
      }
      XCTAssertEqual(taken.count, first, "\(lanes) lanes")
      // Another lane, holding none, gets the next.
      if case .work(.test(let step, _)) = queue.take(only: \.runsSideBySide, holding: 0).next {
        XCTAssertEqual(step.id.name, "a\(first)", "\(lanes) lanes")
      } else {
        XCTAssertEqual(lanes, 1, "every test went to the only lane")
      }
    }
  }

  func testWithOneLaneEveryEntryIsHandedOutWholeInPlanOrder() throws {
    var queue = WorkQueue(plan: try plan([parallel, serial]), splitsParallelEntries: false)
    XCTAssertEqual(queue.mostAtOnce, 2)
    XCTAssertEqual([take(&queue), take(&queue), take(&queue), take(&queue)], ["+P entry P", "+S entry S", "done", "done"])
  }

  func testAParallelEntryIsHandedOutTestByTestAndClosesWithItsLastTest() throws {
    let plan = try plan([parallel, serial])
    var queue = WorkQueue(plan: plan, splitsParallelEntries: true)
    XCTAssertEqual(queue.mostAtOnce, .max)
    XCTAssertEqual([take(&queue), take(&queue), take(&queue), take(&queue), take(&queue)],
                   ["+P step P/p0#1", "step P/p1#1", "step P/p2#1", "+S entry S", "wait"])
    let tests = steps(of: plan, suite: 0)
    XCTAssertNil(queue.finished(tests[2], failed: false, stopped: false))
    XCTAssertNil(queue.finished(tests[0], failed: true, stopped: false))
    XCTAssertEqual(take(&queue), "wait")
    XCTAssertEqual(queue.finished(tests[1], failed: false, stopped: false)?.group.name, "P")
    XCTAssertEqual(take(&queue), "done")
    XCTAssertEqual(queue.closeOpenEntries().count, 0)
  }

  func testRepetitionsOfAParallelEntryFollowEachOtherAndUntilFailureWaitsForTheLastOne() throws {
    let plan = try plan([Suite("P", .parallel) { Test("a") { _ in }; Test("b") { _ in } }]) {
      $0.repetitions = 3
      $0.untilFailure = true
    }
    var queue = WorkQueue(plan: plan, splitsParallelEntries: true)
    XCTAssertEqual([take(&queue), take(&queue), take(&queue)], ["+P step P/a#1", "step P/b#1", "wait"])
    let first = steps(of: plan, suite: 0, repetition: 1)
    XCTAssertNil(queue.finished(first[0], failed: false, stopped: false))
    XCTAssertEqual(take(&queue), "wait", "the next repetition waits for b")
    XCTAssertNil(queue.finished(first[1], failed: false, stopped: false))
    XCTAssertEqual([take(&queue), take(&queue)], ["step P/a#2", "step P/b#2"])
    let second = steps(of: plan, suite: 0, repetition: 2)
    XCTAssertNil(queue.finished(second[0], failed: true, stopped: false))
    XCTAssertEqual(queue.finished(second[1], failed: false, stopped: false)?.group.name, "P",
                   "a failing repetition ends the entry under --until-failure")
    XCTAssertEqual(take(&queue), "done")
  }

  func testAStopClosesAParallelEntryWhenItsRunningTestsEndOrLeavesItForTheEnd() throws {
    let plan = try plan([parallel])
    var queue = WorkQueue(plan: plan, splitsParallelEntries: true)
    XCTAssertEqual([take(&queue), take(&queue)], ["+P step P/p0#1", "step P/p1#1"])
    let tests = steps(of: plan, suite: 0)
    XCTAssertNil(queue.finished(tests[0], failed: false, stopped: true), "p1 still runs")
    XCTAssertEqual(queue.finished(tests[1], failed: false, stopped: true)?.group.name, "P")
    XCTAssertEqual(queue.closeOpenEntries().count, 0)

    var untouched = WorkQueue(plan: plan, splitsParallelEntries: true)
    XCTAssertEqual(take(&untouched), "+P step P/p0#1")
    XCTAssertNil(untouched.finished(tests[0], failed: false, stopped: false), "p1 and p2 are left")
    XCTAssertEqual(untouched.closeOpenEntries().map(\.group.name), ["P"])
  }

  /// Issue 31: with tests side by side, a parallel entry with an async test is handed out
  /// test by test even to one lane (a parallel entry of blocking tests still goes whole), and
  /// a lane that runs tests side by side takes only async tests of real-time strategies, in
  /// plan order: at a blocking test, a serial entry or the scheduled strategy it takes
  /// nothing, and that work stays next.
  func testALaneRunningTestsSideBySideTakesOnlyAsyncTestsWhileTheyAreNext() throws {
    let mixed = Suite("M", .parallel) { Test("a0") { _ async in }; Test("b1") { _ in }; Test("a2") { _ async in } }
    let scheduled = Suite("Z", .parallel, waiter: .scheduled) { Test("z0") { _ async in } }
    var queue = WorkQueue(plan: try plan([parallel, mixed, serial, scheduled]), splitsParallelEntries: false, sideBySide: true)
    XCTAssertEqual(take(&queue, onlySideBySide: true), "wait", "P's tests block: P is next, whole")
    XCTAssertEqual(take(&queue), "+P entry P")
    XCTAssertEqual([take(&queue, onlySideBySide: true), take(&queue, onlySideBySide: true)], ["+M step M/a0#1", "wait"])
    XCTAssertEqual(take(&queue), "step M/b1#1")
    XCTAssertEqual([take(&queue, onlySideBySide: true), take(&queue, onlySideBySide: true)], ["step M/a2#1", "wait"])
    XCTAssertEqual(take(&queue), "+S entry S")
    XCTAssertEqual([take(&queue, onlySideBySide: true), take(&queue)], ["wait", "+Z entry Z"],
                   "the scheduled strategy's tests run alone")
  }

  // MARK: The run's owner

  func testTheRunsOwnerAnnouncesSuitesAsTakenAndCountsWhatEnded() throws {
    let recorder = EventRecorder()
    let channel = ReportingChannel([recorder])
    let plan = try plan([parallel, serial])
    let run = RunLife(queue: WorkQueue(plan: plan, splitsParallelEntries: true), channel: channel, stop: nil)
    let tests = TestLife(rules: rules(), events: channel.sink)
    run.begin(RunInfo())
    var handed: [Runner.PlannedTest] = []
    while handed.count < 3, case .test(let step, _, _)? = run.next(startingWith: tests, lane: 1) { handed.append(step) }
    guard case .entry(let entry)? = run.next(startingWith: tests, lane: 1) else { return XCTFail("S is handed out whole") }
    for (index, step) in handed.enumerated() {
      run.ended(step, with: TestResult(verdict: index == 1 ? .failed : .passed))
    }
    for step in steps(of: plan, suite: 1) { run.ended(step, with: TestResult(verdict: .passed)) }
    run.ended(entry)
    XCTAssertNil(run.next(startingWith: tests, lane: 1))
    let total = run.end()
    XCTAssertEqual([total.passed, total.failed], [4, 1])
    try channel.finish()
    XCTAssertEqual(recorder.events.map(\.outline), [
      "runStarted", "suiteStarted P", "testStarted p0", "testStarted p1", "testStarted p2", "suiteStarted S",
      "suiteEnded P 2/1", "suiteEnded S 2/0", "runEnded 4/1",
    ])
  }

  // MARK: The test's owner, through a lane

  private func rules() -> TestLife.Rules {
    TestLife.Rules(slow: nil, watchesHangs: false, hangGrace: nil, stop: nil, replaying: nil, hung: { _, _ in })
  }

  /// Runs `suites` in one lane (``Lane``) with `executor`, no process started; returns the
  /// run's total and what the reporters heard of its tests.
  private func runInALane(_ suites: [Suite], with executor: any TestExecutor,
                          stop: StopRequest? = nil) throws -> (total: Summary, events: [String]) {
    let recorder = EventRecorder()
    let total = try Runner(suites: suites, executor: executor, stop: stop, reporters: [recorder]).run()
    let tests = recorder.events.filter {
      switch $0.kind {
      case .runStarted, .runEnded, .suiteStarted, .suiteEnded: false
      default: true
      }
    }
    return (total, tests.map(\.outline))
  }

  /// Fails the first `failing` attempts of every test, then passes; counts its runs.
  private final class FailingFirst: TestExecutor {
    let failing: Int
    let runs = Mutex(0)
    init(failing: Int) { self.failing = failing }

    func run(_ step: Runner.PlannedTest, events: EventSink) -> AttemptEnd {
      runs.withLock { $0 += 1 }
      if step.id.attempt <= failing {
        events(.issueRecorded(step.id, Issue(kind: .expectationFailed, message: "attempt \(step.id.attempt) fails")))
      }
      return .returned(duration: 0)
    }
  }

  func testAFailingAttemptRunsAgainInItsLaneAndALatePassIsFlaky() throws {
    let executor = FailingFirst(failing: 1)
    let run = try runInALane([Suite("R") { Test("r", .retries(2)) { _ in } }], with: executor)
    XCTAssertEqual(run.total.flaky, 1)
    XCTAssertEqual(executor.runs.withLock { $0 }, 2)
    XCTAssertEqual(run.events, [
      "testStarted r", "issueRecorded attempt 1 fails", "testStarted r", "testEnded r flaky, attempt 1 failed",
    ])
  }

  func testAttemptsStopRunningAgainWhenTheRunStopsOrRetriesRunOut() throws {
    let suites = [Suite("R") { Test("r", .retries(1)) { _ in } }]
    let outOfRetries = FailingFirst(failing: 5)
    XCTAssertEqual(try runInALane(suites, with: outOfRetries).total.failed, 1)
    XCTAssertEqual(outOfRetries.runs.withLock { $0 }, 2)

    // A stop requested while the attempt runs: it ends the test, and no other starts.
    let stop = StopRequest()
    final class StoppingRun: TestExecutor {
      let stop: StopRequest
      let runs = Mutex(0)
      init(stop: StopRequest) { self.stop = stop }
      func run(_ step: Runner.PlannedTest, events: EventSink) -> AttemptEnd {
        runs.withLock { $0 += 1 }
        stop.request(signal: SIGINT)
        events(.issueRecorded(step.id, Issue(kind: .expectationFailed, message: "fails")))
        return .returned(duration: 0)
      }
    }
    let stopping = StoppingRun(stop: stop)
    let stopped = try runInALane([Suite("R") { Test("r", .retries(1)) { _ in }; Test("s") { _ in } }], with: stopping,
                                 stop: stop)
    XCTAssertEqual(stopped.total.failed, 1)
    XCTAssertEqual(stopped.events, ["testStarted r", "issueRecorded fails", "testEnded r failed"],
                   "one attempt, and the test's end")
    XCTAssertEqual(stopping.runs.withLock { $0 }, 1)
  }

  /// Runs `async` tests side by side, two at once: fails the first attempt of `a1`, and ends
  /// the attempts started in pairs, the earliest first; says how each was started.
  private final class TwoBesideEachOther: TestExecutor {
    private struct State {
      var running: [(id: TestID, events: EventSink)] = []
      var log: [String] = []
      var mostAtOnce = 0
    }
    private let state = Mutex(State())
    var log: [String] { state.withLock { $0.log } }
    var mostAtOnce: Int { state.withLock { $0.mostAtOnce } }
    var sideBySideWidth: Int { 2 }
    var isolatesTests: Bool { true }

    func run(_ step: Runner.PlannedTest, events: EventSink) -> AttemptEnd {
      state.withLock { $0.log.append("alone \(step.id.name)#\(step.id.attempt)") }
      return .returned(duration: 0)
    }

    func startSideBySide(_ step: Runner.PlannedTest, events: EventSink) -> AttemptEnd? {
      state.withLock { state in
        state.log.append("beside \(step.id.name)#\(step.id.attempt)")
        state.running.append((step.id, events))
        state.mostAtOnce = max(state.mostAtOnce, state.running.count)
      }
      return nil
    }

    func waitSideBySide() -> [SideBySideEnd] {
      guard let (id, events) = state.withLock({ $0.running.isEmpty ? nil : $0.running.removeFirst() }) else { return [] }
      if id.name == "a1" && id.attempt == 1 {
        events(.issueRecorded(id, Issue(kind: .expectationFailed, message: "attempt 1 fails")))
      }
      return [SideBySideEnd(test: id, end: .returned(duration: 0))]
    }
  }

  /// A lane starts the `async` tests of a parallel suite side by side up to its executor's
  /// width, and a failing one's retry side by side too, as soon as it ended; the blocking test
  /// after them runs alone, once none of them runs.
  func testALaneRunsTestsSideBySideAndTheirRetriesBesideOthers() throws {
    let executor = TwoBesideEachOther()
    let suites = [
      Suite("A", .parallel) { for number in 0..<3 { Test("a\(number)", .retries(1)) { _ async in } } },
      Suite("B") { Test("b") { _ in } },
    ]
    let run = try runInALane(suites, with: executor)
    XCTAssertEqual([run.total.passed, run.total.flaky], [3, 1])
    XCTAssertEqual(executor.log, ["beside a0#1", "beside a1#1", "beside a2#1", "beside a1#2", "alone b#1"])
    XCTAssertEqual(executor.mostAtOnce, 2)
  }

  func testASkippedTestIsReportedWholeAndNeverReachesTheExecutor() throws {
    let executor = FailingFirst(failing: 0)
    let run = try runInALane([Suite("K") { Test("k", .skip("not today")) { _ in } }], with: executor)
    XCTAssertEqual(run.total.skipped, 1)
    XCTAssertEqual(executor.runs.withLock { $0 }, 0)
    XCTAssertEqual(run.events, ["testStarted k", "testEnded k skipped"])
  }

  func testAnAttemptThatDidNotReturnErrorsWithTheIssueThatSaysWhy() throws {
    struct Crashing: TestExecutor {
      func run(_ step: Runner.PlannedTest, events: EventSink) -> AttemptEnd { .couldNotStart(reason: "no worker") }
    }
    let run = try runInALane([Suite("C") { Test("c", .knownIssue("flaky disk")) { _ in } }], with: Crashing())
    XCTAssertEqual(run.total.errored, 1, "a known issue does not cover an attempt that never returned")
    XCTAssertEqual(run.events, ["testStarted c", "issueRecorded no worker", "testEnded c errored"])
  }

  // MARK: Judging

  func testJudgingFollowsTheFailingIssuesAndTheKnownIssue() {
    let failure = Issue(kind: .expectationFailed, message: "no")
    let thrown = Issue(kind: .errorThrown, message: "threw")
    let warning = Issue(kind: .warning, message: "hm")
    XCTAssertEqual(TestResult(judging: [warning], knownIssue: nil).verdict, .passed)
    XCTAssertEqual(TestResult(judging: [warning, failure], knownIssue: nil).verdict, .failed)
    XCTAssertEqual(TestResult(judging: [failure, thrown], knownIssue: nil).verdict, .errored)
    XCTAssertEqual(TestResult(judging: [thrown], knownIssue: "bug 12"),
                   TestResult(verdict: .knownIssue, reason: "bug 12", issues: [thrown]))
    let here = SourceLocation(fileID: "M/T.swift", filePath: "/T.swift", line: 3, column: 1)
    let missing = TestResult(judging: [warning], knownIssue: "bug 12", at: here)
    XCTAssertEqual(missing.verdict, .failed)
    XCTAssertEqual(missing.issues.last?.description, "Known issue did not occur: bug 12 (M/T.swift:3)")
  }
}

extension Event {
  /// The event in a few words, for comparing sequences.
  var outline: String {
    switch kind {
    case .runStarted: "runStarted"
    case .suiteStarted(let run): "suiteStarted \(run.suite)"
    case .suiteEnded(let run, let summary, _): "suiteEnded \(run.suite) \(summary.passed)/\(summary.failed)"
    case .runEnded(let summary, _): "runEnded \(summary.passed)/\(summary.failed)"
    case .testStarted(let test): "testStarted \(test.name)"
    case .testEnded(let test, let end):
      "testEnded \(test.name) \(end.verdict)" + end.retriedAttempts.map { ", attempt \($0.number) \($0.outcome)" }.joined()
    case .issueRecorded(_, let issue): "issueRecorded \(issue.message)"
    default: "\(kind)"
    }
  }
}
