import Foundation
import XCTest

// XCTest's waiting, driven directly from this executable (no XCTMain needed to wait).

/// What an XCTest wait ends on.
enum XCTestWake: Sendable {
  /// `XCTWaiter().wait(for:)` on an `XCTestExpectation` fulfilled in the background.
  case waiter
  /// An `XCTNSNotificationExpectation` for a notification posted in the background.
  case notification
  /// An `XCTNSPredicateExpectation` over a flag set in the background.
  case predicate
}

/// Carries XCTest objects that are thread-safe but not declared `Sendable`.
private struct Shared<Value>: @unchecked Sendable {
  let value: Value
}

/// Wake latency of XCTest's waits, on the calling thread.
func xctestWakeLatency(_ kind: XCTestWake, waits: Int, signaller: Signaller) -> (LatencyStats, failures: Int) {
  let log = SampleLog(capacity: waits)
  let center = Shared(value: NotificationCenter())
  let name = Notification.Name("harness-bench.xctest")
  var failures = 0
  for _ in 0..<waits {
    let expectation: XCTestExpectation
    switch kind {
    case .waiter:
      let fulfilled = Shared(value: XCTestExpectation(description: "fulfilled"))
      expectation = fulfilled.value
      signaller.fire { fulfilled.value.fulfill() }
    case .notification:
      expectation = XCTNSNotificationExpectation(name: name, object: nil, notificationCenter: center.value)
      signaller.fire { center.value.post(name: name, object: nil) }
    case .predicate:
      let flag = Flag()
      expectation = XCTNSPredicateExpectation(predicate: NSPredicate { _, _ in flag.isSet }, object: nil)
      signaller.fire { flag.set() }
    }
    if XCTWaiter().wait(for: [expectation], timeout: 5) != .completed { failures += 1 }
    log.add(signaller.elapsedSinceFired())
  }
  return (LatencyStats(nanoseconds: log.all), failures)
}

/// CPU seconds XCTest burns while waiting `seconds` for an expectation never fulfilled.
enum XCTestIdle: String, CaseIterable, Sendable {
  case waiterMain = "XCTWaiter · main"
  case waiterOffMain = "XCTWaiter · off-main"
  case fulfillment = "await fulfillment(of:)"
  case predicate = "XCTNSPredicateExpectation · main"

  @MainActor
  func cpuSeconds(waiting seconds: Double) -> Double {
    switch self {
    case .waiterMain:
      return Self.measure { _ = XCTWaiter().wait(for: [XCTestExpectation(description: "never")], timeout: seconds) }
    case .waiterOffMain:
      return onBackgroundThread {
        Self.measure { _ = XCTWaiter().wait(for: [XCTestExpectation(description: "never")], timeout: seconds) }
      }
    case .fulfillment:
      return inTask {
        let before = processCPUSeconds()
        _ = await XCTWaiter().fulfillment(of: [XCTestExpectation(description: "never")], timeout: seconds)
        return processCPUSeconds() - before
      }
    case .predicate:
      return Self.measure {
        let never = XCTNSPredicateExpectation(predicate: NSPredicate { _, _ in false }, object: nil)
        _ = XCTWaiter().wait(for: [never], timeout: seconds)
      }
    }
  }

  private static func measure(_ work: () -> Void) -> Double {
    let before = processCPUSeconds()
    work()
    return processCPUSeconds() - before
  }
}

// MARK: XCTest as a test runner, in a child process

/// The tests XCTest runs in the child: built at run time, `count` methods of one case.
final class TrivialAsyncCase: XCTestCase {
  /// A trivially-async test: a background callback fulfills, the test waits.
  func fulfilledInBackground() {
    let done = expectation(description: "done")
    DispatchQueue.global().async { done.fulfill() }
    wait(for: [done], timeout: 5)
  }

  /// A test whose callback fails instead of fulfilling: XCTest sits out the timeout.
  func callbackFails() {
    let done = expectation(description: "callback")
    DispatchQueue.global().async { XCTFail("callback failed") }
    wait(for: [done], timeout: 1)
  }
}

/// Counts XCTest's run and reports it on standard error when the bundle finishes.
private final class TimingObserver: NSObject, XCTestObservation {
  private var start: UInt64 = 0
  private var failures = 0
  private var finished = 0

  func testBundleWillStart(_ testBundle: Bundle) { start = monotonicNanos() }

  func testCase(_ testCase: XCTestCase, didFailWithDescription description: String,
                inFile filePath: String?, atLine lineNumber: Int) {
    failures += 1
  }

  func testCaseDidFinish(_ testCase: XCTestCase) { finished += 1 }

  func testBundleDidFinish(_ testBundle: Bundle) {
    let seconds = Double(monotonicNanos() - start) / 1e9
    FileHandle.standardError.write(Data("\(childResultPrefix) \(seconds) \(finished) \(failures)\n".utf8))
  }
}

/// Runs `count` XCTest cases built at run time (`passing` or `failing` ones) and exits.
func runXCTestChild(failing: Bool, count: Int) -> Never {
  let entry: XCTestCaseEntry = (
    testCaseClass: TrivialAsyncCase.self,
    allTests: (0..<count).map { index in
      ("test\(index)", { testCase in
        let test = testCase as! TrivialAsyncCase
        if failing { test.callbackFails() } else { test.fulfilledInBackground() }
      })
    })
  XCTMain([entry], arguments: [CommandLine.arguments[0]], observers: [TimingObserver()])
}
