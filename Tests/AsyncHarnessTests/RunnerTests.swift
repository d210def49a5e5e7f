@testable import AsyncHarness
import Synchronization
import XCTest

final class RunnerTests: XCTestCase {
  func testKnownIssueCaughtIsNotAFailure() throws {
    let result = try onlyResult(of: [Suite("Known") {
      Test("buggy add", .knownIssue("add subtracts")) { t in t.expect(2 - 1 == 3) }
    }])
    XCTAssertEqual(result.verdict, .knownIssue)
    XCTAssertEqual(result.reason, "add subtracts")
  }

  func testKnownIssueThatDoesNotOccurFails() throws {
    let result = try onlyResult(of: [Suite("Known") {
      Test("fixed add", .knownIssue("add subtracts")) { t in t.expect(2 + 1 == 3) }
    }])
    XCTAssertEqual(result.verdict, .failed)
    XCTAssertEqual(result.issues.map(\.message), ["Known issue did not occur: add subtracts"])
  }

  func testSkipDoesNotRunTheBody() throws {
    let result = try onlyResult(of: [Suite("Skips") {
      Test("later", .skip("needs a server")) { t in t.fail("ran") }
    }])
    XCTAssertEqual(result.verdict, .skipped)
    XCTAssertEqual(result.reason, "needs a server")
    XCTAssertEqual(result.issues, [])
  }

  func testSetUpAndTearDownRunAroundEachTestEvenAfterAFailure() throws {
    let log = Mutex<[String]>([])
    let suite = Suite("Lifecycle", setUp: { t in log.withLock { $0.append("setUp \(t.id.name)") } },
                      tearDown: { t in log.withLock { $0.append("tearDown \(t.id.name)") } }) {
      Test("a") { t in log.withLock { $0.append("a") } }
      Test("b") { t in
        log.withLock { $0.append("b") }
        try t.require(false)
      }
    }
    _ = try runSuites([suite])
    XCTAssertEqual(log.withLock { $0 }, ["setUp a", "a", "tearDown a", "setUp b", "b", "tearDown b"])
  }

  func testAllRunsEveryRegisteredWaiter() throws {
    let recorder = try runSuites([Suite("Matrix") { Test("one") { _ in } }]) { $0.waiters = .all }
    XCTAssertEqual(recorder.results.map(\.test.host), WaiterRegistry.builtIn.names)
    XCTAssertEqual(recorder.results.map(\.result.verdict), Array(repeating: .passed, count: WaiterRegistry.builtIn.names.count))
  }

  func testUnknownWaiterIsRejectedBeforeAnyTestRuns() {
    let recorder = EventRecorder()
    var configuration = Configuration()
    configuration.waiters = .named("nope")
    XCTAssertThrowsError(try Runner(suites: [Suite("S") { Test("t") { _ in } }], configuration: configuration,
                                    reporters: [recorder]).run()) { error in
      XCTAssertEqual((error as? RunnerError)?.description,
                     "unknown waiter \"nope\"; known strategies: expectation, semaphore, probePoller, notification, synchronous, scheduled, or all")
    }
    XCTAssertEqual(recorder.events.count, 0)
  }

  func testASelectionWithNoTestFailsBeforeAnyEventUnlessAllowed() throws {
    let suite = Suite("Filters") { Test("loads") { _ in } }
    let recorder = EventRecorder()
    var configuration = Configuration()
    configuration.filters = ["nothing"]
    XCTAssertThrowsError(try Runner(suites: [suite], configuration: configuration, reporters: [recorder]).run()) { error in
      XCTAssertEqual(error as? RunnerError, .emptySelection(filters: ["nothing"]))
    }
    XCTAssertEqual(recorder.events.count, 0)
    configuration.allowsEmptySelection = true
    XCTAssertEqual(try Runner(suites: [suite], configuration: configuration, reporters: [recorder]).run(), Summary())
    XCTAssertEqual(recorder.events.map(\.kind.name), ["runStarted", "runEnded"])
  }

  func testFiltersMatchPathsAndTags() throws {
    let suite = Suite("Filters") {
      Test("loads messages") { _ in }
      Test("saves", .tags("db")) { _ in }
      Test("other") { _ in }
    }
    let byPath = try runSuites([suite]) { $0.filters = ["Filters/loads"] }
    XCTAssertEqual(byPath.results.map(\.test.name), ["loads messages"])
    let byTag = try runSuites([suite]) { $0.filters = ["tag:db"] }
    XCTAssertEqual(byTag.results.map(\.test.name), ["saves"])
  }

  /// `--skip` leaves out what the same text would select as a filter, after the filters chose.
  func testSkipsLeaveOutWhatTheyMatch() throws {
    let suite = Suite("Filters") {
      Test("loads messages") { _ in }
      Test("loads drafts", .tags("db")) { _ in }
      Test("other") { _ in }
    }
    let byPath = try runSuites([suite]) { $0.skips = ["messages"] }
    XCTAssertEqual(byPath.results.map(\.test.name), ["loads drafts", "other"])
    let both = try runSuites([suite]) { $0.filters = ["loads"]; $0.skips = ["tag:db"] }
    XCTAssertEqual(both.results.map(\.test.name), ["loads messages"])
    var configuration = Configuration()
    configuration.skips = ["Filters"]
    XCTAssertThrowsError(try Runner(suites: [suite], configuration: configuration, reporters: []).run()) { error in
      XCTAssertEqual((error as? RunnerError)?.description,
                     "no test matches --skip \"Filters\" (--list shows the tests; --allow-empty allows an empty run)")
    }
  }

  /// A filter matches as the standard library's `String.contains` does (character by
  /// character: `é` written as `e` and a combining accent is the character `é`, `\r\n` is one
  /// character), whether the byte-by-byte path (ASCII) or the character-by-character one
  /// decides. (Foundation's `contains`, which this file sees, compares UTF-16 code units instead.)
  func testAFilterMatchesAsStringContainsDoes() {
    let cases: [(String, String, Bool)] = [
      ("Filters/loads messages", "loads", true), ("Filters/loads messages", "Loads", false), ("aab", "ab", true),
      ("ab", "abc", false), ("Filters/x", "Filters/x", true), ("Filters/x", "s/x ", false), ("any", "", true),
      ("café/ok", "e\u{301}", true), ("Пример/тест", "р/т", true), ("a\r\nb", "\n", false), ("a\r\nb", "\r\n", true),
    ]
    for (text, part, contains) in cases {
      XCTAssertEqual(Configuration.text(text, contains: part), contains, "\(text.debugDescription) contains \(part.debugDescription)")
    }
  }

  func testShuffleIsReproducibleFromTheSeed() throws {
    let suite = Suite("Order") {
      for index in 0..<12 { Test("t\(index)") { _ in } }
    }
    let first = try runSuites([suite]) { $0.shuffleSeed = 42 }.results.map(\.test.name)
    let again = try runSuites([suite]) { $0.shuffleSeed = 42 }.results.map(\.test.name)
    let other = try runSuites([suite]) { $0.shuffleSeed = 7 }.results.map(\.test.name)
    XCTAssertEqual(first, again)
    XCTAssertNotEqual(first, other)
    XCTAssertEqual(Set(first), Set((0..<12).map { "t\($0)" }))
  }

  func testRepetitionAndUntilFailure() throws {
    let runs = Atomic<Int>(0)
    let suite = Suite("Repeat") {
      Test("fails on the third run") { t in
        let run = runs.add(1, ordering: .relaxed).newValue
        t.expect(run != 3)
      }
    }
    let recorder = try runSuites([suite]) {
      $0.repetitions = 10
      $0.untilFailure = true
    }
    XCTAssertEqual(recorder.results.map(\.test.repetition), [1, 2, 3])
    XCTAssertEqual(recorder.results.map(\.result.verdict), [.passed, .passed, .failed])
  }

  func testLateFulfillmentIsReportedAgainstItsOwnTest() throws {
    let createLine = #line + 2
    let suite = Suite("Late") {
      Test("leaves work behind") { t in Leftover.value.withLock { $0 = t.expectation("saved", requiresWait: false) } }
      Test("runs next") { t in
        Leftover.value.withLock { $0 }?.fulfill()
        let own = t.expectation("own", isInverted: true)
        try t.wait(for: own, timeout: .milliseconds(10))
      }
    }
    let recorder = try runSuites([suite])
    XCTAssertEqual(recorder.results.map(\.result.verdict), [.passed, .passed])
    let first = recorder.results[0].test
    XCTAssertEqual(recorder.lateIssues(of: first).map(\.kind), [.lateSignal])
    XCTAssertEqual(recorder.lateIssues(of: first).map(\.description), [
      "Late fulfillment of \"saved\" (created at Tests/AsyncHarnessTests/RunnerTests.swift:\(createLine)) arrived after its test ended (Tests/AsyncHarnessTests/RunnerTests.swift:\(createLine + 2))",
    ])
    XCTAssertEqual(recorder.lateIssues(of: recorder.results[1].test), [])
  }

  func testAsyncBodyRunsWhileTheMainRunLoopTurns() throws {
    let result = try onlyResult(of: [Suite("Async") {
      Test("hops to the main actor") { t async throws in
        let onMain = await MainActor.run { Thread.isMainThread }
        t.expect(onMain)
      }
    }])
    XCTAssertEqual(result.verdict, .passed)
  }

  func testEventsComeInOrder() throws {
    let recorder = try runSuites([Suite("Order") { Test("one") { t in t.log("hello") } }])
    XCTAssertEqual(recorder.events.map(\.kind.name),
                   ["runStarted", "suiteStarted", "testStarted", "outputCaptured", "testEnded", "suiteEnded", "runEnded"])
    XCTAssertEqual(recorder.events[3].kind, .outputCaptured(TestID(suite: "Order", name: "one", host: "expectation"), "hello"))
  }

  func testTraitsDecidedAtRunTime() throws {
    for skips in [true, false] {
      let test = Test("maybe", traits: skips ? [.skip("not today")] : []) { t in t.log("ran") }
      XCTAssertEqual(test.skipReason, skips ? "not today" : nil)
      XCTAssertNil(test.knownIssue)
      XCTAssertEqual(try onlyResult(of: [Suite("Runtime") { test }]).verdict, skips ? .skipped : .passed)
    }
  }

  func testTimeLimitEndsAWaitThatWouldOutlastIt() throws {
    let recorder = try runSuites([Suite("Limits") {
      Test("waits a minute") { t in
        try t.wait(for: t.expectation("never"), timeout: .seconds(60))
      }
    }]) {
      $0.timeLimit = .milliseconds(100)
      $0.waiters = .all
    }
    XCTAssertEqual(recorder.results.count, WaiterRegistry.builtIn.names.count)
    for (test, result, _) in recorder.results {
      XCTAssertEqual(result.verdict, .errored, test.host)
      XCTAssertEqual(result.issues.filter(\.isFailure).map(\.message),
                     ["Test exceeded its time limit of 0.1 seconds during the wait for \"never\""], test.host)
    }
  }

  func testTimeLimitCancelsAHangingAsyncBody() throws {
    let recorder = try runSuites([Suite("Limits") {
      Test("hangs") { _ async throws in
        try await Task.sleep(for: .seconds(3600)) // allowed: stands in for a hang the time limit must end
      }
      Test("runs next") { t in t.expect(true) }
    }]) { $0.timeLimit = .milliseconds(100) }
    XCTAssertEqual(recorder.results.map(\.result.verdict), [.errored, .passed])
    XCTAssertEqual(recorder.results.first?.result.issues.map(\.message),
                   ["Test exceeded its time limit of 0.1 seconds in its async body, which was cancelled and left running: "
                      + "this process now runs at risk, as the body may hold a thread of the cooperative pool and starve "
                      + "later async tests (in a worker process, the default isolation, the worker is retired instead)"])
  }

  /// Issues and output reach the reporters when they are recorded, not when the test ends:
  /// the test's own body sees them in the recorder while it still runs.
  func testIssuesAndOutputReachReportersWhenRecorded() throws {
    let recorder = EventRecorder()
    let seenInsideTheBody = Mutex<[String]>([])
    let suite = Suite("Live") {
      Test("records") { t in
        t.log("first")
        t.record(Issue(kind: .warning, message: "careful"))
        seenInsideTheBody.withLock { $0 = recorder.events.map(\.kind.name) }
      }
    }
    try Runner(suites: [suite], reporters: [recorder]).run()
    XCTAssertEqual(seenInsideTheBody.withLock { $0 },
                   ["runStarted", "suiteStarted", "testStarted", "outputCaptured", "issueRecorded"])
  }

  /// Issues recorded from other threads while their test ends are never lost and never out
  /// of place: each is either in the result (and its event comes before `testEnded`) or a
  /// late signal whose event comes after it. Repeated, because the end races the recording.
  func testIssuesRacingTheEndOfTheirTestAreNeitherLostNorMisplaced() throws {
    let perThread = 25
    let threads = 4
    for round in 0..<200 {
      let done = DispatchGroup()
      let suite = Suite("Race") {
        Test("ends while callbacks record") { t in
          for thread in 0..<threads {
            done.enter()
            DispatchQueue.global().async {
              for index in 0..<perThread { t.record(Issue(kind: .warning, message: "\(thread).\(index)")) }
              done.leave()
            }
          }
        }
        Test("waits for the callbacks") { _ in done.wait() }
      }
      let recorder = try runSuites([suite])
      let first = TestID(suite: "Race", name: "ends while callbacks record", host: "expectation")
      let events = recorder.events
      let end = try XCTUnwrap(events.firstIndex { if case .testEnded(first, _) = $0.kind { true } else { false } })
      guard case .testEnded(_, let ended) = events[end].kind else { return XCTFail() }
      let before = events[..<end].compactMap { event -> Issue? in
        guard case .issueRecorded(first, let issue) = event.kind else { return nil }
        return issue
      }
      let late = recorder.lateIssues(of: first)
      XCTAssertEqual(before.count, ended.lastAttempt.issueCount, "round \(round): testEnded counts the issues before it")
      XCTAssertTrue(before.allSatisfy { $0.kind != .lateSignal }, "round \(round)")
      XCTAssertTrue(late.allSatisfy { $0.kind == .lateSignal }, "round \(round)")
      XCTAssertEqual(before.count + late.count, perThread * threads, "round \(round): none lost")
    }
  }
}
