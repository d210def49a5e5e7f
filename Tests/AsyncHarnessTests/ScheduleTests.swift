@testable import AsyncHarness
import Synchronization
import XCTest

/// Seeded schedules: the same seed gives the same order on every machine (pinned here),
/// different seeds explore different orders, PCT keeps its priorities between change
/// points, and tokens read back what they write.
final class ScheduleTests: XCTestCase {
  // MARK: The pickers

  func testAPickerMakesThePinnedChoicesForItsSeed() {
    // Pinned: a change to the generator or to how choices are drawn breaks replay tokens
    // printed by earlier runs, and must show up here.
    XCTAssertEqual(choices(.randomWalk, seed: 7), [0, 0, 0, 0, 1, 0, 1, 0, 2, 2, 1, 1])
    XCTAssertEqual(choices(.pct(depth: 3), seed: 7), [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1])
    XCTAssertEqual(choices(.pct(depth: 3), seed: 2), [2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                   "seed 2 has change points after steps 1 and 2: the top queue drops, then the next")
  }

  func testTheRandomWalkReachesEveryRunnableQueue() {
    var counts = [0, 0, 0, 0]
    for seed in 0..<200 {
      for choice in choices(.randomWalk, seed: UInt64(seed), queues: 4) { counts[choice] += 1 }
    }
    // 2,400 uniform choices among 4: each near 600.
    for count in counts { XCTAssertTrue((500...700).contains(count), "\(counts)") }
  }

  func testPCTWithDepthOneRunsTheHighestPriorityQueueUntilItIsEmpty() {
    for seed in 0..<100 {
      var picker = SchedulePicker(Schedule(seed: UInt64(seed), policy: .pct(depth: 1)))
      for _ in 0..<3 { picker.queueAdded() }
      var remaining = [2, 2, 2]
      var order: [Int] = []
      for step in 1...6 {
        let chosen = picker.choose(among: remaining.indices.filter { remaining[$0] > 0 }, step: step)
        remaining[chosen] -= 1
        order.append(chosen)
      }
      XCTAssertEqual(order.count, 6)
      for pair in stride(from: 0, to: 6, by: 2) { XCTAssertEqual(order[pair], order[pair + 1], "seed \(seed): \(order)") }
    }
  }

  // MARK: Orders of real work

  func testTheSameSeedGivesTheSameOrderEveryTimeAndSeedsDiffer() throws {
    for policy in [SchedulePolicy.randomWalk, .pct(depth: 3)] {
      var orders: [UInt64: String] = [:]
      for seed in UInt64(1)...20 {
        let first = try order(under: Schedule(seed: seed, policy: policy))
        for _ in 0..<10 { XCTAssertEqual(try order(under: Schedule(seed: seed, policy: policy)), first, "\(policy) seed \(seed)") }
        orders[seed] = first
      }
      XCTAssertGreaterThanOrEqual(Set(orders.values).count, 5, "\(policy) explores different orders: \(orders)")
    }
  }

  // MARK: Tokens

  func testTokensReadBackWhatTheyWrite() throws {
    let token = Schedule(seed: 7, policy: .pct(depth: 3)).token(forTestAt: "Suite/test")
    XCTAssertEqual(token.description, "7:pct3:335509")
    XCTAssertEqual(ScheduleToken("7:pct3:335509"), token)
    XCTAssertTrue(token.matches(testAt: "Suite/test"))
    XCTAssertFalse(token.matches(testAt: "Suite/test2"))
    XCTAssertEqual(ScheduleToken("0:random:00000a")?.description, "0:random:00000a")
    for bad in ["", "7", "7:pct3", "x:pct3:335509", "7:pct:335509", "7:pct0:335509", "7:walk:335509",
                "7:pct3:33550", "7:pct3:33550g", "-1:pct3:335509", "7:pct3:335509:1", "٧:pct3:335509"] {
      XCTAssertNil(ScheduleToken(bad), bad)
    }
  }

  // MARK: Helpers

  /// The picks of a fresh picker among `queues` always-runnable queues.
  private func choices(_ policy: SchedulePolicy, seed: UInt64, queues: Int = 3) -> [Int] {
    var picker = SchedulePicker(Schedule(seed: seed, policy: policy))
    for _ in 0..<queues { picker.queueAdded() }
    return (1...12).map { picker.choose(among: Array(0..<queues), step: $0) }
  }

  /// The order in which work on three queues, some of it sent by other work, ran.
  private func order(under schedule: Schedule) throws -> String {
    let log = Log()
    var configuration = Configuration()
    configuration.waiters = .named("scheduled")
    let suite = Suite("Order") {
      Test("three queues") { t in
        let done = t.expectation("done", expectedFulfillmentCount: 9)
        let queues = [t.main, t.background, t.queue("io")]
        for (index, queue) in queues.enumerated() {
          queue.async { log.append("\(index)a"); done.fulfill() }
          queue.async {
            log.append("\(index)b")
            queues[(index + 1) % 3].async { log.append("\(index)c"); done.fulfill() }
            done.fulfill()
          }
        }
        try t.wait(for: done)
      }
    }
    let registry = try WaiterRegistry([ScheduledWaiter(defaultSchedule: schedule)])
    let recorder = EventRecorder()
    try Runner(suites: [suite], configuration: configuration, registry: registry, reporters: [recorder]).run()
    XCTAssertEqual(recorder.results.map(\.result.verdict), [.passed])
    return log.all.joined(separator: " ")
  }
}
