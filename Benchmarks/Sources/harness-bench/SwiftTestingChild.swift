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
    FileHandle.standardError.write(Data("\(childResultPrefix) \(seconds) \(SwiftTestingLoad.cases.count) \(status)\n".utf8))
    exit(0)
  }
  dispatchMain()
}
