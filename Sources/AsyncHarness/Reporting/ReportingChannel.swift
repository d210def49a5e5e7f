import Foundation
import Synchronization

/// Delivers a run's events to its reporters from one thread of its own, the dispatcher, in
/// the order they are sent: whatever thread sends an event (a lane, a test's thread, a timer)
/// only enqueues it, so a slow reporter never slows a test. The first error a reporter throws
/// stops delivery (the runner then stops the run and rethrows it); ``finish()`` delivers what
/// is queued, then finishes every reporter once, and later events are dropped.
///
/// ``flush()`` delivers, on the calling thread, what is queued (after the batch the dispatcher
/// may be delivering): a test that runs in this process has its `testStarted` and each issue
/// in the reports before its code goes on, so a crash that ends the process leaves them
/// written, at the cost of delivering them itself rather than of a handoff to the dispatcher
/// and back. Either way reporters are called one event at a time, in order, never at once.
final class ReportingChannel: Sendable {
  private struct State {
    /// Events sent and not yet taken for delivery.
    var queue: [Event] = []
    /// Whether the dispatcher waits for an event.
    var idle = false
    var error: (any Error)?
    /// Whether ``finish()`` began: the dispatcher delivers what is queued and stops.
    var closing = false
    /// The failures outside every test sent so far (``Event/Kind/outsideFailure(_:)``): the
    /// run counts them, whoever found them.
    var outsideFailures = 0
  }

  private let reporters: [any Reporter]
  private let state = Mutex(State())
  /// Held while a batch is taken and delivered, by the dispatcher or by a flush: batches reach
  /// the reporters one after another, in the order they were taken.
  private let delivering = Mutex(())
  /// Wakes the dispatcher when an event comes to an idle one, or the channel closes.
  private let work = DispatchSemaphore(value: 0)
  /// Signalled once, when the dispatcher stopped.
  private let stopped = DispatchSemaphore(value: 0)

  init(_ reporters: [any Reporter]) {
    self.reporters = reporters
    Thread.detachNewThread { [self] in dispatch() }
  }

  /// The sink executors and test records send to.
  var sink: EventSink {
    EventSink(deliver: { [self] event in send(event) }, flush: { [self] in flush() })
  }

  private func send(_ event: Event) {
    let wake = state.withLock { state -> Bool in
      guard !state.closing, state.error == nil else { return false }
      if case .outsideFailure = event.kind { state.outsideFailures += 1 }
      state.queue.append(event)
      defer { state.idle = false }
      return state.idle
    }
    if wake { work.signal() }
  }

  /// How many failures outside every test were sent so far.
  var outsideFailures: Int { state.withLock { $0.outsideFailures } }

  /// Delivers every event sent before the call, on this thread: those queued, after the batch
  /// being delivered, if any.
  func flush() {
    _ = deliverQueued()
  }

  /// Takes what is queued and hands each event to every reporter in order; returns whether
  /// there was anything, and whether the channel is closing.
  private func deliverQueued() -> (delivered: Bool, closing: Bool) {
    delivering.withLock { _ in
      let (events, closing, failed) = state.withLock { state -> ([Event], Bool, Bool) in
        defer { state.queue.removeAll(keepingCapacity: true) }
        return (state.queue, state.closing, state.error != nil)
      }
      guard !events.isEmpty, !failed else { return (!events.isEmpty, closing) }
      do {
        for event in events {
          for reporter in reporters { try reporter.handle(event) }
        }
      } catch {
        state.withLock { state in
          if state.error == nil { state.error = error }
        }
      }
      return (true, closing)
    }
  }

  /// The dispatcher: delivers what is queued until nothing is, then waits for more; once the
  /// channel closes and nothing is left, it stops.
  private func dispatch() {
    while true {
      let (delivered, closing) = deliverQueued()
      if delivered { continue }
      if closing { break }
      let sleeps = state.withLock { state -> Bool in
        guard state.queue.isEmpty, !state.closing else { return false }
        state.idle = true
        return true
      }
      if sleeps { work.wait() }
    }
    stopped.signal()
  }

  /// Throws the error a reporter threw, if one did.
  func checkReporters() throws {
    if let error = state.withLock({ $0.error }) { throw error }
  }

  /// Delivers what is queued, then finishes every reporter (each one, even when another
  /// throws), then throws the first error of the run or of finishing, in the reporters'
  /// order. Calling it again does nothing. The reporters that write a whole file when the run
  /// ends (``EndOfRunReporter``: the trace, the HTML page) each finish on a thread of their
  /// own, beside the others, which finish one after another in their order on this thread:
  /// writing a long run's trace then overlaps writing its page and its JUnit file.
  func finish() throws {
    let first = state.withLock { state -> Bool in
      defer { state.closing = true }
      return !state.closing
    }
    guard first else { return }
    work.signal()
    stopped.wait()
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
