@testable @_spi(ForToolsIntegrationOnly) import AsyncHarness
import Foundation
import Synchronization
import XCTest

/// How the channel finishes its reporters: every one once, even when some throw; the first
/// error in the reporters' order; and the reporters that write a whole file at the end (the
/// trace, the page) beside the others rather than after them.
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
}
