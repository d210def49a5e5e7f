import Synchronization

/// The shared state of one running test: its issues and output, whether it is still
/// running, and the wait in progress. Expectations and queues hold it so that what they
/// report lands on the test that created them, whichever thread they report from.
final class TestRecord: Sendable {
  let id: TestID
  private let lateIssues: LateIssueQueue

  private struct State {
    var isRunning = true
    var issues: [Issue] = []
    var output: [String] = []
    var activeWait: ActiveWait?
    var teardowns: [@Sendable () -> Void] = []
  }

  struct ActiveWait {
    var condition: WaitCondition
    var location: SourceLocation
  }

  private let state = Mutex(State())
  private let failures = Atomic<Int>(0)

  init(id: TestID, lateIssues: LateIssueQueue) {
    self.id = id
    self.lateIssues = lateIssues
  }

  /// The record of the test running on this task or thread, for queues that were not
  /// created by a test context.
  @TaskLocal static var current: TestRecord?

  var isRunning: Bool { state.withLock { $0.isRunning } }

  /// How many failing issues were recorded so far; a wait ends as soon as this grows.
  var failureCount: Int { failures.load(ordering: .acquiring) }

  /// Records an issue; a failing one ends the wait in progress at once.
  func record(_ issue: Issue) {
    let (running, wait) = state.withLock { state -> (Bool, WaitCondition?) in
      guard state.isRunning else { return (false, nil) }
      state.issues.append(issue)
      return (true, state.activeWait?.condition)
    }
    guard running else {
      recordLate(issue)
      return
    }
    if issue.isFailure {
      failures.add(1, ordering: .releasing)
      wait?.wake()
    }
  }

  /// Records an issue that arrived after the test ended; the runner reports it against
  /// this test after the test that is running now.
  func recordLate(_ issue: Issue) {
    let late = issue.kind == .lateSignal ? issue
      : Issue(kind: .lateSignal, message: "After the test ended: \(issue.message)",
              sourceLocation: issue.sourceLocation)
    lateIssues.append(test: id, issue: late)
  }

  func capture(_ text: String) {
    state.withLock { if $0.isRunning { $0.output.append(text) } }
  }

  /// Wakes the wait in progress so it re-evaluates its condition.
  func signal() {
    state.withLock { $0.activeWait?.condition }?.wake()
  }

  /// Begins a wait, or returns the location of the wait already in progress.
  func beginWait(_ wait: ActiveWait) -> SourceLocation? {
    state.withLock { state in
      if let active = state.activeWait { return active.location }
      state.activeWait = wait
      return nil
    }
  }

  func endWait() {
    state.withLock { $0.activeWait = nil }
  }

  /// Registers clean-up the runner performs when the test ends, before it is marked ended.
  func addTeardown(_ work: @escaping @Sendable () -> Void) {
    state.withLock { $0.teardowns.append(work) }
  }

  /// Performs the clean-up, marks the test ended and returns what it recorded. Later
  /// reports become late issues.
  func end() -> (issues: [Issue], output: [String]) {
    for work in state.withLock({ state in defer { state.teardowns.removeAll() }; return state.teardowns }).reversed() {
      work()
    }
    return state.withLock { state in
      state.isRunning = false
      return (state.issues, state.output)
    }
  }
}

/// Issues that arrived after their test ended: kept for the runner to report against
/// their test, or handed at once to `forward` (for a test run outside a runner).
final class LateIssueQueue: Sendable {
  private let items = Mutex<[(test: TestID, issue: Issue)]>([])
  private let forward: (@Sendable (TestID, Issue) -> Void)?

  init(forward: (@Sendable (TestID, Issue) -> Void)? = nil) {
    self.forward = forward
  }

  func append(test: TestID, issue: Issue) {
    if let forward { return forward(test, issue) }
    items.withLock { $0.append((test, issue)) }
  }

  func drain() -> [(test: TestID, issue: Issue)] {
    items.withLock { items in
      defer { items.removeAll() }
      return items
    }
  }
}
