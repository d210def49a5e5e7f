@testable import AsyncHarness
import XCTest

/// When a polled wait re-evaluates its condition (``PollSchedule``): the interval is the time
/// waited divided by the divisor, between the minimum and the maximum; with patience, divided
/// by the late divisor once the wait has gone on that long.
final class PollScheduleTests: XCTestCase {
  func testTheStandardScheduleDividesTheTimeWaitedThroughout() {
    let schedule = PollSchedule.standard
    XCTAssertEqual(schedule.interval(afterWaiting: .zero), .microseconds(100))
    XCTAssertEqual(schedule.interval(afterWaiting: .milliseconds(16)), .milliseconds(1))
    XCTAssertEqual(schedule.interval(afterWaiting: .milliseconds(160)), .milliseconds(10))
    XCTAssertEqual(schedule.interval(afterWaiting: .seconds(1)), .milliseconds(20))
  }

  /// The probe poller's: by 8 for the first 10 ms, where a callback's latency is decided, then
  /// by 2, up to 20 ms.
  func testThePollersScheduleBacksOffAfterItsPatience() {
    let schedule = PollSchedule.poller
    XCTAssertEqual(schedule.interval(afterWaiting: .microseconds(300)), .microseconds(100))
    XCTAssertEqual(schedule.interval(afterWaiting: .milliseconds(8)), .milliseconds(1))
    XCTAssertEqual(schedule.interval(afterWaiting: .milliseconds(10)), .microseconds(1250))
    XCTAssertEqual(schedule.interval(afterWaiting: .milliseconds(12)), .milliseconds(6))
    XCTAssertEqual(schedule.interval(afterWaiting: .milliseconds(100)), .milliseconds(20))
  }

  /// Evaluations a wait of `length` makes on `schedule`, each at the interval after the last.
  private func evaluations(_ schedule: PollSchedule, over length: Duration) -> Int {
    var elapsed = Duration.zero
    var count = 0
    while true {
      elapsed += schedule.interval(afterWaiting: elapsed)
      guard elapsed < length else { return count }
      count += 1
    }
  }

  /// Each evaluation wakes the waiting thread; backing off after 10 ms leaves the first 10 ms as
  /// they were and wakes it a quarter fewer times in the first 100 ms.
  func testBackingOffKeepsTheFirstTenMillisecondsAndWakesLessAfter() {
    let before = PollSchedule(divisor: 8)
    XCTAssertEqual(evaluations(.poller, over: .milliseconds(10)), evaluations(before, over: .milliseconds(10)))
    XCTAssertEqual(evaluations(before, over: .milliseconds(100)), 48)
    XCTAssertEqual(evaluations(.poller, over: .milliseconds(100)), 36)
    XCTAssertEqual(evaluations(.poller, over: .seconds(1)), 81)
  }
}
