import Synchronization

/// A reporter that keeps every event in memory, for tests of suites, waiters and
/// reporters.
public final class EventRecorder: Reporter, Sendable {
  private let storage = Mutex<[Event]>([])

  /// Creates an empty recorder.
  public init() {}

  /// The events received so far, in order.
  public var events: [Event] { storage.withLock { $0 } }

  /// The result of every ended test, in order.
  public var results: [(test: TestID, result: TestResult, duration: Double)] {
    events.compactMap { event in
      guard event.kind == .testEnded, let test = event.test, let result = event.result else { return nil }
      return (test, result, event.duration ?? 0)
    }
  }

  /// The issues reported against `test` after it ended (late signals).
  public func lateIssues(of test: TestID) -> [Issue] {
    let events = events
    guard let end = events.firstIndex(where: { $0.kind == .testEnded && $0.test == test }) else { return [] }
    return events[(end + 1)...].compactMap { $0.kind == .issueRecorded && $0.test == test ? $0.issue : nil }
  }

  public func handle(_ event: Event) {
    storage.withLock { $0.append(event) }
  }
}
