@_spi(ForToolsIntegrationOnly) import AsyncHarness
import Foundation

// MARK: 13. Tests side by side that print

/// Part 13's suite: `.parallel` `async` tests that each print lines while they await a
/// callback 25 ms away, so that what they print is read while hundreds of them run side by
/// side in one worker (issue 52: every line was copied to every test running).
enum PrintingSuite {
  /// The environment variable carrying the number of tests to the workers.
  static let countKey = "HARNESS_BENCH_PRINTING_TESTS"
  /// The environment variable carrying how many lines each test prints.
  static let linesKey = "HARNESS_BENCH_PRINTED_LINES"

  /// The lines each test prints, read from ``linesKey`` (the workers inherit it).
  static var linesPerTest: Int { ProcessInfo.processInfo.environment[linesKey].flatMap { Int($0) } ?? 0 }

  /// The line test `index` prints `line`-th: the same shape on both sides of the comparison.
  static func line(_ line: Int, of index: Int) -> String {
    "test \(index) prints line \(line) of its output while it awaits its callback"
  }

  /// `count` tests, marked `.parallel`, each printing ``linesPerTest`` lines while awaiting its callback.
  static func suite(count: Int) -> Suite {
    let lines = linesPerTest
    return Suite("printing", .parallel, waiter: .expectation) {
      (0..<count).map { index in
        Test("prints \(index)") { t async throws in
          let called = t.expectation("the callback")
          t.queue("callbacks").asyncAfter(.milliseconds(WaitBoundSuite.delayMilliseconds)) { called.fulfill() }
          for number in 0..<lines { print(PrintingSuite.line(number, of: index)) }
          try await t.wait(for: called)
        }
      }
    }
  }
}

/// The printing suite run side by side in one worker, with and without its lines, beside
/// Swift Testing running the same tests in parallel, with and without theirs. Targets: with
/// the lines, at most 1.5× Swift Testing; and the lines add no more to our run than to Swift
/// Testing's (their own cost: formatting and writing them), within 1.5×.
@MainActor
func measurePrintingSideBySide(_ counts: Counts, _ report: Report) {
  let count = counts.printingTests
  let lines = 100
  report.section("13. \(count) parallel async tests side by side, each printing \(lines) lines while it awaits a 25 ms callback (s, wall)")
  setenv(PrintingSuite.countKey, "\(count)", 1)
  let executable = Bundle.main.executablePath ?? "/proc/self/exe"
  func ours(printing: Int) -> Double {
    setenv(PrintingSuite.linesKey, "\(printing)", 1)
    var configuration = Configuration()
    configuration.filters = ["printing/"]
    let start = monotonicNanos()
    let summary = (try? Runner(suites: WorkerSuites.fromEnvironment, configuration: configuration, lanes: 1,
                               makeExecutor: { WorkerExecutor(executable: executable, asyncWidth: WorkerExecutor.defaultAsyncWidth) },
                               reporters: [consoleToNowhere()]).run()) ?? Summary()
    let seconds = Double(monotonicNanos() - start) / 1e9
    print(String(format: "harness, %d lines a test: %.3f s (%d passed)", printing, seconds, summary.passed))
    return seconds
  }
  func swiftTesting(printing: Int) -> Double? {
    let child = runChild(["swift-testing", "parallel"], environment: [SwiftTestingWaits.environmentKey: "\(count)",
                                                                      PrintingSuite.linesKey: "\(printing)"])
    print(String(format: "Swift Testing, parallel, %d lines a test: %@", printing,
                 child.map { String(format: "%.3f s (exit status %d)", $0.seconds, $0.counts.last ?? -1) } ?? "did not run"))
    return child?.seconds
  }
  let oursSilent = ours(printing: 0)
  let oursPrinting = ours(printing: lines)
  let theirsSilent = swiftTesting(printing: 0)
  let theirsPrinting = swiftTesting(printing: lines)
  setenv(PrintingSuite.linesKey, "0", 1)
  report.add(Row(label: "\(count) side by side printing \(lines) lines each", ours: oursPrinting,
                 anchorLabel: "1.5× Swift Testing parallel (target)", anchor: theirsPrinting.map { $0 * 1.5 }, unit: "s"))
  let linesCost: Double? = if let theirsPrinting, let theirsSilent { max(theirsPrinting - theirsSilent, 0.001) } else { nil }
  report.add(Row(label: "what the lines add to the run", ours: oursPrinting - oursSilent,
                 anchorLabel: "1.5× what they add to Swift Testing", anchor: linesCost.map { $0 * 1.5 }, unit: "s"))
}
