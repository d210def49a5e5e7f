@testable @_spi(ForToolsIntegrationOnly) import AsyncHarness
import Foundation
import Synchronization
import XCTest

/// How the channel delivers events (from one dispatcher thread, in order, never on the
/// sender's thread, a flush waiting for what was sent) and finishes its reporters: every one
/// once, even when some throw; the first error in the reporters' order; and the reporters that
/// write a whole file at the end (the trace, the page) beside the others rather than after them.
final class ReportingChannelTests: XCTestCase {
  private struct Failure: Error, Equatable { var name: String }

  /// A reporter that counts its `finish()` calls and throws `Failure(name)` from it when told to.
  private final class Finishing: Reporter, Sendable {
    let name: String
    let throwsOnFinish: Bool
    let finished = Atomic(0)
    /// Called as `finish()` begins.
    let onFinish: @Sendable () -> Void

    init(_ name: String, throwsOnFinish: Bool = false, onFinish: @escaping @Sendable () -> Void = {}) {
      self.name = name
      self.throwsOnFinish = throwsOnFinish
      self.onFinish = onFinish
    }

    func handle(_ event: Event) {}

    func finish() throws {
      finished.add(1, ordering: .relaxed)
      onFinish()
      if throwsOnFinish { throw Failure(name: name) }
    }
  }

  /// The same, writing its file at the end: it finishes beside the others.
  private final class FinishingApart: Reporter, EndOfRunReporter, Sendable {
    let reporter: Finishing
    init(_ reporter: Finishing) { self.reporter = reporter }
    func handle(_ event: Event) {}
    func finish() throws { try reporter.finish() }
  }

  func testEveryReporterFinishesOnceAndTheFirstErrorInTheirOrderIsThrown() {
    for _ in 0..<200 {
      let (first, second, third) = (Finishing("first"), Finishing("second", throwsOnFinish: true),
                                    Finishing("third", throwsOnFinish: true))
      let channel = ReportingChannel([first, FinishingApart(second), third])
      XCTAssertThrowsError(try channel.finish()) { XCTAssertEqual($0 as? Failure, Failure(name: "second")) }
      XCTAssertNoThrow(try channel.finish(), "a second call does nothing")
      XCTAssertEqual([first, second, third].map { $0.finished.load(ordering: .relaxed) }, [1, 1, 1])
    }
  }

  /// The trace's and the page's `finish()` run at the same time as the other reporters', on
  /// a thread of their own (so also on one core): each of these two waits until the other
  /// has begun, which only threads side by side do.
  func testAReporterThatWritesAtTheEndFinishesBesideTheOthers() throws {
    let (inOrderBegan, apartBegan) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
    let met = Mutex<[String]>([])
    let inOrder = Finishing("in order") {
      inOrderBegan.signal()
      if apartBegan.wait(timeout: .now() + 10) == .success { met.withLock { $0.append("in order") } }
    }
    let apart = Finishing("apart") {
      apartBegan.signal()
      if inOrderBegan.wait(timeout: .now() + 10) == .success { met.withLock { $0.append("apart") } }
    }
    try ReportingChannel([inOrder, FinishingApart(apart)]).finish()
    XCTAssertEqual(met.withLock { $0.sorted() }, ["apart", "in order"])
  }

  /// A reporter that keeps what it was handed and on which thread, and can be held: its
  /// `handle` waits while `held` is up.
  private final class Recording: Reporter, Sendable {
    let handled = Mutex<[(event: Event, thread: pthread_t)]>([])
    let gate = DispatchSemaphore(value: 0)
    let held: Bool
    let failsAt: Int?

    init(held: Bool = false, failsAt: Int? = nil) {
      self.held = held
      self.failsAt = failsAt
    }

    func handle(_ event: Event) throws {
      if held && handled.withLock({ $0.isEmpty }) { gate.wait() }
      let count = handled.withLock { handled in
        handled.append((event, pthread_self()))
        return handled.count
      }
      if count == failsAt { throw Failure(name: "handle \(count)") }
    }

    var names: [String] { handled.withLock { $0.map(\.event.kind.name) } }
  }

  private static func event(_ number: Int) -> Event {
    Event(.outputCaptured(TestID(suite: "S", name: "t", host: "w"), "\(number)"))
  }

  /// A reporter that is held up does not hold up those who send: every send returns, and the
  /// reporter later gets every event, in order, on one thread that sent none.
  func testSendersOnlyEnqueueAndOneThreadDeliversInOrder() throws {
    for _ in 0..<100 {
      let reporter = Recording(held: true)
      let channel = ReportingChannel([reporter])
      let senders = DispatchGroup()
      let senderThreads = Mutex<[pthread_t]>([])
      for lane in 0..<4 {
        senders.enter()
        Thread.detachNewThread {
          senderThreads.withLock { $0.append(pthread_self()) }
          for index in 0..<50 { channel.sink.send(Self.event(lane * 1000 + index)) }
          senders.leave()
        }
      }
      XCTAssertEqual(senders.wait(timeout: .now() + 10), .success, "a sender waited for the held reporter")
      reporter.gate.signal()
      try channel.finish()
      let handled = reporter.handled.withLock { $0 }
      XCTAssertEqual(handled.count, 200)
      let threads = Set(handled.map { UInt($0.thread) })
      XCTAssertEqual(threads.count, 1, "delivered on \(threads.count) threads")
      XCTAssertTrue(senderThreads.withLock { $0 }.allSatisfy { !threads.contains(UInt($0)) })
      // Each sender's events come in the order it sent them.
      for lane in 0..<4 {
        let texts = handled.compactMap { entry -> Int? in
          guard case .outputCaptured(_, let text) = entry.event.kind, let number = Int(text), number / 1000 == lane else { return nil }
          return number
        }
        XCTAssertEqual(texts, (0..<50).map { lane * 1000 + $0 })
      }
    }
  }

  /// `flush()` returns only once what was sent before it reached the reporters.
  func testAFlushWaitsForDelivery() throws {
    for _ in 0..<40 {
      let reporter = Recording(held: true)
      let channel = ReportingChannel([reporter])
      channel.sink.send(Self.event(1))
      let flushed = DispatchSemaphore(value: 0)
      Thread.detachNewThread {
        channel.flush()
        flushed.signal()
      }
      XCTAssertEqual(flushed.wait(timeout: .now() + 0.05), .timedOut, "the flush returned before delivery")
      reporter.gate.signal()
      XCTAssertEqual(flushed.wait(timeout: .now() + 10), .success)
      XCTAssertEqual(reporter.names, ["outputCaptured"])
      try channel.finish()
    }
  }

  /// A reporter that throws stops delivery: later events are dropped, a flush still returns,
  /// the error is the run's, and every reporter is still finished.
  func testAReportersErrorStopsDeliveryWithoutHoldingAnyone() {
    let failing = Recording(failsAt: 2)
    let channel = ReportingChannel([failing])
    for index in 0..<5 {
      channel.sink.send(Self.event(index))
      channel.flush()
    }
    XCTAssertEqual(failing.names.count, 2)
    XCTAssertThrowsError(try channel.checkReporters()) { XCTAssertEqual($0 as? Failure, Failure(name: "handle 2")) }
    XCTAssertThrowsError(try channel.finish()) { XCTAssertEqual($0 as? Failure, Failure(name: "handle 2")) }
  }
}
