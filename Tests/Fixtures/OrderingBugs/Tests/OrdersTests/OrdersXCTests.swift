import Dispatch
import Foundation
import Orders
import Synchronization
import XCTest

/// The tests a team would write for the ordering bugs, in XCTest: each bug's test fails only in
/// some orders of the code's Swift concurrency; its fixed twin's test passes in every order.
final class OrdersXCTests: XCTestCase {
  func testTwoWithdrawalsNeverOverdraw() async {
    let account = Account(balance: 100)
    async let first = account.withdraw(80)
    async let second = account.withdraw(80)
    _ = await (first, second)
    let balance = await account.balance
    XCTAssertGreaterThanOrEqual(balance, 0)
  }

  func testTwoWithdrawalsCheckingAfterTheAuditNeverOverdraw() async {
    let account = Account(balance: 100)
    async let first = account.withdrawCheckingAfterTheAudit(80)
    async let second = account.withdrawCheckingAfterTheAudit(80)
    _ = await (first, second)
    let balance = await account.balance
    XCTAssertGreaterThanOrEqual(balance, 0)
  }

  func testAThumbnailIsRenderedOnce() async {
    let thumbnails = Thumbnails()
    async let first = thumbnails.thumbnail(for: "cat")
    async let second = thumbnails.thumbnail(for: "cat")
    _ = await (first, second)
    let renders = await thumbnails.renderer.renders
    XCTAssertEqual(renders, 1)
  }

  func testAThumbnailJoiningTheRenderInFlightIsRenderedOnce() async {
    let thumbnails = Thumbnails()
    async let first = thumbnails.thumbnailRenderedOnce(for: "cat")
    async let second = thumbnails.thumbnailRenderedOnce(for: "cat")
    _ = await (first, second)
    let renders = await thumbnails.renderer.renders
    XCTAssertEqual(renders, 1)
  }

  func testPagesComeInTheOrderAskedFor() async {
    let pages = await Pages.fetchAll([1, 2, 3])
    XCTAssertEqual(pages, ["page 1", "page 2", "page 3"])
  }

  func testPagesPlacedByTheirIndexComeInTheOrderAskedFor() async {
    let pages = await Pages.fetchAllInOrder([1, 2, 3])
    XCTAssertEqual(pages, ["page 1", "page 2", "page 3"])
  }

  func testTheDoorbellWakesTheOneWaiting() async {
    let doorbell = Doorbell()
    async let woken: Void = doorbell.wait()
    Task { doorbell.ring() }
    await woken
  }

  func testADoorbellRememberingEarlyRingsWakesTheOneWaiting() async {
    let doorbell = Doorbell(remembersEarlyRings: true)
    async let woken: Void = doorbell.wait()
    Task { doorbell.ring() }
    await woken
  }

  /// Passes in every order, but part of its order is not the schedule's: an answer comes
  /// from a thread of the test's own while the test's own task runs (it yields until the
  /// answer was sent). The thread answers only once the test's task runs again after the
  /// asking task suspended (the schedule runs one job at a time), so the answer always arrives
  /// as a job of its own, from outside the schedule.
  func testAnAnswerFromAThreadArrivesWhileTheTestWorks() async {
    let (asked, sent) = (Flag(), Flag())
    let go = DispatchSemaphore(value: 0)
    async let answer = withCheckedContinuation { continuation in
      Thread {
        go.wait()
        continuation.resume(returning: 42)
        sent.raise()
      }.start()
      asked.raise()
    }
    var released = false
    while !sent.isRaised {
      if asked.isRaised && !released {
        released = true
        go.signal()
      }
      await Task.yield()
    }
    let value = await answer
    XCTAssertEqual(value, 42)
  }
}

/// A flag one thread raises and another reads.
private final class Flag: Sendable {
  private let raised = Mutex(false)

  func raise() { raised.withLock { $0 = true } }
  var isRaised: Bool { raised.withLock { $0 } }
}
