import Synchronization

/// A reporter that keeps every event in memory, for tests of suites, waiters and
/// reporters.
public final class EventRecorder: Reporter {
  private let storage = Mutex<[Event]>([])

  /// Creates an empty recorder.
  public init() {}

  /// The events received so far, in order.
  public var events: [Event] { storage.withLock { $0 } }

  /// The result of every ended test, in order: its last attempt's ID, its verdict with that
  /// attempt's issues and schedule, and the seconds every attempt ran.
  public var results: [(test: TestID, result: TestResult, duration: Double)] {
    ends.map { test, end in
      (test, TestResult(verdict: end.verdict, reason: end.reason, issues: end.lastAttempt.issues,
                        scheduleTrace: end.lastAttempt.scheduleTrace), end.duration)
    }
  }

  /// The end of every ended test, in order, with each attempt.
  public var ends: [(test: TestID, end: TestEnd)] {
    events.compactMap { event in
      guard case .testEnded(let test, let end) = event.kind else { return nil }
      return (test, end)
    }
  }

  /// The issues reported against `test` after it ended (late signals).
  public func lateIssues(of test: TestID) -> [Issue] {
    let events = events
    guard let end = events.firstIndex(where: { if case .testEnded(test, _) = $0.kind { true } else { false } }) else {
      return []
    }
    return events[(end + 1)...].compactMap { event in
      guard case .issueRecorded(test, let issue) = event.kind else { return nil }
      return issue
    }
  }

  /// Keeps one event.
  /// - Parameter event: The event.
  public func handle(_ event: Event) {
    storage.withLock { $0.append(event) }
  }
}
