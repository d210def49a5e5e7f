// Benchmark: streams 100,000 and 1,000,000 testcases (1 % failing, 2 % with output) through
// JUnitReporter and prints wall time, peak RSS and the report size per run.
//   swift run -c release --scratch-path .build-junit junit-bench
import AsyncHarness
import AsyncHarnessJUnit
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Peak resident set size of this process so far, in MiB (`ru_maxrss` is KiB on Linux).
func peakRSSMiB() -> Double {
  var usage = rusage()
  #if os(Linux)
  getrusage(RUSAGE_SELF.rawValue, &usage)
  #else
  getrusage(RUSAGE_SELF, &usage)
  #endif
  return Double(usage.ru_maxrss) / 1024
}

func bench(testCount: Int, in directory: URL) throws {
  let path = directory.appendingPathComponent("bench-\(testCount).xml").path
  let testsPerSuite = 1_000
  let location = SourceLocation(
    fileID: "BenchTests/LoaderTests.swift", filePath: "/src/Tests/BenchTests/LoaderTests.swift", line: 42, column: 5)
  let output = String(repeating: "loaded 3 messages from the fixture server\n", count: 5)
  let start = ContinuousClock.now
  let reporter = try JUnitReporter(path: path)
  try reporter.handle(Event(.runStarted(RunInfo(seed: 7, waiters: ["semaphore"]))))
  for suiteIndex in 0..<(testCount / testsPerSuite) {
    let suite = "Bench.Suite\(suiteIndex)"
    try reporter.handle(Event(.suiteStarted(SuiteRun(suite: suite, host: "semaphore"))))
    for testIndex in 0..<testsPerSuite {
      let n = suiteIndex * testsPerSuite + testIndex
      let test = TestID(suite: suite, name: "loads page \(testIndex)", host: "semaphore")
      try reporter.handle(Event(.testStarted(test)))
      if n % 50 == 7 { try reporter.handle(Event(.outputCaptured(test, output))) }
      let result = n % 100 == 3
        ? TestResult(verdict: .failed, issues: [
            Issue(kind: .expectationFailed, message: "expected 3 messages, got 2", sourceLocation: location),
          ])
        : TestResult(verdict: .passed)
      for issue in result.issues { try reporter.handle(Event(.issueRecorded(test, issue))) }
      try reporter.handle(Event(.testEnded(test, TestEnd(once: result, duration: 0.000_123))))
    }
    try reporter.handle(Event(.suiteEnded(SuiteRun(suite: suite, host: "semaphore"), Summary(), duration: 0.123)))
  }
  try reporter.handle(Event(.runEnded(Summary(), duration: 12.5)))
  try reporter.finish()
  let elapsed = ContinuousClock.now - start
  let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
  try FileManager.default.removeItem(atPath: path)
  let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
  print(String(format: "%9d testcases: %.2f s wall, peak RSS %.1f MiB, report %.1f MB",
               testCount, seconds, peakRSSMiB(), Double(size) / 1e6))
}

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("junit-bench-\(getpid())")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
print(String(format: "before: peak RSS %.1f MiB", peakRSSMiB()))
for count in [100_000, 1_000_000] {
  try bench(testCount: count, in: directory)
}
