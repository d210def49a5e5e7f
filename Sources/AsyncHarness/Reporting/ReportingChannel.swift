import Synchronization

/// Delivers a run's events to its reporters one at a time, in the order they are sent, from
/// any thread. The first error a reporter throws stops delivery (the runner then stops the
/// run and rethrows it); ``finish()`` finishes every reporter once, and later events are
/// dropped.
final class ReportingChannel: Sendable {
  private struct State {
    var reporters: [any Reporter]
    var error: (any Error)?
    var finished = false
  }

  private let state: Mutex<State>

  init(_ reporters: [any Reporter]) {
    state = Mutex(State(reporters: reporters))
  }

  /// The sink executors and test records send to.
  var sink: EventSink {
    EventSink { [self] event in send(event) }
  }

  private func send(_ event: Event) {
    state.withLock { state in
      guard !state.finished, state.error == nil else { return }
      do {
        for reporter in state.reporters { try reporter.handle(event) }
      } catch {
        state.error = error
      }
    }
  }

  /// Throws the error a reporter threw, if one did.
  func checkReporters() throws {
    if let error = state.withLock({ $0.error }) { throw error }
  }

  /// Finishes every reporter (each one, even when another throws), then throws the first
  /// error of the run or of finishing. Calling it again does nothing.
  func finish() throws {
    let reporters = state.withLock { state -> [any Reporter] in
      if state.finished { return [] }
      state.finished = true
      return state.reporters
    }
    var firstError = state.withLock { $0.error }
    for reporter in reporters {
      do { try reporter.finish() } catch { firstError = firstError ?? error }
    }
    if let firstError { throw firstError }
  }
}
