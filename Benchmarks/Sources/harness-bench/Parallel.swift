@_spi(ForToolsIntegrationOnly) import AsyncHarness
import Foundation
import Synchronization

// MARK: 8. Tests of a suite in parallel

/// Part 8's suite: independent tests that each wait for a callback 25 ms away, the kind of
/// suite that waits far more than it works. It is one of the suites the workers build
/// (``WorkerSuites``), sized by the environment they inherit.
enum WaitBoundSuite {
  /// The environment variable carrying the number of tests to the workers.
  static let countKey = "HARNESS_BENCH_WAIT_BOUND_TESTS"
  /// How long each test waits for its callback.
  static let delayMilliseconds = 25

  /// `count` tests, marked `.parallel`, each waiting for its callback with an expectation.
  static func suite(count: Int) -> Suite {
    Suite("wait-bound", .parallel, waiter: .expectation) {
      (0..<count).map { index in
        Test("waits \(index)") { t in
          let called = t.expectation("the callback")
          t.queue("callbacks").asyncAfter(.milliseconds(delayMilliseconds)) { called.fulfill() }
          try t.wait(for: called)
        }
      }
    }
  }
}

extension WaitBoundSuite {
  /// The environment variable carrying the number of trivially-async tests to the workers.
  static let triviallyAsyncKey = "HARNESS_BENCH_TRIVIALLY_ASYNC_TESTS"

  /// `count` tests, marked `.parallel`, each awaiting its callback: a worker runs them side
  /// by side.
  static func awaitingSuite(count: Int) -> Suite {
    Suite("wait-bound-awaiting", .parallel, waiter: .expectation) {
      (0..<count).map { index in
        Test("awaits \(index)") { t async throws in
          let called = t.expectation("the callback")
          t.queue("callbacks").asyncAfter(.milliseconds(delayMilliseconds)) { called.fulfill() }
          try await t.wait(for: called)
        }
      }
    }
  }

  /// How many tests run side by side when one of them crashes (issue 40).
  static let crashWidth = 256

  /// ``crashWidth`` − 1 tests awaiting their callback, marked `.parallel`, and one that
  /// crashes 10 ms in while they all run side by side in one worker: on its own task
  /// (`wait-bound-crash`, the worker names it), or on a raw dispatch queue
  /// (`wait-bound-unnamed-crash`, nothing names it).
  static func crashAmongAwaitingSuite(named: Bool) -> Suite {
    Suite(named ? "wait-bound-crash" : "wait-bound-unnamed-crash", .parallel, waiter: .expectation) {
      Test("crashes") { t async throws in
        if named {
          try await Task.sleep(for: .milliseconds(10))
          fatalError("a side-by-side test crashes, on purpose")
        }
        let never = t.expectation("never")
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.01) { fatalError("a raw queue crashes, on purpose") }
        try await t.wait(for: never, timeout: .seconds(5))
      }
      (0..<(crashWidth - 1)).map { index in
        Test("awaits \(index)") { t async throws in
          let called = t.expectation("the callback")
          t.queue("callbacks").asyncAfter(.milliseconds(delayMilliseconds)) { called.fulfill() }
          try await t.wait(for: called)
        }
      }
    }
  }

  /// `count` trivially-async tests, marked `.parallel`: a background callback fulfils an
  /// expectation the test awaits (Swift Testing's side: part 3's `confirmation`).
  static func triviallyAsyncSuite(count: Int) -> Suite {
    Suite("trivially-async", .parallel, waiter: .expectation) {
      (0..<count).map { index in
        Test("awaits \(index)") { t async throws in
          let done = t.expectation("the callback")
          t.background.async { done.fulfill() }
          try await t.wait(for: done)
        }
      }
    }
  }
}

/// The wall time of the wait-bound suite with 1 to 16 workers, beside Swift Testing's
/// parallel run of the same waits (blocking a thread, as the harness's tests do, and
/// suspending, as async code can).
@MainActor
func measureParallelTests(_ counts: Counts, _ report: Report) {
  let count = counts.waitBoundTests
  report.section("8. Tests of a suite in parallel: \(count) tests each waiting for a \(WaitBoundSuite.delayMilliseconds) ms callback (s, wall)")
  setenv(WorkerSuites.countKey, "0", 1)
  setenv(WaitBoundSuite.countKey, "\(count)", 1)
  let suites = WorkerSuites.suites(count: 0, waitBound: count)
  let executable = Bundle.main.executablePath ?? "/proc/self/exe"
  var configuration = Configuration()
  configuration.filters = ["wait-bound/"]
  var seconds: [Int: Double] = [:]
  for workers in [1, 2, 4, 8, 16] {
    let start = monotonicNanos()
    let summary = (try? Runner(suites: suites, configuration: configuration, lanes: workers,
                               makeExecutor: { WorkerExecutor(executable: executable) }, reporters: [consoleToNowhere()]).run())
      ?? Summary()
    seconds[workers] = Double(monotonicNanos() - start) / 1e9
    print(String(format: "--workers %-2d %8.2f s  %5.2f× --workers 1  (%d passed)", workers, seconds[workers]!,
                 seconds[1]! / seconds[workers]!, summary.passed))
  }
  func swiftTesting(blocking: Bool) -> Double? {
    let child = runChild(["swift-testing", "parallel"], environment: [SwiftTestingWaits.environmentKey: "\(count)",
                                                                      SwiftTestingWaits.blockingKey: blocking ? "1" : "0"])
    print(String(format: "Swift Testing, parallel, %@: %@", blocking ? "blocking on a semaphore" : "awaiting a continuation",
                 child.map { String(format: "%.2f s (%d cases, exit status %d)", $0.seconds, $0.counts.first ?? 0, $0.counts.last ?? -1) }
                   ?? "did not run"))
    return child?.seconds
  }
  let blocking = swiftTesting(blocking: true)
  let awaiting = swiftTesting(blocking: false)
  measureSideBySide(counts, report, awaitingAnchor: awaiting)
  print(String(format: "--workers 8 speed-up over --workers 1: %.1f× (target ≥ 6×)", seconds[1]! / seconds[8]!))
  report.add(Row(label: "wait-bound suite · --workers 8", ours: seconds[8], anchorLabel: "--workers 1 ÷ 6 (target)",
                 anchor: seconds[1]! / 6, unit: "s"))
  report.add(Row(label: "wait-bound suite · --workers 8", ours: seconds[8], anchorLabel: "Swift Testing parallel, blocking",
                 anchor: blocking, unit: "s"))
  report.add(Row(label: "wait-bound suite · --workers 16", ours: seconds[16], anchorLabel: "Swift Testing parallel, awaiting",
                 anchor: awaiting, unit: "s"))
  measureSleepingReporter(suites: suites, configuration: configuration, executable: executable, report: report)
  fflush(nil)
}

/// The same suite with `--workers 2`, with and without a reporter that sleeps 1 ms on every
/// event: the tests' span (from `runStarted` to the last `testEnded`, by the events' own
/// timestamps, which a slow reporter cannot move) and the run's wall time, which includes
/// delivering what is queued at the end. Reporters are called from one dispatcher thread, so
/// the tests' span should not grow.
private func measureSleepingReporter(suites: [Suite], configuration: Configuration, executable: String, report: Report) {
  final class Span: Reporter {
    let times = Mutex<(start: Date?, end: Date?)>((nil, nil))
    func handle(_ event: Event) {
      times.withLock { times in
        if case .runStarted = event.kind { times.start = event.timestamp }
        if case .testEnded = event.kind { times.end = max(times.end ?? event.timestamp, event.timestamp) }
      }
    }
    var seconds: Double {
      times.withLock { times in
        guard let start = times.start, let end = times.end else { return .nan }
        return end.timeIntervalSince(start)
      }
    }
  }
  final class Sleeping: Reporter {
    func handle(_ event: Event) { usleep(1000) }
  }
  func run(sleeping: Bool) -> (span: Double, wall: Double) {
    let span = Span()
    let start = monotonicNanos()
    _ = try? Runner(suites: suites, configuration: configuration, lanes: 2, makeExecutor: { WorkerExecutor(executable: executable) },
                    reporters: [consoleToNowhere(), span] + (sleeping ? [Sleeping()] : [])).run()
    return (span.seconds, Double(monotonicNanos() - start) / 1e9)
  }
  let plain = run(sleeping: false)
  let slowed = run(sleeping: true)
  print(String(format: "--workers 2, a reporter sleeping 1 ms an event: the tests' span %.2f s (%.2f s without it), "
    + "the run %.2f s (%.2f s without it: the rest is delivering the queue)", slowed.span, plain.span, slowed.wall, plain.wall))
  report.add(Row(label: "tests' span · a reporter sleeping 1 ms an event", ours: slowed.span,
                 anchorLabel: "no sleeping reporter", anchor: plain.span, unit: "s"))
}

/// The awaiting variant of part 8: the same waits, awaited, run side by side in each worker
/// at the default width (`--parallel` alone, then `--workers 2` and 4), and trivially-async
/// tests so, beside Swift Testing's parallel runs of the same tests.
@MainActor
private func measureSideBySide(_ counts: Counts, _ report: Report, awaitingAnchor: Double?) {
  let count = counts.waitBoundTests
  let trivial = count * 5
  setenv(WaitBoundSuite.triviallyAsyncKey, "\(trivial)", 1)
  let suites = WorkerSuites.suites(count: 0, waitBound: count, triviallyAsync: trivial)
  let executable = Bundle.main.executablePath ?? "/proc/self/exe"
  func run(_ filter: String, workers: Int, width: Int = WorkerExecutor.defaultAsyncWidth) -> Double {
    var configuration = Configuration()
    configuration.filters = [filter]
    let start = monotonicNanos()
    let summary = (try? Runner(suites: suites, configuration: configuration, lanes: workers,
                               makeExecutor: { WorkerExecutor(executable: executable, asyncWidth: width) },
                               reporters: [consoleToNowhere()]).run()) ?? Summary()
    let seconds = Double(monotonicNanos() - start) / 1e9
    print(String(format: "%@, --workers %d, --async-width %d: %.2f s (%d passed)", filter, workers, width, seconds,
                 summary.passed))
    return seconds
  }
  // How the width changes it (the default is among them).
  for width in [16, 64, 256, 1024] where width != WorkerExecutor.defaultAsyncWidth {
    _ = run("wait-bound-awaiting/", workers: 1, width: width)
  }
  var awaiting: [Int: Double] = [:]
  for workers in [1, 2, 4] { awaiting[workers] = run("wait-bound-awaiting/", workers: workers) }
  let triviallyAsync = [1, 2].map { run("trivially-async/", workers: $0) }
  // A crash among tests side by side: what it adds to their run, against the slowest of the
  // others (25 ms) and a worker start (a run of one test).
  let withCrash = run("wait-bound-crash/", workers: 1)
  let withUnnamedCrash = run("wait-bound-unnamed-crash/", workers: 1)
  let withoutCrash = run("wait-bound-crash/awaits", workers: 1)
  let oneTest = run("trivially-async/awaits 0", workers: 1)
  print(String(format: "a crash among %d side by side adds %.3f s (the slowest other test and a worker start: %.3f s); "
                 + "one that names no test, %.3f s (rerun in halves)",
               WaitBoundSuite.crashWidth, withCrash - withoutCrash, 0.025 + oneTest, withUnnamedCrash - withoutCrash))
  let child = runChild(["swift-testing", "parallel"], environment: [SwiftTestingLoad.environmentKey: "\(trivial)"])
  print(String(format: "Swift Testing, parallel, %d trivially-async tests: %@", trivial,
               child.map { String(format: "%.2f s (exit status %d)", $0.seconds, $0.counts.last ?? -1) } ?? "did not run"))
  let target = { (anchor: Double?) in anchor.map { $0 * 1.5 } }
  report.add(Row(label: "awaiting · --parallel (1 worker)", ours: awaiting[1], anchorLabel: "1.5× Swift Testing parallel (target)",
                 anchor: target(awaitingAnchor), unit: "s"))
  report.add(Row(label: "awaiting · --workers 2", ours: awaiting[2], anchorLabel: "1.5× Swift Testing parallel (target)",
                 anchor: target(awaitingAnchor), unit: "s"))
  report.add(Row(label: "awaiting · --workers 4", ours: awaiting[4], anchorLabel: "1.5× Swift Testing parallel (target)",
                 anchor: target(awaitingAnchor), unit: "s"))
  report.add(Row(label: "a crash among \(WaitBoundSuite.crashWidth) side by side: time added", ours: withCrash - withoutCrash,
                 anchorLabel: "slowest other test + a worker start (target)", anchor: 0.025 + oneTest, unit: "s"))
  report.add(Row(label: "a crash naming no test among \(WaitBoundSuite.crashWidth): time added",
                 ours: withUnnamedCrash - withoutCrash, anchorLabel: "slowest other test + a worker start",
                 anchor: 0.025 + oneTest, unit: "s"))
  report.add(Row(label: "\(trivial) trivially async · --parallel", ours: triviallyAsync[0],
                 anchorLabel: "1.5× Swift Testing parallel (target)", anchor: target(child?.seconds), unit: "s"))
  report.add(Row(label: "\(trivial) trivially async · --workers 2", ours: triviallyAsync[1],
                 anchorLabel: "1.5× Swift Testing parallel (target)", anchor: target(child?.seconds), unit: "s"))
}

/// A console reporter formatting every line into `/dev/null`, as the other parts' runs have.
func consoleToNowhere() -> ConsoleReporter {
  let sink = FileHandle(forWritingAtPath: "/dev/null")
  return ConsoleReporter(style: .plain) { sink?.write(Data($0.utf8)) }
}
