import Foundation
import Synchronization
import XCTest

// XCTest's suites as an observer added before XCTest runs sees them, as swift-corelibs-xctest's
// functional tests Observation/All and Observation/Selected check them, each only when
// EXISTING_TESTS_SUITES names the run's kind; without it the test passes at once:
// - all: `swift test` without `--filter` runs `All tests`, then the bundle's suite
//   (`debug.xctest`), then each class.
// - selected: `swift test --filter SuitesXCTests` runs `Selected tests`, then each class, and
//   no suite of the bundle.

/// The names of the suites XCTest started in this process, in order.
let startedSuites = Mutex<[String]>([])

/// Records each suite XCTest starts.
final class SuiteRecorder: NSObject, XCTestObservation, Sendable {
  func testSuiteWillStart(_ testSuite: XCTestSuite) {
    startedSuites.withLock { $0.append(testSuite.name) }
  }
}

/// Adds the recorder as the bundle loads, before XCTest runs (the functional tests add theirs
/// before `XCTMain`).
@used @section(".init_array")
let addSuiteRecorder: @convention(c) () -> Void = { XCTestObservationCenter.shared.addTestObserver(SuiteRecorder()) }

final class SuitesXCTests: XCTestCase {
  func testSeesTheSuitesOfItsRun() {
    let started = startedSuites.withLock { $0 }
    switch ProcessInfo.processInfo.environment["EXISTING_TESTS_SUITES"] {
    case "all":
      XCTAssertEqual(started.first, "All tests", "the suites started: \(started)")
      XCTAssertEqual(started.dropFirst().first?.hasSuffix(".xctest"), true, "the suites started: \(started)")
    case "selected":
      XCTAssertEqual(started.first, "Selected tests", "the suites started: \(started)")
      XCTAssertFalse(started.contains { $0.hasSuffix(".xctest") }, "the suites started: \(started)")
    default:
      break
    }
  }
}
