import AsyncHarness
import Foundation
import Synchronization

/// One rule of the contract: a test run under the waiter, and what its result must be.
struct Fixture: Sendable {
  let test: Test
  let check: @Sendable (Observed) -> [String]

  /// A fixture whose test must end with `verdict`, with failure messages containing each of
  /// `messages`, within `maximumDuration` seconds.
  init(_ test: Test, verdict: Verdict, messages: [String] = [], maximumDuration: Double = 10,
       extra: (@Sendable (Observed) -> [String])? = nil) {
    self.test = test
    self.check = { observed in
      var problems: [String] = []
      if observed.result.verdict != verdict {
        problems.append("ended \(observed.result.verdict.rawValue), expected \(verdict.rawValue) (issues: \(observed.result.issues.map(\.message)))")
      }
      for message in messages where !observed.failingMessages.contains(where: { $0.contains(message) }) {
        problems.append("no failure message containing \"\(message)\" (got \(observed.failingMessages))")
      }
      if observed.duration > maximumDuration {
        problems.append("took \(observed.duration) s, more than \(maximumDuration) s")
      }
      return problems + (extra?(observed) ?? [])
    }
  }

  static let all: [Fixture] = waking + expectationSemantics + failFast + isolation + misuse + economy
}

/// A line of this file, as messages name it.
private func here(_ line: Int, fileID: String = #fileID, filePath: String = #filePath) -> SourceLocation {
  SourceLocation(fileID: fileID, filePath: filePath, line: line, column: 1)
}

// MARK: Waking

extension Fixture {
  static let waking: [Fixture] = [
    Fixture(Test("fulfilled from a background thread") { t in
      let done = t.expectation("done")
      DispatchQueue.global().async { done.fulfill() }
      try t.wait(for: done)
    }, verdict: .passed),
    Fixture(Test("fulfilled from the main queue while waiting") { t in
      let done = t.expectation("done")
      DispatchQueue.global().async { DispatchQueue.main.async { done.fulfill() } }
      try t.wait(for: done)
    }, verdict: .passed),
    Fixture(Test("fulfilled from OperationQueue.main while waiting") { t in
      let done = t.expectation("done")
      OperationQueue.main.addOperation { done.fulfill() }
      try t.wait(for: done)
    }, verdict: .passed),
    Fixture(Test("probe becomes true on another thread") { t in
      let flag = Atomic<Bool>(false)
      DispatchQueue.global().async { flag.store(true, ordering: .releasing) }
      try t.wait(until: { flag.load(ordering: .acquiring) })
    }, verdict: .passed),
    Fixture(Test("notification posted from another thread") { t in
      let name = Notification.Name("AsyncHarnessConformance.posted")
      let posted = t.expectation(forNotification: name, count: 2)
      DispatchQueue.global().async {
        NotificationCenter.default.post(name: name, object: nil)
        NotificationCenter.default.post(name: name, object: nil)
      }
      try t.wait(for: posted)
    }, verdict: .passed),
    Fixture(Test("async wait fulfilled from a task") { t async throws in
      let done = t.expectation("done")
      Task.detached { done.fulfill() }
      try await t.wait(for: done)
    }, verdict: .passed),
    Fixture(Test("blocking wait off the main thread") { t async throws in
      let done = t.expectation("done")
      DispatchQueue.global().async { done.fulfill() }
      try await onBackgroundThread { try t.wait(for: done) }
    }, verdict: .passed),
  ]
}

/// Runs `work` on a thread of its own (not the main thread, not a Swift concurrency
/// thread) and returns what it threw.
private func onBackgroundThread(_ work: @escaping @Sendable () throws -> Void) async throws {
  try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
    Thread { continuation.resume(with: Result { try work() }) }.start()
  }
}

// MARK: Expectation semantics

extension Fixture {
  static let expectationSemantics: [Fixture] = [
    Fixture(Test("unfulfilled expectation times out") { t in
      let never = t.expectation("never fulfilled")
      try t.wait(for: never, timeout: .milliseconds(50))
    }, verdict: .failed, messages: ["Exceeded timeout of 0.05 seconds, with unfulfilled expectations: \"never fulfilled\" created at \(here(#line - 2))"]),
    Fixture(Test("async wait times out") { t async throws in
      let never = t.expectation("never fulfilled")
      try await t.wait(for: never, timeout: .milliseconds(50))
    }, verdict: .failed, messages: ["Exceeded timeout of 0.05 seconds"]),
    Fixture(Test("probe times out") { t in
      try t.wait(until: { false }, timeout: .milliseconds(50))
    }, verdict: .failed, messages: ["Exceeded timeout of 0.05 seconds waiting until the condition held"]),
    Fixture(Test("a probe is judged by the evaluation that ended the wait") { t in
      // Holds at exactly one evaluation, then never again.
      let evaluations = Atomic<Int>(0)
      try t.wait(until: { evaluations.add(1, ordering: .relaxed).newValue == 3 })
    }, verdict: .passed),
    Fixture(Test("inverted expectation not fulfilled passes") { t in
      let never = t.expectation("must not happen", isInverted: true)
      try t.wait(for: never, timeout: .milliseconds(50))
    }, verdict: .passed),
    Fixture(Test("inverted expectation fulfilled fails") { t in
      let never = t.expectation("must not happen", isInverted: true)
      DispatchQueue.global().async { never.fulfill() }
      try t.wait(for: never, timeout: .seconds(5))
    }, verdict: .failed, messages: ["Fulfilled inverted expectation \"must not happen\""], maximumDuration: 4),
    Fixture(Test("expected fulfillment count") { t in
      let three = t.expectation("three calls", expectedFulfillmentCount: 3)
      for _ in 0..<3 { DispatchQueue.global().async { three.fulfill() } }
      try t.wait(for: three)
    }, verdict: .passed),
    Fixture(Test("count not reached names the progress") { t in
      let three = t.expectation("three calls", expectedFulfillmentCount: 3)
      three.fulfill()
      try t.wait(for: three, timeout: .milliseconds(50))
    }, verdict: .failed, messages: ["\"three calls\" (1 of 3) created at \(here(#line - 3))"]),
    Fixture(Test("enforced order violated") { t in
      let first = t.expectation("first")
      let second = t.expectation("second")
      second.fulfill()
      first.fulfill()
      try t.wait(for: [first, second], enforceOrder: true)
    }, verdict: .failed, messages: ["requires \"first\", actually fulfilled \"second\""]),
    Fixture(Test("enforced order kept") { t in
      let first = t.expectation("first")
      let second = t.expectation("second")
      DispatchQueue.global().async {
        first.fulfill()
        second.fulfill()
      }
      try t.wait(for: [first, second], enforceOrder: true)
    }, verdict: .passed),
    Fixture(Test("over-fulfillment is misuse") { t in
      let once = t.expectation("once")
      once.fulfill()
      once.fulfill()
      try t.wait(for: once)
    }, verdict: .errored, messages: ["API violation - multiple calls made to fulfill() for \"once\""]),
  ]
}

// MARK: Fail fast

extension Fixture {
  static let failFast: [Fixture] = [
    Fixture(Test("failing callback ends a 60 s wait") { t in
      let never = t.expectation("never fulfilled")
      DispatchQueue.global().async { t.expect(false, "the callback saw a wrong value") }
      try t.wait(for: never, timeout: .seconds(60))
    }, verdict: .failed, messages: ["Expectation failed: the callback saw a wrong value"], maximumDuration: 5),
    Fixture(Test("failing callback ends a 60 s probe wait") { t in
      DispatchQueue.global().async { t.expect(false, "the callback saw a wrong value") }
      try t.wait(until: { false }, timeout: .seconds(60))
    }, verdict: .failed, messages: ["the callback saw a wrong value"], maximumDuration: 5),
    Fixture(Test("failing callback ends a 60 s async wait") { t async throws in
      let never = t.expectation("never fulfilled")
      Task.detached { t.expect(false, "the callback saw a wrong value") }
      try await t.wait(for: never, timeout: .seconds(60))
    }, verdict: .failed, messages: ["the callback saw a wrong value"], maximumDuration: 5),
    softFailureFirst(Test("an earlier soft failure does not end a later wait") { t in
      t.expect(false, "a soft failure before the wait")
      let done = t.expectation("done")
      DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { done.fulfill() }
      try t.wait(for: done)
      t.expect(done.isFulfilled, "the wait returned before its fulfillment")
      t.expect(false, "a check after the wait")
    }),
    softFailureFirst(Test("an earlier soft failure does not end a later async wait") { t async throws in
      t.expect(false, "a soft failure before the wait")
      let done = t.expectation("done")
      DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { done.fulfill() }
      try await t.wait(for: done)
      t.expect(done.isFulfilled, "the wait returned before its fulfillment")
      t.expect(false, "a check after the wait")
    }),
    softFailureFirst(Test("an earlier soft failure does not end a later wait of a main-actor body") { @MainActor t async throws in
      t.expect(false, "a soft failure before the wait")
      let done = t.expectation("done")
      DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { done.fulfill() }
      try await t.wait(for: done)
      t.expect(false, "a check after the wait")
    }),
    softFailureFirst(Test("an earlier soft failure does not end a later probe wait") { t in
      t.expect(false, "a soft failure before the wait")
      let flag = Atomic<Bool>(false)
      DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { flag.store(true, ordering: .releasing) }
      try t.wait(until: { flag.load(ordering: .acquiring) })
      t.expect(false, "a check after the wait")
    }),
  ]
}

// MARK: Isolation between tests

/// The expectation a fixture leaves behind for the next one to fulfill late.
private let leftBehind = Mutex<Expectation?>(nil)

extension Fixture {
  static let isolation: [Fixture] = [
    Fixture(Test("leaves an expectation behind") { t in
      let late = t.expectation("fulfilled after this test", requiresWait: false)
      leftBehind.withLock { $0 = late }
    }, verdict: .passed, extra: { observed in
      observed.lateIssues.contains { $0.kind == .lateSignal && $0.message.contains("\"fulfilled after this test\"") }
        ? [] : ["the late fulfillment was not reported against this test (late issues: \(observed.lateIssues))"]
    }),
    Fixture(Test("a late fulfillment does not satisfy a later wait") { t in
      let own = t.expectation("this test's own", isInverted: true)
      let late = leftBehind.withLock { $0 }
      late?.fulfill()
      try t.wait(for: own, timeout: .milliseconds(50))
      t.expect(late != nil, "the previous fixture left nothing behind")
    }, verdict: .passed),
  ]
}

// MARK: Misuse

extension Fixture {
  static let misuse: [Fixture] = [
    Fixture(Test("waiting twice on one expectation") { t in
      let done = t.expectation("done")
      done.fulfill()
      try t.wait(for: done)
      try t.wait(for: done)
    }, verdict: .errored, messages: [
      "API violation - expectation \"done\" created at \(here(#line - 5)) was already waited on at \(here(#line - 3)); waited on again at \(here(#line - 2))",
    ]),
    Fixture(Test("waiting for no expectations") { t in
      try t.wait(for: [])
    }, verdict: .errored, messages: ["API violation - call made to wait without any expectations having been set"]),
    Fixture(Test("nested wait from another thread") { t in
      let outer = t.expectation("outer")
      // The main queue runs this only while the outer wait turns the run loop, so the
      // background wait below starts while the outer one is in progress.
      DispatchQueue.main.async {
        DispatchQueue.global().async {
          let inner = t.expectation("inner", isInverted: true)
          do { try t.wait(for: inner, timeout: .milliseconds(50)) } catch {}
          outer.fulfill()
        }
      }
      try t.wait(for: outer)
    }, verdict: .errored, messages: ["API violation - nested wait at", "while the wait made at"]),
    Fixture(Test("blocking wait inside a main-queue callout") { t in
      let outer = t.expectation("outer")
      DispatchQueue.main.async {
        let inner = t.expectation("inner", isInverted: true)
        do { try t.wait(for: inner, timeout: .milliseconds(50)) } catch {}
        outer.fulfill()
      }
      try t.wait(for: outer)
    }, verdict: .errored, messages: ["A blocking wait cannot run inside a main-queue callout", "Use `try await t.wait(...)` instead"]),
    Fixture(Test("decided waits inside a main-queue callout are not misuse") { t in
      let outer = t.expectation("outer")
      DispatchQueue.main.async {
        let fulfilled = t.expectation("already fulfilled")
        fulfilled.fulfill()
        let never = t.expectation("must not happen", isInverted: true)
        do {
          try t.wait(for: fulfilled)
          try t.wait(for: never, timeout: .zero)
          try t.wait(until: { true })
          outer.fulfill()
        } catch {}
      }
      try t.wait(for: outer)
    }, verdict: .passed),
  ]
}

// MARK: Economy

extension Fixture {
  static let economy: [Fixture] = [
    Fixture(Test("waiting does not burn the CPU") { t in
      let never = t.expectation("never fulfilled", isInverted: true)
      let before = processCPUSeconds()
      try t.wait(for: never, timeout: .milliseconds(300))
      let used = processCPUSeconds() - before
      t.expect(used < 0.15, "waiting 0.3 s used \(used) s of CPU: the waiter spins")
    }, verdict: .passed),
  ]
}

extension Fixture {
  /// A test that records a soft failure, then waits, then checks: the wait must still wait,
  /// and the check after it must run.
  fileprivate static func softFailureFirst(_ test: Test) -> Fixture {
    let messages = ["a soft failure before the wait", "a check after the wait"]
    return Fixture(test, verdict: .failed, messages: messages,
                   extra: { observed in onlyMessages(messages.map { "Expectation failed: \($0)" }, observed) })
  }
}

/// The problem, when the test's failing messages are not exactly `expected`.
private func onlyMessages(_ expected: [String], _ observed: Observed) -> [String] {
  observed.failingMessages == expected ? [] : ["failing messages were \(observed.failingMessages), expected \(expected)"]
}

/// CPU time (user and system) the process has used, in seconds.
private func processCPUSeconds() -> Double {
  var usage = rusage()
  #if os(Linux)
  getrusage(RUSAGE_SELF.rawValue, &usage)
  #else
  getrusage(RUSAGE_SELF, &usage)
  #endif
  func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
  return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}
