import Foundation
import Testing

/// How many cases the parameterized Swift Testing test has: set by the parent process.
enum SwiftTestingLoad {
  static let environmentKey = "HARNESS_BENCH_SWIFT_TESTING_CASES"
  static let cases = Array(0..<(ProcessInfo.processInfo.environment[environmentKey].flatMap { Int($0) } ?? 0))
}

/// A trivially-async Swift Testing test: a background callback confirms, the test awaits
/// it (`confirmation` itself does not wait).
@Test(arguments: SwiftTestingLoad.cases)
func confirmedInBackground(_ index: Int) async {
  await confirmation { confirmed in
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      DispatchQueue.global().async {
        confirmed()
        continuation.resume()
      }
    }
  }
}

/// The tests of part 8 that wait for a late callback: how many, and whether each blocks its
/// thread (as a test written for a blocking waiter does) or suspends; set by the parent.
enum SwiftTestingWaits {
  static let environmentKey = "HARNESS_BENCH_SWIFT_TESTING_WAITS"
  static let blockingKey = "HARNESS_BENCH_SWIFT_TESTING_BLOCKING"
  static let cases = Array(0..<(ProcessInfo.processInfo.environment[environmentKey].flatMap { Int($0) } ?? 0))
  static let blocks = ProcessInfo.processInfo.environment[blockingKey] == "1"
}

/// A Swift Testing test that waits for a callback 25 ms away, blocking on a semaphore or
/// awaiting a continuation, after printing part 13's lines (none unless asked).
@Test(arguments: SwiftTestingWaits.cases)
func waitsForALateCallback(_ index: Int) async {
  let delay = DispatchTimeInterval.milliseconds(WaitBoundSuite.delayMilliseconds)
  let lines = PrintingSuite.linesPerTest
  if SwiftTestingWaits.blocks {
    let called = DispatchSemaphore(value: 0)
    DispatchQueue.global().asyncAfter(deadline: .now() + delay) { called.signal() }
    called.wait()
  } else {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      DispatchQueue.global().asyncAfter(deadline: .now() + delay) { continuation.resume() }
      for number in 0..<lines { print(PrintingSuite.line(number, of: index)) }
    }
  }
}

/// Runs Swift Testing on this executable's tests, reports the time on standard error,
/// and exits.
func runSwiftTestingChild(parallel: Bool) -> Never {
  var arguments = __CommandLineArguments_v0()
  arguments.parallel = parallel
  arguments.quiet = true
  Task.detached {
    let start = monotonicNanos()
    let status: CInt = await __swiftPMEntryPoint(passing: arguments)
    let seconds = Double(monotonicNanos() - start) / 1e9
    FileHandle.standardError.write(Data("\(childResultPrefix) \(seconds) \(SwiftTestingLoad.cases.count + SwiftTestingWaits.cases.count) \(status)\n".utf8))
    exit(0)
  }
  dispatchMain()
}
