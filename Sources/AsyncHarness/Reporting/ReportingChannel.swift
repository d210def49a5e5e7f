import Foundation
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
  /// error of the run or of finishing, in the reporters' order. Calling it again does
  /// nothing. The reporters that write a whole file when the run ends (``EndOfRunReporter``:
  /// the trace, the HTML page) each finish on a thread of their own, beside the others, which
  /// finish one after another in their order on this thread: writing a long run's trace
  /// then overlaps writing its page and its JUnit file.
  func finish() throws {
    let reporters = state.withLock { state -> [any Reporter] in
      if state.finished { return [] }
      state.finished = true
      return state.reporters
    }
    let finishing = Finishing()
    let apart = DispatchGroup()
    for (index, reporter) in reporters.enumerated() where reporter is any EndOfRunReporter {
      apart.enter()
      Thread.detachNewThread {
        finishing.finish(reporter, at: index)
        apart.leave()
      }
    }
    for (index, reporter) in reporters.enumerated() where !(reporter is any EndOfRunReporter) {
      finishing.finish(reporter, at: index)
    }
    apart.wait()
    if let firstError = state.withLock({ $0.error }) ?? finishing.firstError { throw firstError }
  }
}

/// The errors reporters throw as they finish, by their place among the reporters.
private final class Finishing: Sendable {
  private let thrown = Mutex<[Int: any Error]>([:])

  /// Finishes `reporter`, the `index`th, keeping what it throws.
  func finish(_ reporter: any Reporter, at index: Int) {
    do { try reporter.finish() } catch { thrown.withLock { $0[index] = error } }
  }

  /// The error of the first reporter that threw, in the reporters' order.
  var firstError: (any Error)? { thrown.withLock { $0.min { $0.key < $1.key }?.value } }
}

/// A reporter that writes its file whole when the run ends (``EndOfRunFile``), from what it
/// kept of the events: its ``Reporter/finish()`` may run beside other reporters' (it touches
/// nothing of theirs), while those finish in their order.
protocol EndOfRunReporter: Reporter {}
