@testable import AsyncHarness
import Synchronization
import XCTest

/// Issue 9, retries: a failing attempt runs again while retries are left; a test that then
/// passes is flaky, one that fails every attempt fails, and every attempt is in the stream:
/// its start and issues as they happen, its outcome in its test's one `testEnded`.
final class RetryTests: XCTestCase {
  /// A test that fails until its attempt `passingAttempt`.
  private func test(_ name: String, passingFrom passingAttempt: Int, _ traits: TestTrait...) -> Test {
    Test(name, traits: traits) { t in t.expect(t.id.attempt >= passingAttempt, "attempt \(t.id.attempt) fails") }
  }

  /// Each attempt of every `testEnded`, in order: `name #attempt outcome retry` for an
  /// attempt that ran again, `name #attempt verdict` for the last.
  private func attempts(_ recorder: EventRecorder) -> [String] {
    recorder.ends.flatMap { test, end in
      end.attempts.map { attempt in
        attempt.number == test.attempt
          ? "\(test.name) #\(attempt.number) \(end.verdict.rawValue)"
          : "\(test.name) #\(attempt.number) \(attempt.outcome.rawValue) retry"
      }
    }
  }

  func testAFailingAttemptRunsAgainAndAPassAfterItIsFlaky() throws {
    let recorder = try runSuites([Suite("Retries") {
      test("steady", passingFrom: 1)
      test("second", passingFrom: 2)
      test("never", passingFrom: 99)
    }]) { $0.retries = 2 }
    XCTAssertEqual(attempts(recorder), [
      "steady #1 passed",
      "second #1 failed retry", "second #2 flaky",
      "never #1 failed retry", "never #2 failed retry", "never #3 failed",
    ])
    guard case .runEnded(let summary, _)? = recorder.events.last?.kind else { return XCTFail("no runEnded") }
    XCTAssertEqual([summary.passed, summary.flaky, summary.failed, summary.total], [1, 1, 1, 3])
    XCTAssertFalse(summary.succeeded, "a test that failed every attempt fails the run")
  }

  func testEachAttemptHasItsOwnStartIssuesAndEnd() throws {
    let recorder = try runSuites([Suite("Retries") { test("second", passingFrom: 2) }]) { $0.retries = 1 }
    let kinds = recorder.events.compactMap { event -> String? in
      guard let test = event.test else { return nil }
      return "\(event.kind.name) #\(test.attempt)"
    }
    XCTAssertEqual(kinds, ["testStarted #1", "issueRecorded #1", "testStarted #2", "testEnded #2"])
    guard case .testEnded(_, let end)? = recorder.events.last(where: { $0.kind.name == "testEnded" })?.kind else {
      return XCTFail("no testEnded")
    }
    XCTAssertEqual(end.attempts.map(\.number), [1, 2])
    XCTAssertEqual(end.attempts.map(\.outcome), [.failed, .passed])
    XCTAssertEqual(end.attempts.map(\.issueCount), [1, 0])
    XCTAssertEqual(end.attempts.map(\.lane), [1, 1])
    XCTAssertEqual(end.verdict, .flaky)
  }

  func testTheRetriesTraitOverridesTheRun() throws {
    let recorder = try runSuites([Suite("Retries") {
      test("trait retries", passingFrom: 3, .retries(2))
      test("trait forbids", passingFrom: 2, .retries(0))
      test("negative is none", passingFrom: 2, .retries(-4))
    }]) { $0.retries = 1 }
    XCTAssertEqual(attempts(recorder), [
      "trait retries #1 failed retry", "trait retries #2 failed retry", "trait retries #3 flaky",
      "trait forbids #1 failed",
      "negative is none #1 failed",
    ])
  }

  func testWithoutRetriesAFailureIsFinal() throws {
    let recorder = try runSuites([Suite("Retries") { test("second", passingFrom: 2) }])
    XCTAssertEqual(attempts(recorder), ["second #1 failed"])
  }

  func testSkipsAndKnownIssuesAreNotRetried() throws {
    let recorder = try runSuites([Suite("Retries") {
      Test("skipped", .skip("not today")) { t in t.fail("ran") }
      Test("known", .knownIssue("always wrong")) { t in t.fail("wrong") }
    }]) { $0.retries = 3 }
    XCTAssertEqual(attempts(recorder), ["skipped #1 skipped", "known #1 knownIssue"])
  }

  func testAStopRequestEndsRetrying() throws {
    let stop = StopRequest()
    let recorder = EventRecorder()
    var configuration = Configuration()
    configuration.retries = 3
    let suite = Suite("Retries") {
      Test("stops the run") { t in
        stop.request(signal: SIGTERM)
        t.fail("failed while stopping")
      }
    }
    try Runner(suites: [suite], configuration: configuration, stop: stop, reporters: [recorder]).run()
    XCTAssertEqual(attempts(recorder), ["stops the run #1 failed"])
  }

  func testTestsUnderASchedulesAreNotRetried() throws {
    let recorder = try runSuites([Suite("Scheduled") { test("second", passingFrom: 2) }]) { configuration in
      configuration.retries = 2
      configuration.waiters = .named("scheduled")
    }
    XCTAssertEqual(attempts(recorder), ["second #1 failed"], "the same schedule gives the same result")
  }

  func testTheConsoleLabelsRetriesAndListsFlakyTestsBeforeTheResult() throws {
    let text = Mutex("")
    let console = ConsoleReporter(style: .plain) { line in text.withLock { $0 += line } }
    var configuration = Configuration()
    configuration.retries = 1
    try Runner(suites: [Suite("Retries") {
      test("second", passingFrom: 2)
      test("never", passingFrom: 99)
    }], configuration: configuration, reporters: [console]).run()
    let lines = text.withLock { $0 }.split(separator: "\n").map { $0.replacingOccurrences(of: #"\d+\.\d{3}s"#, with: "T", options: .regularExpression) }
    let file = "Tests/AsyncHarnessTests/RetryTests.swift"
    XCTAssertEqual(Array(lines.prefix(7)), [
      "RETRY Retries/second [expectation] (T)",
      "    \(file):11: Expectation failed: attempt 1 fails",
      "FLAKY Retries/second [expectation] (attempt 2) (T)",
      "RETRY Retries/never [expectation] (T)",
      "    \(file):11: Expectation failed: attempt 1 fails",
      "FAIL  Retries/never [expectation] (attempt 2) (T)",
      "    \(file):11: Expectation failed: attempt 2 fails",
    ])
    XCTAssertEqual(Array(lines.suffix(3)), [
      "Flaky (failed, then passed on a retry):",
      "    Retries/second [expectation]: passed on attempt 2",
      "Result: 0 passed, 1 flaky, 1 failed, 0 skipped in T",
    ])
  }

  func testRetryFieldsRoundTripThroughJSONLinesAndOlderLinesStillRead() throws {
    let id = TestID(suite: "S", name: "t", host: "semaphore", attempt: 2)
    let retried = Event(.testEnded(id, TestEnd(verdict: .flaky, attempts: [
      TestAttempt(number: 1, outcome: .failed, duration: 0.5, issueCount: 1), TestAttempt(number: 2, outcome: .passed, duration: 0.5, issueCount: 0),
    ])))
    XCTAssertTrue(retried.jsonLine.contains(#""outcome":"failed"},{"attempt":2,"#), retried.jsonLine)
    XCTAssertEqual(try Event(jsonLine: retried.jsonLine).kind, retried.kind)
    var summary = Summary()
    summary.count(.flaky)
    let ended = Event(.runEnded(summary, duration: 1))
    XCTAssertTrue(ended.jsonLine.contains(#""summary":{"errored":0,"failed":0,"flaky":1,"knownIssues":0,"passed":0,"skipped":0}"#),
                  ended.jsonLine)
    XCTAssertEqual(try Event(jsonLine: ended.jsonLine).kind, ended.kind)
    let older = #"{"duration":1,"kind":"runEnded","summary":{"errored":0,"failed":1,"knownIssues":0,"passed":2,"skipped":0},"timestamp":"2026-11-23T08:00:00.000Z","version":2}"#
    guard case .runEnded(let read, _) = try Event(jsonLine: older).kind else { return XCTFail("not runEnded") }
    XCTAssertEqual([read.passed, read.failed, read.flaky], [2, 1, 0])
  }
}

/// `--slow`: the runner's watch announces a running test, never one that ended.
final class SlowTestTests: XCTestCase {
  /// The race between the watch's timer and a test ending right at the threshold, run 300
  /// times: every `testSlow` comes between its test's start and its end. Every other test
  /// runs until its own announcement has reached the reporters, so announcements surely
  /// happen; the rest end about when the threshold passes, racing the timer.
  func testASlowAnnouncementNeverFollowsItsTestsEnd() throws {
    let recorder = EventRecorder()
    let tests = (0..<300).map { index in
      let name = "spins \(index)"
      return Test(name) { t in
        if index.isMultiple(of: 2) {
          let gaveUp = ContinuousClock().now + .seconds(10)
          while !recorder.events.contains(where: { $0.slowTest == name }) && ContinuousClock().now < gaveUp {
            sched_yield()
          }
          t.expect(recorder.events.contains { $0.slowTest == name }, "announced within 10 s")
        } else {
          // The subject: a body that runs about as long as the slow threshold, busy.
          let end = ContinuousClock().now + .microseconds(150 + index % 100)
          while ContinuousClock().now < end {}
        }
      }
    }
    var configuration = Configuration()
    configuration.slowThreshold = .microseconds(200)
    try Runner(suites: [Suite("Slow") { tests }], configuration: configuration, reporters: [recorder]).run()
    var running: TestID?
    var announced: Set<String> = []
    for event in recorder.events {
      switch event.kind {
      case .testStarted(let test): running = test
      case .testEnded: running = nil
      case .testSlow(let test, _):
        announced.insert(test.name)
        XCTAssertEqual(test, running, "testSlow for \(test.name) outside its run")
      default: break
      }
    }
    XCTAssertEqual(recorder.results.map(\.result.verdict), Array(repeating: .passed, count: 300))
    XCTAssertTrue(announced.isSuperset(of: (0..<150).map { "spins \($0 * 2)" }))
  }
}

extension Event {
  /// The name of the test a `testSlow` event announces.
  fileprivate var slowTest: String? { if case .testSlow(let test, _) = kind { test.name } else { nil } }
}

/// Where a chunk of captured output may end, so no character is split between two events.
final class OutputCaptureBoundaryTests: XCTestCase {
  func testAChunkEndsAfterTheLastNewlineOrTheLastWholeCharacter() {
    let cases: [(bytes: [UInt8], end: Int)] = [
      (Array("ab\ncd".utf8), 3),
      (Array("abc".utf8), 3),
      (Array("a€".utf8), 4),
      (Array("a€".utf8).dropLast(), 1),           // € cut after 2 of its 3 bytes
      (Array("a😀".utf8).dropLast(3), 1),          // a 4-byte character cut after its lead
      (Array("é".utf8), 2),
      ([0x80, 0x80], 2),                           // continuation bytes alone: nothing to wait for
      ([], 0),
    ]
    for (bytes, end) in cases {
      XCTAssertEqual(OutputCapture.boundary(in: bytes), end, "\(bytes)")
    }
  }
}
