import AsyncHarness
import ExampleSuites
import StoriesSuites
import XCTest

/// Runs every example suite in-process under every built-in waiter, as `swift run
/// examples` does, and checks what the examples claim: the same verdicts under every
/// strategy, every known-issue demonstration caught by every strategy, the deadlock named,
/// the late signal attributed to the test that left work behind.
///
/// Synchronous test methods run on the main thread, which the runner needs to turn the
/// main run loop while tests wait.
final class ExampleMatrixTests: XCTestCase {
  private var events: [Event] = []
  private var recorder = EventRecorder()
  private let waiterNames = WaiterRegistry.builtIn.names

  override func setUpWithError() throws {
    var configuration = Configuration()
    configuration.waiters = .all
    let reporter = EventRecorder()
    let summary = try Runner(suites: allExampleSuites, configuration: configuration, reporters: [reporter]).run()
    XCTAssertTrue(summary.succeeded, "the examples run green: \(summary)")
    recorder = reporter
    events = reporter.events
  }

  /// Every ended test: its ID and its result, with its last attempt's issues.
  private var results: [(id: TestID, result: TestResult)] {
    recorder.results.map { ($0.test, $0.result) }
  }

  func testEveryTestGivesTheSameVerdictUnderEveryStrategy() {
    let declared = allExampleSuites.flatMap { suite in suite.tests.map { "\(suite.name)/\($0.name)" } }
    let verdicts = Dictionary(grouping: results, by: \.id.path)
    XCTAssertEqual(Set(verdicts.keys), Set(declared), "every example test ran")
    XCTAssertEqual(waiterNames.count, 6)
    for path in declared {
      let byWaiter = Dictionary(uniqueKeysWithValues: (verdicts[path] ?? []).map { ($0.id.host, $0.result.verdict) })
      XCTAssertEqual(Set(byWaiter.keys), Set(waiterNames), "\(path) ran under every waiter")
      XCTAssertEqual(Set(byWaiter.values).count, 1, "\(path) has one verdict across strategies: \(byWaiter)")
    }
  }

  func testEveryKnownIssueDemonstrationIsCaughtByEveryStrategy() {
    let demonstrations = allExampleSuites.flatMap { suite in
      suite.tests.filter { $0.knownIssue != nil }
        .map { "\(suite.name)/\($0.name)" }
    }
    XCTAssertEqual(demonstrations.count, 2, "the calculator and the deadlock: \(demonstrations)")
    for path in demonstrations {
      let ran = results.filter { $0.id.path == path }
      XCTAssertEqual(ran.map(\.id.host).sorted(), waiterNames.sorted(), path)
      for (id, result) in ran {
        XCTAssertEqual(result.verdict, .knownIssue, "\(id)")
        XCTAssertTrue(result.issues.contains(where: \.isFailure), "\(id) recorded the failure it demonstrates")
      }
    }
  }

  func testTheDeadlockIsReportedNamingBothQueues() {
    let deadlocks = results.filter { $0.id.suite == "MessageLoader.Deadlock" }
    XCTAssertEqual(deadlocks.count, waiterNames.count)
    for (id, result) in deadlocks {
      let issue = result.issues.first { $0.kind == .deadlock }
      XCTAssertNotNil(issue, "\(id) reported a deadlock")
      XCTAssertTrue(issue?.message.contains("main → background → main") ?? false, issue?.message ?? "\(id)")
    }
  }

  func testTheLateSignalIsAttributedToTheTestThatLeftWorkBehind() {
    for waiter in waiterNames {
      let first = TestID(suite: lateSignalStory.suite, name: lateSignalStory.leavesWorkBehind, host: waiter)
      let second = TestID(suite: lateSignalStory.suite, name: lateSignalStory.runsDuringLateSignal, host: waiter)
      let late = events.indices.filter { index in
        guard case .issueRecorded(let test, let issue) = events[index].kind else { return false }
        return issue.kind == .lateSignal && test.suite == first.suite && test.host == waiter
      }
      XCTAssertEqual(late.count, 1, "one late signal in the story under \(waiter)")
      guard let index = late.first else { continue }
      XCTAssertEqual(events[index].test?.unscheduled, first, "reported against the test that left work behind")
      let secondStarted = events.firstIndex { if case .testStarted(let test) = $0.kind { test.unscheduled == second } else { false } }
      XCTAssertNotNil(secondStarted)
      XCTAssertGreaterThan(index, secondStarted ?? .max, "it arrived while the second test ran")
      let secondResult = results.first { $0.id.unscheduled == second }?.result
      XCTAssertEqual(secondResult?.verdict, .passed)
      XCTAssertEqual(secondResult?.issues.filter { $0.kind != .warning }, [], "nothing of it lands on the second test")
      XCTAssertEqual(results.first { $0.id.unscheduled == first }?.result.verdict, .passed, "a late signal does not fail its test")
    }
  }
}

extension TestID {
  /// The identity without its schedule's replay token.
  fileprivate var unscheduled: TestID {
    TestID(suite: suite, name: name, host: host, repetition: repetition)
  }
}
