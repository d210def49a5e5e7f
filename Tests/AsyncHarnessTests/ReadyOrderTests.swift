import AsyncHarness
import AsyncHarnessShared
import XCTest

/// The order of a schedule's ready queues under `harness test --explore` (Shared/ReadyOrder.swift):
/// the same queues in the same order as the array it replaced, so that a seed makes the same
/// choices, at O(log n) a step instead of O(n) (a task group of 100,000 child tasks passed its
/// time limit under exploration, where `swift test` takes under a second).
final class ReadyOrderTests: XCTestCase {
  /// Appends and removals drawn from a seed keep exactly what an array kept: the queues, their
  /// order, each one's position, through the compactions that drop removed slots.
  func testItHoldsWhatAnArrayHoldsInTheSameOrder() {
    var generator = SeededRandomGenerator(seed: 7)
    var order = ReadyOrder()
    var array: [Int] = []
    var next = 0
    for step in 0..<5_000 {
      if array.isEmpty || generator.next() % 3 != 0 {
        order.append(next)
        array.append(next)
        next += 1
      } else {
        let queue = array[Int(generator.next() % UInt64(array.count))]
        order.remove(queue)
        array.removeAll { $0 == queue }
      }
      XCTAssertEqual(order.count, array.count, "step \(step)")
      if step % 97 == 0 { XCTAssertEqual(Array(order), array, "step \(step)") }
    }
    XCTAssertEqual(Array(order), array)
    XCTAssertTrue(array.allSatisfy(order.contains))
    XCTAssertEqual(order.removeAll(), array)
    XCTAssertTrue(order.isEmpty)
  }

  /// A queue that ran empty and became ready again goes last, as it did in the array.
  func testAQueueReadyAgainGoesLast() {
    var order = ReadyOrder([3, 1, 2])
    order.remove(3)
    order.append(3)
    XCTAssertEqual(Array(order), [1, 2, 3])
    XCTAssertFalse(ReadyOrder([1]).contains(3))
  }

  /// A seed picks the same queue among a `ReadyOrder` as among the array of the same queues.
  func testASeedPicksAsAmongAnArray() {
    let made = 120
    let queues = (0..<made).filter { $0 % 3 != 1 }
    for depth in [nil, 3] as [Int?] {
      var fromArray = SchedulePicking(seed: 11, pctDepth: depth)
      var fromOrder = SchedulePicking(seed: 11, pctDepth: depth)
      for _ in 0..<made {
        fromArray.queueAdded()
        fromOrder.queueAdded()
      }
      for step in 1...50 {
        XCTAssertEqual(fromOrder.choose(among: ReadyOrder(queues), step: step), fromArray.choose(among: queues, step: step))
      }
    }
  }

  /// A hundred thousand queues ready, each removed in turn at a drawn position, as a task
  /// group's children run: linear in all, where the array took quadratic time.
  func testAHundredThousandQueuesCostLittle() {
    var order = ReadyOrder(0..<100_000)
    var generator = SeededRandomGenerator(seed: 3)
    let clock = ContinuousClock()
    let took = clock.measure {
      while !order.isEmpty { order.remove(order[Int(generator.next() % UInt64(order.count))]) }
    }
    XCTAssertLessThan(took, .seconds(10), "removing 100,000 ready queues took \(took)")
  }
}
