@_spi(ForToolsIntegrationOnly) import AsyncHarness
import Foundation
import Synchronization

// MARK: 6. Worker processes

/// The suites of the worker part. A worker is this executable started again with
/// `--harness-worker` (main.swift), so the parent and its workers build the same suites,
/// sized by the environment the workers inherit.
enum WorkerSuites {
  /// The environment variable carrying the number of trivial tests to the workers.
  static let countKey = "HARNESS_BENCH_WORKER_TESTS"
  /// The environment variable that makes this executable a suites executable of these
  /// suites, taking the harness's command line.
  static let commandLineKey = "HARNESS_BENCH_SUITES"
  /// The prefix of the line a test of the crash suite prints with the monotonic clock.
  static let stampPrefix = "stamp "

  /// The suites, sized by ``countKey`` and ``WaitBoundSuite/countKey``.
  static var fromEnvironment: [Suite] {
    let environment = ProcessInfo.processInfo.environment
    return suites(count: environment[countKey].flatMap { Int($0) } ?? 0,
                  waitBound: environment[WaitBoundSuite.countKey].flatMap { Int($0) } ?? 0,
                  triviallyAsync: environment[WaitBoundSuite.triviallyAsyncKey].flatMap { Int($0) } ?? 0,
                  printing: environment[PrintingSuite.countKey].flatMap { Int($0) } ?? 0)
  }

  /// `trivial`: `count` trivially-async tests (as in part 3); `crash`: pairs of a test that
  /// prints the clock and crashes, and one that prints the clock as it starts; `wait-bound`:
  /// part 8's `waitBound` tests that wait for a late callback; `wait-bound-awaiting`: as many
  /// that await it; `trivially-async`: part 8's `triviallyAsync` parallel async tests;
  /// `wait-bound-crash`, `wait-bound-unnamed-crash`: part 8's crashes among tests side by side;
  /// `printing`: part 13's tests that print while they await.
  static func suites(count: Int, waitBound: Int = 0, triviallyAsync: Int = 0, printing: Int = 0) -> [Suite] {
    let crashes = (0..<max(10, count / 50)).flatMap { index in
      [
        Test("crash \(index)") { _ in
          print("\(stampPrefix)\(monotonicNanos())")
          fatalError("crash \(index), on purpose")
        },
        Test("after \(index)") { _ in print("\(stampPrefix)\(monotonicNanos())") },
      ]
    }
    return [
      Suite("trivial", waiter: .expectation) { trivialTests(count: count, .main) },
      Suite("crash", waiter: .expectation) { crashes },
      WaitBoundSuite.suite(count: waitBound),
      WaitBoundSuite.awaitingSuite(count: waitBound),
      WaitBoundSuite.triviallyAsyncSuite(count: triviallyAsync),
      WaitBoundSuite.crashAmongAwaitingSuite(named: true),
      WaitBoundSuite.crashAmongAwaitingSuite(named: false),
      PrintingSuite.suite(count: printing),
    ]
  }
}

/// What a suites executable's user pays for isolation: the per-test cost of running in a
/// worker process and in a fresh process per test beside running in this process (and
/// XCTest, measured by part 3), and how long a crash keeps the next test waiting.
@MainActor
func measureWorkers(_ counts: Counts, _ report: Report, xctestPerTest: Double?) {
  let count = counts.tests
  report.section("6. Isolation: \(count) trivially-async tests in this process, in a worker, in a process each (µs per test, wall)")
  setenv(WorkerSuites.countKey, "\(count)", 1)
  let suites = WorkerSuites.suites(count: count)
  let executable = Bundle.main.executablePath ?? "/proc/self/exe"
  func perTest(_ outcome: RunOutcome, tests: Int) -> Double { outcome.seconds / Double(tests) * 1e6 }
  func median(_ run: () -> RunOutcome) -> RunOutcome {
    (0..<counts.perTestRepeats).map { _ in run() }.sorted { $0.seconds < $1.seconds }[counts.perTestRepeats / 2]
  }
  func show(_ label: String, _ figure: Double, _ outcome: RunOutcome) {
    print(label.padding(toLength: 46, withPad: " ", startingAt: 0)
            + String(format: " %8.1f µs/test  (%d passed, %d failing issues)", figure, outcome.summary.passed, outcome.failures))
  }
  /// Runs `run` and prints the CPU it took per test, in this process and in the workers.
  func showingCPU(_ tests: Int, _ run: () -> RunOutcome) -> RunOutcome {
    let (parent, workers) = (processCPUSeconds(), childrenCPUSeconds())
    let outcome = run()
    print(String(format: "  CPU per test: this process %.1f µs, workers %.1f µs", (processCPUSeconds() - parent) / Double(tests) * 1e6,
                 (childrenCPUSeconds() - workers) / Double(tests) * 1e6))
    return outcome
  }

  let inProcess = median { showingCPU(count) { runOurs(suites[0], executor: InProcessExecutor(), console: true) } }
  let inProcessFigure = perTest(inProcess, tests: count)
  show("in process (--isolation none)", inProcessFigure, inProcess)
  let worker = median { showingCPU(count) { runOurs(suites[0], executor: WorkerExecutor(executable: executable), console: true) } }
  let workerFigure = perTest(worker, tests: count)
  show("in a worker (--isolation worker)", workerFigure, worker)
  // A process starts with every suite built: the rows below use a suites executable of
  // `freshProcessTests` tests.
  let fewer = counts.freshProcessTests
  setenv(WorkerSuites.countKey, "\(fewer)", 1)
  let smaller = WorkerSuites.suites(count: fewer)
  let fresh = runOurs(smaller[0], executor: WorkerExecutor(executable: executable, freshProcessPerTest: true), console: true)
  let freshFigure = perTest(fresh, tests: fewer)
  show("a process each (--isolation test), \(fewer) tests", freshFigure, fresh)
  print(String(format: "worker ÷ in process: %.2f× (target ≤ 1.5×)", workerFigure / inProcessFigure))

  report.add(Row(label: "per test · --isolation worker", ours: workerFigure,
                 anchorLabel: "--isolation none (same run)", anchor: inProcessFigure, unit: "µs"))
  report.add(Row(label: "per test · --isolation worker", ours: workerFigure,
                 anchorLabel: "XCTest wait(for:)", anchor: xctestPerTest, unit: "µs"))
  print(String(format: "a process each ÷ in process: %.0f×", freshFigure / inProcessFigure))
  // A fresh process per test hides the start of the next one while a test runs: its anchor
  // is the bare start of the same executable, listing one test.
  let bare = bareStart(of: executable, tests: fewer) * 1e6
  print(String(format: "bare start of the executable (--list of one test), median of %d: %8.1f µs", bareStarts, bare))
  print(String(format: "a process each ÷ bare start: %.2f× (target ≤ 1×)", freshFigure / bare))
  report.add(Row(label: "per test · --isolation test", ours: freshFigure, anchorLabel: "bare start (--list of one test)",
                 anchor: bare, unit: "µs"))

  let stamps = StampRecorder()
  var onlyCrashes = Configuration()
  onlyCrashes.filters = ["\(smaller[1].name)/"]
  _ = runOurs(smaller, configuration: onlyCrashes, executor: WorkerExecutor(executable: executable), reporters: { [stamps] })
  let gaps = stamps.crashGaps
  let crashFigure = gaps.isEmpty ? Double.nan : gaps.sorted()[gaps.count / 2]
  print(String(format: "a crash → the next test starts in a fresh worker (%d tests): %.2f ms median of %d (min %.2f, max %.2f)",
               fewer, crashFigure, gaps.count, gaps.min() ?? .nan, gaps.max() ?? .nan))
  report.add(Row(label: "crash → next test, fresh worker", ours: crashFigure,
                 anchorLabel: "target", anchor: 50, unit: "ms"))
  fflush(nil)
}

/// How many bare starts give the median.
private let bareStarts = 11

/// The median wall time, in seconds, of starting `executable` as a suites executable of
/// `tests` trivial tests that lists one of them and exits: what a process per test costs
/// at least.
private func bareStart(of executable: String, tests: Int) -> Double {
  let seconds = (0..<bareStarts).map { _ in
    runSuitesExecutable(executable, tests: tests, ["--list", "--only", "trivial/test 0"], samplingMemory: false).seconds
  }
  return seconds.sorted()[bareStarts / 2]
}

/// Collects the clock stamps the crash suite's tests print, to measure each crash's gap.
private final class StampRecorder: Reporter {
  private let stamps = Mutex<[String: UInt64]>([:])

  func handle(_ event: Event) {
    guard case .outputCaptured(let test, let text) = event.kind else { return }
    for line in text.split(separator: "\n") where line.hasPrefix(WorkerSuites.stampPrefix) {
      guard let stamp = UInt64(line.dropFirst(WorkerSuites.stampPrefix.count)) else { continue }
      stamps.withLock { $0[test.name] = stamp }
    }
  }

  /// Milliseconds from each `crash N` test's stamp to its `after N` test's.
  var crashGaps: [Double] {
    let stamps = stamps.withLock { $0 }
    return stamps.compactMap { name, crashed in
      guard name.hasPrefix("crash "), let next = stamps["after " + name.dropFirst("crash ".count)] else { return nil }
      return Double(next - crashed) / 1e6
    }
  }
}
