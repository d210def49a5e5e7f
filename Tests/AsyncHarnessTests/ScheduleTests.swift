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
    let traced = try XCTUnwrap(ScheduleToken("7:pct3:335509:41-0be311"))
    XCTAssertEqual(traced.trace, ScheduleTrace(steps: 41, fingerprint: 0x0be311))
    XCTAssertEqual(traced.description, "7:pct3:335509:41-0be311")
    XCTAssertEqual(ScheduleToken("7:pct3:335509:0-00000a")?.trace?.description, "0-00000a")
    for bad in ["", "7", "7:pct3", "x:pct3:335509", "7:pct:335509", "7:pct0:335509", "7:walk:335509",
                "7:pct3:33550", "7:pct3:33550g", "-1:pct3:335509", "7:pct3:335509:1", "٧:pct3:335509",
                "7:pct3:335509:41", "7:pct3:335509:41-0be31", "7:pct3:335509:-1-0be311", "7:pct3:335509:41-0be311:2",
                "7:pct3:335509:٤١-0be311", "7:pct3:335509:"] {
      XCTAssertNil(ScheduleToken(bad), bad)
    }
  }

  func testATraceFingerprintsTheQueuesEachStepPicked() throws {
    func trace(_ picks: [Int]) -> ScheduleTrace {
      let hash = picks.reduce(StableHash.offsetBasis) { StableHash.fnv1a64(continuing: $0, withUnsafeBytes(of: UInt32($1).littleEndian, Array.init)) }
      return ScheduleTrace(steps: picks.count, hash: hash, firstOutsideStep: nil)
    }
    XCTAssertEqual(trace([0, 1, 2]), trace([0, 1, 2]))
    XCTAssertNotEqual(trace([0, 1, 2]), trace([0, 2, 1]), "the order of the picks counts")
    XCTAssertNotEqual(trace([0, 1]), trace([0, 1, 0]))
    XCTAssertEqual(ScheduleTrace(steps: 3, fingerprint: 1, firstOutsideStep: 2), ScheduleTrace(steps: 3, fingerprint: 1),
                   "where outside work arrived is a diagnosis, not part of the trace")
    let encoded = try JSONEncoder().encode(ScheduleTrace(steps: 41, fingerprint: 0x0be311))
    XCTAssertEqual(String(decoding: encoded, as: UTF8.self), "\"41-0be311\"")
    XCTAssertEqual(try JSONDecoder().decode(ScheduleTrace.self, from: encoded), ScheduleTrace(steps: 41, fingerprint: 0x0be311))
  }

  func testADivergenceNamesTheStepOutsideWorkArrivedBefore() {
    let recorded = ScheduleTrace(steps: 9, fingerprint: 0xabcdef)
    XCTAssertNil(ScheduleTrace(steps: 9, fingerprint: 0xabcdef, firstOutsideStep: 4).divergence(from: recorded))
    XCTAssertEqual(ScheduleTrace(steps: 7, fingerprint: 0x123456, firstOutsideStep: 4).divergence(from: recorded),
                   "This replay diverged from the run its token was printed for: that run took 9 steps (9-abcdef), this one 7 (7-123456); work from outside the schedule (a real queue, a thread) first arrived before step 4, and the schedule cannot replay what it does not order")
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
