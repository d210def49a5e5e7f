import Foundation
import Synchronization

/// Delivers a run's events to its reporters from one thread of its own, the dispatcher, in
/// the order they are sent: whatever thread sends an event (a lane, a test's thread, a timer)
/// only enqueues it, so a slow reporter never slows a test. The first error a reporter throws
/// stops delivery (the runner then stops the run and rethrows it); ``finish()`` delivers what
/// is queued, then finishes every reporter once, and later events are dropped.
///
/// ``flush()`` waits until every event sent before it was delivered: a test that runs in this
/// process has its `testStarted` and each issue in the reports before its code goes on, so a
/// crash that ends the process leaves them written.
final class ReportingChannel: Sendable {
  private struct State {
    /// Events sent and not yet taken by the dispatcher.
    var queue: [Event] = []
    /// How many events were sent, and how many the dispatcher delivered (or dropped).
    var sent: UInt64 = 0
    var delivered: UInt64 = 0
    /// Whether the dispatcher waits for an event.
    var idle = false
    /// Those waiting for delivery (``flush()``), each until `delivered` reaches its mark.
    var waiting: [(mark: UInt64, wake: DispatchSemaphore)] = []
    var error: (any Error)?
    /// Whether ``finish()`` began: the dispatcher delivers what is queued and stops.
    var closing = false
  }

  /// Only the dispatcher calls them, until it stopped; then ``finish()`` does.
  private let reporters: [any Reporter]
  private let state = Mutex(State())
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
      state.queue.append(event)
      state.sent += 1
      defer { state.idle = false }
      return state.idle
    }
    if wake { work.signal() }
  }

  /// Waits until every event sent before the call was delivered to every reporter (or dropped
  /// after a reporter's error).
  func flush() {
    let wake = DispatchSemaphore(value: 0)
    let waits = state.withLock { state -> Bool in
      guard state.delivered < state.sent else { return false }
      state.waiting.append((state.sent, wake))
      return true
    }
    if waits { wake.wait() }
  }

  /// The dispatcher: takes what is queued, hands each event to every reporter in order, and
  /// wakes those waiting for it; once the channel closes and nothing is left, it stops.
  private func dispatch() {
    while true {
      let (events, closing) = state.withLock { state -> ([Event], Bool) in
        defer { state.queue.removeAll(keepingCapacity: true) }
        state.idle = state.queue.isEmpty && !state.closing
        return (state.queue, state.closing)
      }
      if events.isEmpty {
        if closing { break }
        work.wait()
        continue
      }
      var failure: (any Error)?
      if state.withLock({ $0.error }) == nil {
        do {
          for event in events {
            for reporter in reporters { try reporter.handle(event) }
          }
        } catch {
          failure = error
        }
      }
      let woken = state.withLock { state -> [DispatchSemaphore] in
        if let failure, state.error == nil { state.error = failure }
        state.delivered += UInt64(events.count)
        let delivered = state.delivered
        defer { state.waiting.removeAll { $0.mark <= delivered } }
        return state.waiting.filter { $0.mark <= delivered }.map(\.wake)
      }
      for wake in woken { wake.signal() }
    }
    // Nothing more comes: release whoever still waits (a flush racing the close).
    for waiting in state.withLock({ state in defer { state.waiting = [] }; return state.waiting }) { waiting.wake.signal() }
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
