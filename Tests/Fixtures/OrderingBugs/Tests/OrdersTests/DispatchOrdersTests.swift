import Dispatch
import Orders
import Synchronization
import Testing
import XCTest

// The tests a team writes for callback code on Dispatch queues: each bug's test fails only in
// some orders of its Dispatch blocks; its fixed twin's test passes in every order. Under plain
// `swift test` the bugs almost never show.

final class DispatchOrdersXCTests: XCTestCase {
  /// The theme kept once every save was written, as an expectation says.
  private func keptTheme(_ preferences: Preferences) async -> String {
    preferences.save(theme: "light")
    preferences.save(theme: "dark")
    let written = expectation(description: "written")
    preferences.whenWritten { written.fulfill() }
    await fulfillment(of: [written], timeout: 5)
    return preferences.savedTheme
  }

  /// The first answer of `lookup`, as an expectation says.
  private func firstAnswer(_ lookup: Lookup) async -> String? {
    let answer = Delivered<String>(to: self) { lookup.value(for: "title", completion: $0) }
    await fulfillment(of: [answer.expectation], timeout: 5)
    return answer.value
  }

  /// The total once 3 and 4 were recorded, as an expectation says.
  private func total(_ scoreboard: Scoreboard) async -> Int? {
    scoreboard.record(3)
    scoreboard.record(4)
    let total = Delivered<Int>(to: self) { scoreboard.total($0) }
    await fulfillment(of: [total.expectation], timeout: 5)
    return total.value
  }

  /// The parts of `report` once it said it was complete, as an expectation says.
  private func parts(_ report: Report) async -> [String]? {
    let parts = Delivered<[String]>(to: self) { report.load($0) }
    await fulfillment(of: [parts.expectation], timeout: 5)
    return parts.value
  }

  func testTheTotalCountsEveryScore() async {
    let sum = await total(Scoreboard())
    XCTAssertEqual(sum, 7)
  }

  func testTheTotalCountsEveryScoreRecordedAsABarrier() async {
    let sum = await total(Scoreboard(recordsAsBarriers: true))
    XCTAssertEqual(sum, 7)
  }

  func testACompleteReportHasBothParts() async {
    let filed = await parts(Report())
    XCTAssertEqual(filed, ["figures", "summary"])
  }

  func testACompleteReportLeftOnceFiledHasBothParts() async {
    let filed = await parts(Report(leavesOnceFiled: true))
    XCTAssertEqual(filed, ["figures", "summary"])
  }

  func testTheLastThemeSavedIsKept() async {
    let kept = await keptTheme(Preferences())
    XCTAssertEqual(kept, "dark")
  }

  func testTheLastThemeSavedInOrderIsKept() async {
    let kept = await keptTheme(Preferences(writesInOrder: true))
    XCTAssertEqual(kept, "dark")
  }

  func testTheCachedValueWins() async {
    let answer = await firstAnswer(Lookup(cached: "edited"))
    XCTAssertEqual(answer, "edited")
  }

  func testTheCachedValueAskedFirstWins() async {
    let answer = await firstAnswer(Lookup(cached: "edited", askingCacheFirst: true))
    XCTAssertEqual(answer, "edited")
  }
}

/// What a callback delivered, and the expectation it fulfils as it does.
final class Delivered<Value: Sendable>: Sendable {
  let expectation: XCTestExpectation
  private let delivered = Mutex<Value?>(nil)

  /// Starts the work, handing it the callback.
  init(to test: XCTestCase, _ start: (@escaping @Sendable (Value) -> Void) -> Void) {
    expectation = test.expectation(description: "delivered")
    start { [self] value in
      delivered.withLock { $0 = value }
      expectation.fulfill()
    }
  }

  var value: Value? { delivered.withLock { $0 } }
}

/// The classic form: a synchronous test body that sends the work and waits for it with
/// `wait(for:timeout:)`, on the main thread. What it sends stays Dispatch's, outside the
/// schedule, as under `swift test`: these correct tests pass in every schedule.
final class DispatchOrdersSyncXCTests: XCTestCase {
  /// The total once 3 and 4 were recorded.
  private func total(_ scoreboard: Scoreboard) -> Int? {
    scoreboard.record(3)
    scoreboard.record(4)
    let total = Delivered<Int>(to: self) { scoreboard.total($0) }
    wait(for: [total.expectation], timeout: 5)
    return total.value
  }

  /// The parts of `report` once it said it was complete.
  private func parts(_ report: Report) -> [String]? {
    let parts = Delivered<[String]>(to: self) { report.load($0) }
    wait(for: [parts.expectation], timeout: 5)
    return parts.value
  }

  func testTheTotalCountsEveryScoreRecordedAsABarrier() {
    XCTAssertEqual(total(Scoreboard(recordsAsBarriers: true)), 7)
  }

  func testACompleteReportLeftOnceFiledHasBothParts() {
    XCTAssertEqual(parts(Report(leavesOnceFiled: true)), ["figures", "summary"])
  }

  /// A correct test whose body waits on a semaphore for each block it sends: the main thread
  /// blocked on it has sent all it will, and the schedule runs the block at once.
  func testEachBlockIsWaitedForOnASemaphore() {
    let queue = DispatchQueue(label: "sync.semaphore")
    let values = Mutex<[Int]>([])
    for value in 0..<20 {
      let done = DispatchSemaphore(value: 0)
      queue.async {
        values.withLock { $0.append(value) }
        done.signal()
      }
      done.wait()
    }
    XCTAssertEqual(values.withLock { $0 }, Array(0..<20))
  }

  /// A correct test that waits out an inverted expectation: nothing is stuck while XCTest's
  /// waiter runs until its timeout.
  func testNoSecondTotalComesBeforeTheTimeout() {
    let scoreboard = Scoreboard(recordsAsBarriers: true)
    let first = expectation(description: "first total")
    let second = expectation(description: "a second total")
    second.isInverted = true
    scoreboard.record(1)
    scoreboard.total { _ in first.fulfill() }
    wait(for: [first, second], timeout: 0.2)
  }
}

@Suite struct DispatchOrdersTests {
  /// The theme kept once every save was written.
  private func keptTheme(_ preferences: Preferences) async -> String {
    preferences.save(theme: "light")
    preferences.save(theme: "dark")
    await withCheckedContinuation { continuation in preferences.whenWritten { continuation.resume() } }
    return preferences.savedTheme
  }

  /// The first answer of `lookup`.
  private func firstAnswer(_ lookup: Lookup) async -> String {
    await withCheckedContinuation { continuation in lookup.value(for: "title") { continuation.resume(returning: $0) } }
  }

  /// The total once 3 and 4 were recorded.
  private func total(_ scoreboard: Scoreboard) async -> Int {
    scoreboard.record(3)
    scoreboard.record(4)
    return await withCheckedContinuation { continuation in scoreboard.total { continuation.resume(returning: $0) } }
  }

  /// The parts of `report` once it said it was complete.
  private func parts(_ report: Report) async -> [String] {
    await withCheckedContinuation { continuation in report.load { continuation.resume(returning: $0) } }
  }

  @Test func theTotalCountsEveryScore() async {
    #expect(await total(Scoreboard()) == 7)
  }

  @Test func theTotalCountsEveryScoreRecordedAsABarrier() async {
    #expect(await total(Scoreboard(recordsAsBarriers: true)) == 7)
  }

  @Test func aCompleteReportHasBothParts() async {
    #expect(await parts(Report()) == ["figures", "summary"])
  }

  @Test func aCompleteReportLeftOnceFiledHasBothParts() async {
    #expect(await parts(Report(leavesOnceFiled: true)) == ["figures", "summary"])
  }

  @Test func theLastThemeSavedIsKept() async {
    #expect(await keptTheme(Preferences()) == "dark")
  }

  @Test func theLastThemeSavedInOrderIsKept() async {
    #expect(await keptTheme(Preferences(writesInOrder: true)) == "dark")
  }

  @Test func theCachedValueWins() async {
    #expect(await firstAnswer(Lookup(cached: "edited")) == "edited")
  }

  @Test func theCachedValueAskedFirstWins() async {
    #expect(await firstAnswer(Lookup(cached: "edited", askingCacheFirst: true)) == "edited")
  }
}

/// A correct test of a queue that targets another: their blocks keep one serial order, as
/// URLSession's task queues keep their session's (a task is registered on the session's queue
/// before its own queue starts it).
@Suite struct DispatchOrdersTargetTests {
  @Test func aQueueTargetingAnotherRunsInItsOrder() async {
    let session = DispatchQueue(label: "target.session")
    let task = DispatchQueue(label: "target.task", target: session)
    let registered = Mutex(false)
    let found = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
      session.async { registered.withLock { $0 = true } }
      task.async { continuation.resume(returning: registered.withLock { $0 }) }
    }
    #expect(found)
  }
}

/// A correct test that sends a thousand blocks to a serial queue and awaits the last: what one
/// block under the schedule costs (the benchmark's part 11), in every order the same sum.
@Suite struct DispatchCostTests {
  @Test func aThousandBlocksRunInTheOrderSent() async {
    let queue = DispatchQueue(label: "cost.serial")
    let order = RunOrder()
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      for index in 1...1_000 { queue.async { order.append(index) } }
      queue.async { continuation.resume() }
    }
    #expect(order.order == Array(1...1_000))
  }
}
