import Foundation
import Synchronization

/// How a wait stands when the harness evaluates it.
enum WaitState: Sendable, Equatable {
  /// Not decided yet.
  case pending
  /// Decided: how it ended, and the failure to record when it did not succeed, with the
  /// call it is attributed to (the wait, or the `fulfill()` that broke it).
  case ended(WaitResult, failure: String?, at: SourceLocation)
}

/// A wait the test context is about to make: what it waits for and how to judge it.
struct WaitSpec: Sendable {
  var summary: String
  var location: SourceLocation
  var timeout: Duration
  var isPolled: Bool
  /// The wait's state; `timedOut` tells whether the deadline passed.
  var state: @Sendable (_ timedOut: Bool) -> WaitState
  /// Called once when the wait ends, before it is judged: stops what fulfills the
  /// expectations it covered (notification observers).
  var ended: @Sendable () -> Void = {}
}

/// How a wait ended, before the form that made it decides what to record and throw.
enum WaitEnd: Sendable, Equatable {
  /// The wait was decided; `failedDuring` tells whether a failing issue was recorded while
  /// it ran.
  case decided(WaitResult, failure: String?, at: SourceLocation, failedDuring: Bool)
  /// A failing issue recorded during the wait ended it early (fail fast).
  case interruptedByFailure
  /// The test's time limit ended the wait.
  case timeLimitReached
  /// The waiter returned before the wait was decided and before its deadline.
  case waiterReturnedEarly

  /// How the wait ended, as `waitEnded` says it: `completed`, `timedOut`, `incorrectOrder`,
  /// `invertedFulfillment`, `interrupted` (a failure recorded during it ended it),
  /// `timeLimitExceeded` or `waiterReturnedEarly`.
  var outcome: String {
    switch self {
    case .decided(.completed, _, _, _): "completed"
    case .decided(.timedOut, _, _, _): "timedOut"
    case .decided(.incorrectOrder, _, _, _): "incorrectOrder"
    case .decided(.invertedFulfillment, _, _, _): "invertedFulfillment"
    case .decided(.interrupted, _, _, _), .interruptedByFailure: "interrupted"
    case .timeLimitReached: "timeLimitExceeded"
    case .waiterReturnedEarly: "waiterReturnedEarly"
    }
  }
}

/// The wait engine: the one wait every public form of waiting (TestContext+Waiting.swift)
/// goes through, whatever the strategy, from the spec of what is awaited to how the form
/// ends.
extension TestContext {
  // MARK: Specs

  /// The wait for `expectations`: decided by ``ExpectationOutcome`` from their snapshots,
  /// and stopping what fulfills them (notification observers) when it ends.
  func expectationSpec(_ expectations: [Expectation], timeout: Duration?, enforceOrder: Bool,
                       location: SourceLocation) -> WaitSpec {
    let timeout = timeout ?? defaultTimeout
    let labels = expectations.map { "\"\($0.expectationDescription)\"" }.joined(separator: ", ")
    return WaitSpec(summary: "the wait for \(labels)", location: location, timeout: timeout, isPolled: false,
                    state: { timedOut in
      let outcome = ExpectationOutcome.evaluate(expectations.map(\.snapshot), enforceOrder: enforceOrder, timedOut: timedOut)
      guard let result = outcome.result else { return .pending }
      return .ended(result, failure: outcome.failureMessage(timeout: timeout, waitedAt: location),
                    at: outcome.failureLocation ?? location)
    }, ended: {
      for expectation in expectations { expectation.stopFulfillment() }
    })
  }

  /// The polled wait until `condition` holds; `description`, when given, names it in the
  /// timeout's message.
  func probeSpec(_ description: String?, _ condition: @escaping @Sendable () -> Bool, timeout: Duration?,
                 location: SourceLocation) -> WaitSpec {
    let timeout = timeout ?? defaultTimeout
    let awaited = description.map { "until \"\($0)\"" } ?? "until a condition holds"
    // Once an evaluation saw the condition hold, the wait is met, even if it changes back
    // before the wait is judged.
    let held = Atomic<Bool>(false)
    return WaitSpec(summary: "the wait \(awaited)", location: location, timeout: timeout, isPolled: true) { timedOut in
      if held.load(ordering: .acquiring) || condition() {
        held.store(true, ordering: .releasing)
        return .ended(.completed, failure: nil, at: location)
      }
      guard timedOut else { return .pending }
      let what = description.map { "until \"\($0)\"" } ?? "until the condition held"
      return .ended(.timedOut, failure: "Exceeded timeout of \(timeout.secondsDescription) seconds waiting \(what)", at: location)
    }
  }

  /// Checks that the expectations may be waited for here (there are some, they belong to
  /// this test, none was waited for before) and marks them waited for.
  func claim(_ expectations: [Expectation], at location: SourceLocation) throws {
    if expectations.isEmpty {
      throw misuse("API violation - call made to wait without any expectations having been set", at: location)
    }
    for expectation in expectations {
      if expectation.owner !== record {
        throw misuse("API violation - expectation \"\(expectation.expectationDescription)\" created at \(expectation.sourceLocation) belongs to another test (\(expectation.owner.id.path))", at: location)
      }
      let earlier = expectation.state.withLock { state -> SourceLocation? in
        if let earlier = state.waitedAt { return earlier }
        state.waitedAt = location
        return nil
      }
      if let earlier {
        throw misuse("API violation - expectation \"\(expectation.expectationDescription)\" created at \(expectation.sourceLocation) was already waited on at \(earlier); waited on again at \(location)", at: location)
      }
    }
  }

  // MARK: The shared wait

  /// Makes a blocking wait: the waiter blocks this thread, unless the wait is decided
  /// already. A wait that would have to block where no thread may be blocked (inside a
  /// main-queue callout, or on a Swift concurrency thread) is misuse.
  func blockingWait(_ spec: WaitSpec) throws -> WaitEnd {
    let started = reportsWaits ? Date() : nil
    return reported(try makeBlockingWait(spec), of: spec, since: started)
  }

  /// Makes a suspending wait: the waiter suspends the calling task, unless the wait is
  /// decided already.
  func suspendingWait(_ spec: WaitSpec) async throws -> WaitEnd {
    let started = reportsWaits ? Date() : nil
    return reported(try await makeSuspendingWait(spec), of: spec, since: started)
  }

  /// Reports how the wait ended (`waitEnded`) when the run asks for it (``reportsWaits``,
  /// `started` is then when it began).
  private func reported(_ end: WaitEnd, of spec: WaitSpec, since started: Date?) -> WaitEnd {
    if let started { record.waitEnded(spec.summary, outcome: end.outcome, duration: Date().timeIntervalSince(started)) }
    return end
  }

  private func makeBlockingWait(_ spec: WaitSpec) throws -> WaitEnd {
    if let decided = decidedAtStart(spec) { return decided }
    if MainThreadPump.isInsideCallout {
      throw misuse("A blocking wait cannot run inside a main-queue callout: the main run loop cannot turn here. Use `try await t.wait(...)` instead", at: spec.location)
    }
    if withUnsafeCurrentTask(body: { $0 != nil }) {
      throw misuse("A blocking wait cannot run on a Swift concurrency thread: it would hold a thread of the cooperative pool that the awaited work may need. Use `try await t.wait(...)` instead", at: spec.location)
    }
    let wait = try beginWait(spec)
    if wait.hasTimeLeft { waiter.block(on: wait.condition, until: wait.deadline.effective) }
    return conclude(spec, wait)
  }

  private func makeSuspendingWait(_ spec: WaitSpec) async throws -> WaitEnd {
    if let decided = decidedAtStart(spec) { return decided }
    let wait = try beginWait(spec)
    if wait.hasTimeLeft { await waiter.suspend(on: wait.condition, until: wait.deadline.effective) }
    return conclude(spec, wait)
  }

  /// How a wait ends when its outcome is known before it begins (all fulfilled, an
  /// inverted one fulfilled, or a timeout of zero): it needs no waiter and no turning run
  /// loop, so it is never misuse, wherever it is made.
  private func decidedAtStart(_ spec: WaitSpec) -> WaitEnd? {
    guard case .ended(let result, let failure, let location) = spec.state(spec.timeout <= .zero) else { return nil }
    spec.ended()
    let failedDuring = record.failureCount > record.acknowledgedFailureCount
    record.acknowledgeFailures()
    return .decided(result, failure: failure, at: location, failedDuring: failedDuring)
  }

  private struct BegunWait {
    var condition: WaitCondition
    /// How many failing issues the test's code knew of when the wait began: it ends early
    /// only when the count grows past it.
    var failuresBefore: Int
    var deadline: (wait: ContinuousClock.Instant, effective: ContinuousClock.Instant)

    /// Whether the wait has time to wait: one made after the test's time limit passed (by an
    /// `async` body cancelled at its limit and still running) ends at once, without asking
    /// the strategy, which might otherwise warn of how it would have waited.
    var hasTimeLeft: Bool { ContinuousClock().now < deadline.effective }
  }

  /// Checks the wait may begin and registers it as the test's wait in progress.
  private func beginWait(_ spec: WaitSpec) throws -> BegunWait {
    let record = record
    let failuresBefore = record.acknowledgedFailureCount
    let condition = WaitCondition(
      summary: spec.summary, isPolled: spec.isPolled, sourceLocation: spec.location, queues: queues,
      timeout: spec.timeout, recordWarning: { record.record($0) },
      isDone: { spec.state(false) != .pending || record.failureCount > failuresBefore })
    if let activeLocation = record.beginWait(.init(condition: condition, location: spec.location)) {
      throw misuse("API violation - nested wait at \(spec.location) while the wait made at \(activeLocation) is in progress", at: spec.location)
    }
    // The wait's own deadline, or the test's time limit when that comes first.
    let wait = ContinuousClock().now.advanced(by: spec.timeout)
    return BegunWait(condition: condition, failuresBefore: failuresBefore,
                     deadline: (wait, min(wait, timeLimit?.deadline ?? wait)))
  }

  /// Ends the wait and tells how: decided, or why it stopped before it was.
  private func conclude(_ spec: WaitSpec, _ wait: BegunWait) -> WaitEnd {
    record.endWait()
    spec.ended()
    let now = ContinuousClock().now
    let failedDuring = record.failureCount > wait.failuresBefore
    record.acknowledgeFailures()
    let expiry = wait.condition.expiryNote
    if case .ended(let result, let failure, let location) = spec.state(now >= wait.deadline.wait || expiry != nil) {
      let explained = failure.map { failure in expiry.map { "\(failure); \($0)" } ?? failure }
      return .decided(result, failure: explained, at: location, failedDuring: failedDuring)
    }
    if failedDuring { return .interruptedByFailure }
    if let timeLimit, now >= timeLimit.deadline {
      recordTimeLimitExceeded("during \(spec.summary)", at: spec.location)
      return .timeLimitReached
    }
    record(Issue(kind: .apiMisused,
                 message: "Waiter \"\(waiter.name)\" returned before \(spec.summary) was done and before its timeout of \(spec.timeout.secondsDescription) seconds",
                 sourceLocation: spec.location))
    return .waiterReturnedEarly
  }

  /// What a failing form of wait does with how the wait ended: records its failure and
  /// stops the test unless it succeeded with no failure recorded during it.
  func finish(_ end: WaitEnd) throws {
    switch end {
    case .decided(.completed, _, _, failedDuring: false):
      return
    case .decided(_, let failure?, let location, _):
      record(Issue(kind: .waitFailed, message: failure, sourceLocation: location))
      throw TestStopped()
    case .decided, .interruptedByFailure, .timeLimitReached, .waiterReturnedEarly:
      throw TestStopped()
    }
  }

  /// What ``result(waitingFor:timeout:enforceOrder:fileID:filePath:line:column:)`` reports.
  func result(of end: WaitEnd) -> WaitResult {
    if case .decided(let result, _, _, _) = end { return result }
    return .interrupted
  }

  func misuse(_ message: String, at location: SourceLocation) -> TestStopped {
    record(Issue(kind: .apiMisused, message: message, sourceLocation: location))
    return TestStopped()
  }
}
