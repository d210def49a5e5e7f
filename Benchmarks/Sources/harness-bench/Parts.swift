import AsyncHarness
import Foundation
import Synchronization

/// How much each part measures: `--quick` for CI, the full counts otherwise.
struct Counts {
  /// Waits per row for prompt waits (expectations, semaphores, continuations).
  var waits: Int
  /// Waits per row for our probe waits, which poll.
  var probeWaits: Int
  /// Waits per row for the anchors that poll every 10 ms (XCTest predicates, Nimble).
  var pollerWaits: Int
  /// Seconds each idle wait lasts, and how many times each is measured.
  var idleSeconds: Double
  var idleRepeats: Int
  /// Prompt waits whose leftovers are measured after they ended.
  var lingeringWaits: Int
  /// Trivially-async tests per run, and how many runs of ours give the median.
  var tests: Int
  var perTestRepeats: Int
  /// Tests run in a fresh worker process each (`--isolation test`).
  var freshProcessTests: Int
  /// Tests whose callback fails.
  var failingTests: Int
  /// How many of them XCTest runs, to extrapolate from.
  var failingSample: Int
  /// Schedules explored per row of the scheduled strategy's part.
  var schedules: Int
  /// The delay or timeout of each of the six waits of the suite that waits in time.
  var timedWait: Double
  /// Tests per run of the report part, and how many runs of each set of reporters give the median.
  var reportTests: Int
  var reportRepeats: Int
  /// Tests of the wait-bound suite of part 8.
  var waitBoundTests: Int
  /// The sizes of the whole runs of part 9.
  var scaleTests: [Int]
  /// The generated package of part 10: XCTest classes (and as many Swift Testing suites),
  /// tests in each, runs per median.
  var existingTests: ExistingTestsShape
  /// Part 11: the seeds each bug's test is explored under, and its plain runs.
  var exploredExistingTests: (seeds: Int, plainRuns: Int)
  /// Part 12: the lines of each kind read by each JSON reader.
  var jsonLines: Int
  /// Part 13: the tests side by side that print.
  var printingTests: Int

  static let full = Counts(waits: 100_000, probeWaits: 2_000, pollerWaits: 1_000,
                           idleSeconds: 1, idleRepeats: 3, lingeringWaits: 20_000,
                           tests: 10_000, perTestRepeats: 3, freshProcessTests: 1_000, failingTests: 1_000, failingSample: 5,
                           schedules: 10_000, timedWait: 10, reportTests: 100_000, reportRepeats: 9, waitBoundTests: 400,
                           scaleTests: [10_000, 100_000, 1_000_000],
                           existingTests: ExistingTestsShape(classes: 5, perClass: 40, sleepMilliseconds: 5, repeats: 3),
                           exploredExistingTests: (seeds: 100, plainRuns: 50), jsonLines: 100_000,
                           printingTests: 1_000)
  static let quick = Counts(waits: 2_000, probeWaits: 200, pollerWaits: 50,
                            idleSeconds: 0.1, idleRepeats: 3, lingeringWaits: 2_000,
                            tests: 500, perTestRepeats: 3, freshProcessTests: 50, failingTests: 100, failingSample: 1,
                            schedules: 500, timedWait: 0.25, reportTests: 10_000, reportRepeats: 3, waitBoundTests: 100,
                            scaleTests: [1_000, 10_000, 100_000],
                            existingTests: ExistingTestsShape(classes: 3, perClass: 20, sleepMilliseconds: 5, repeats: 1),
                            exploredExistingTests: (seeds: 20, plainRuns: 10), jsonLines: 10_000,
                            printingTests: 200)
}

// MARK: 1. Wake latency

@MainActor
func measureWakeLatency(_ counts: Counts, _ report: Report) {
  report.section("1. Wake latency: background fulfill/signal/post → the wait returns")
  report.latencyHeader()
  let signaller = Signaller()
  let flipper = Signaller(delays: Signaller.flip)
  defer {
    signaller.stop()
    flipper.stop()
  }

  func anchor(_ label: String, _ result: (LatencyStats, failures: Int)) -> LatencyStats {
    report.latencyLine(label, result.0, failures: result.failures)
    return result.0
  }
  let semaphore = anchor("floor: DispatchSemaphore handoff", (semaphoreFloor(waits: counts.waits, signaller: signaller), 0))
  let continuation = anchor("floor: CheckedContinuation resume", (continuationFloor(waits: counts.waits, signaller: signaller), 0))
  _ = anchor("floor: main run loop woken by main-queue block", (mainQueueFloor(waits: counts.waits, signaller: signaller), 0))
  let waiterMain = anchor("XCTWaiter · main", xctestWakeLatency(.waiter, waits: counts.waits, signaller: signaller))
  let waiterOffMain = anchor("XCTWaiter · off-main", onBackgroundThread {
    xctestWakeLatency(.waiter, waits: counts.waits, signaller: signaller)
  })
  let notification = anchor("XCTNSNotificationExpectation · main",
                            xctestWakeLatency(.notification, waits: counts.waits, signaller: signaller))
  let predicate = anchor("XCTNSPredicateExpectation · main (flip 0.5–10 ms)",
                         xctestWakeLatency(.predicate, waits: counts.pollerWaits, signaller: flipper))
  let nimble = anchor("Nimble await toEventually (main pumped, flip 0.5–10 ms)",
                      nimbleWakeLatency(waits: counts.pollerWaits, signaller: flipper))

  func ours(_ waiter: any Waiter, _ place: Place, _ kind: WakeKind, waits: Int,
            against anchorLabel: String, _ anchorStats: LatencyStats) {
    let (stats, outcome) = ourWakeLatency(waiter, place, kind, waits: waits,
                                          signaller: kind == .probe ? flipper : signaller)
    let label = "\(waiter.name) · \(kind.rawValue) · \(place.rawValue)"
    report.latencyLine(label, stats, failures: outcome.failures)
    if let first = outcome.firstFailure { report.note("\(label): \(outcome.failures) failing issues, first: \(first)") }
    report.add(Row(label: "wake p50 · \(label)", ours: stats.p50, anchorLabel: anchorLabel,
                   anchor: anchorStats.p50, unit: "µs"))
    report.add(Row(label: "wake p99.9 · \(label)", ours: stats.p999, anchorLabel: anchorLabel,
                   anchor: anchorStats.p999, unit: "µs"))
  }
  for waiter in builtInWaiters {
    ours(waiter, .main, .fulfill, waits: counts.waits, against: "XCTWaiter · main", waiterMain)
  }
  for waiter in builtInWaiters {
    ours(waiter, .offMain, .fulfill, waits: counts.waits, against: "XCTWaiter · off-main", waiterOffMain)
  }
  for waiter in builtInWaiters {
    ours(waiter, .async, .fulfill, waits: counts.waits, against: "CheckedContinuation floor", continuation)
  }
  ours(.notification, .main, .notification, waits: counts.waits,
       against: "XCTNSNotificationExpectation", notification)
  for waiter in builtInWaiters {
    ours(waiter, .main, .probe, waits: counts.probeWaits, against: "XCTNSPredicateExpectation", predicate)
  }
  ours(.probePoller, .async, .probe, waits: counts.probeWaits, against: "Nimble await toEventually", nimble)
  // The probe poller before issue 51, in the same run: the same first 10 ms, another sleep.
  let before = ProbePollerBeforeIssue51()
  ours(before, .main, .fulfill, waits: counts.waits, against: "XCTWaiter · main", waiterMain)
  ours(before, .offMain, .fulfill, waits: counts.waits, against: "XCTWaiter · off-main", waiterOffMain)
  ours(before, .main, .probe, waits: counts.probeWaits, against: "XCTNSPredicateExpectation", predicate)
  report.note(String(format: "DispatchSemaphore floor p50 %.2f µs (the off-main ideal)", semaphore.p50))
}

// MARK: 2. CPU while idle

@MainActor
func measureIdleCPU(_ counts: Counts, _ report: Report) {
  let seconds = counts.idleSeconds
  report.section(String(format: "2. CPU burned while waiting %.1f s for what never happens (CPU ms per s waited, median of %d)",
                        seconds, counts.idleRepeats))
  // Let the threads the previous part started retire: their exits would be counted.
  Thread.sleep(forTimeInterval: 2)
  func perSecond(_ measure: () -> Double) -> Double {
    let figures = (0..<counts.idleRepeats).map { _ in measure() / seconds * 1000 }.sorted()
    return figures[figures.count / 2]
  }
  func show(_ label: String, _ figure: Double) {
    print(String(format: "%-44@ %8.2f", label as NSString, figure))
    fflush(nil)
  }

  let poller = perSecond {
    let before = processCPUSeconds()
    let deadline = Date(timeIntervalSinceNow: seconds)
    let never = Flag()
    while !never.isSet && Date() < deadline {
      _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 0.0001))
    }
    return processCPUSeconds() - before
  }
  show("hand-written 0.1 ms run-loop poller · main", poller)

  var idle: [String: Double] = [:]
  for place in Place.allCases {
    for waiter in builtInWaiters {
      let ours = perSecond { ourIdleCPU(waiter, place, probe: false, seconds: seconds) }
      let label = "\(waiter.name) · \(place.rawValue)"
      show(label, ours)
      idle[label] = ours
    }
  }
  var anchors: [XCTestIdle: Double] = [:]
  for anchor in XCTestIdle.allCases {
    let figure = perSecond { anchor.cpuSeconds(waiting: seconds) }
    show(anchor.rawValue, figure)
    report.add(Row(label: "idle CPU · anchor", ours: nil, anchorLabel: anchor.rawValue, anchor: figure, unit: "ms/s"))
    anchors[anchor] = figure
  }
  // Each row beside the anchor it answers to: the probe poller's expectation waits beside
  // XCTWaiter (it polls them), the others beside the hand-written poller.
  for place in Place.allCases {
    for waiter in builtInWaiters {
      let label = "\(waiter.name) · \(place.rawValue)"
      let polls = waiter.name == ProbePollerWaiter().name && place != .async
      // XCTWaiter off the main thread spins (~1 s of CPU a second): its main-thread figure is the fair bar.
      let anchor = polls ? XCTestIdle.waiterMain : nil
      report.add(Row(label: "idle CPU · \(label)", ours: idle[label],
                     anchorLabel: anchor?.rawValue ?? "0.1 ms run-loop poller",
                     anchor: anchor.flatMap { anchors[$0] } ?? poller, unit: "ms/s"))
    }
  }
  // The probe poller before issue 51 (PollerBefore.swift), in the same run.
  let before = ProbePollerBeforeIssue51()
  for place in Place.allCases {
    let figure = perSecond { ourIdleCPU(before, place, probe: false, seconds: seconds) }
    let label = "\(before.name) · \(place.rawValue)"
    show(label, figure)
    let anchor = place == .async ? nil : XCTestIdle.waiterMain
    report.add(Row(label: "idle CPU · \(label)", ours: figure, anchorLabel: anchor?.rawValue ?? "0.1 ms run-loop poller",
                   anchor: anchor.flatMap { anchors[$0] } ?? poller, unit: "ms/s"))
  }
  let predicate = anchors[.predicate]
  for waiter in builtInWaiters {
    let ours = perSecond { ourIdleCPU(waiter, .main, probe: true, seconds: seconds) }
    let label = "\(waiter.name) · t.wait(until:) · main"
    show(label, ours)
    report.add(Row(label: "idle CPU · \(label)", ours: ours, anchorLabel: "XCTNSPredicateExpectation · main",
                   anchor: predicate, unit: "ms/s"))
  }
  let nimble = perSecond { nimbleIdleCPU(waiting: seconds) }
  show("Nimble await toEventually", nimble)
  report.add(Row(label: "idle CPU · anchor", ours: nil, anchorLabel: "Nimble await toEventually",
                 anchor: nimble, unit: "ms/s"))

  print("CPU spent after waits ended, until their 1 s deadlines passed (µs per wait):")
  for place in [Place.main, .async] {
    let figure = lingeringCPU(place, waits: counts.lingeringWaits)
    show("expectation · \(place.rawValue), \(counts.lingeringWaits) waits", figure)
    report.add(Row(label: "CPU after the wait, to its deadline · \(place.rawValue)", ours: figure,
                   anchorLabel: "—", anchor: nil, unit: "µs"))
  }
}

/// CPU microseconds per wait that the process spends, after `waits` prompt waits ended,
/// until their 1 s deadlines have passed: what a wait leaves behind.
private func lingeringCPU(_ place: Place, waits: Int) -> Double {
  let tests = stride(from: 0, to: waits, by: 100).map { first in
    makeTest("waits \(first)", place, blocking: { t in
      for _ in 0..<min(100, waits - first) {
        let done = t.expectation("done")
        t.background.async { done.fulfill() }
        try t.wait(for: done)
      }
    }, suspending: { t in
      for _ in 0..<min(100, waits - first) {
        let done = t.expectation("done")
        t.background.async { done.fulfill() }
        try await t.wait(for: done)
      }
    })
  }
  _ = runOurs(tests, waiter: .expectation, place: place)
  let before = processCPUSeconds()
  Thread.sleep(forTimeInterval: 1.5)
  return (processCPUSeconds() - before) / Double(waits) * 1e6
}

/// CPU seconds one of our tests burns waiting `seconds` for an expectation never
/// fulfilled, or (`probe`) until a condition that never holds.
private func ourIdleCPU(_ waiter: any Waiter, _ place: Place, probe: Bool, seconds: Double) -> Double {
  let cpu = CPUBox()
  let timeout = Duration.milliseconds(Int(seconds * 1000))
  let test = makeTest("idle", place, blocking: { t in
    let never = t.expectation("never fulfilled")
    let before = processCPUSeconds()
    if probe {
      try? t.wait(until: { false }, timeout: timeout)
    } else {
      try? t.wait(for: never, timeout: timeout)
    }
    cpu.seconds.withLock { $0 = processCPUSeconds() - before }
  }, suspending: { t in
    let never = t.expectation("never fulfilled")
    let before = processCPUSeconds()
    if probe {
      try? await t.wait(until: { false }, timeout: timeout)
    } else {
      try? await t.wait(for: never, timeout: timeout)
    }
    cpu.seconds.withLock { $0 = processCPUSeconds() - before }
  })
  _ = runOurs([test], waiter: waiter, place: place)
  return cpu.seconds.withLock { $0 }
}

/// The CPU time a test body measured.
private final class CPUBox: Sendable {
  let seconds = Mutex<Double>(0)
}

// MARK: 3. Per-test overhead

/// Returns XCTest's per-test cost, the anchor of part 6.
@MainActor
func measurePerTest(_ counts: Counts, _ report: Report) -> Double? {
  let count = counts.tests
  report.section("3. Per-test overhead: \(count) trivially-async tests (µs per test, wall)")
  func perTest(_ seconds: Double) -> Double { seconds / Double(count) * 1e6 }

  let xctest = runChild(["xctest", "pass", "\(count)"])
  let xctestFigure = xctest.map { perTest($0.seconds) }
  print("XCTest, XCTMain with runtime-built cases: \(describe(xctest, xctestCounts, perTest))")
  let serial = runChild(["swift-testing", "serial"], environment: [SwiftTestingLoad.environmentKey: "\(count)"])
  let serialFigure = serial.map { perTest($0.seconds) }
  print("Swift Testing, confirmation, serial: \(describe(serial, swiftTestingCounts, perTest))")
  let parallel = runChild(["swift-testing", "parallel"], environment: [SwiftTestingLoad.environmentKey: "\(count)"])
  print("Swift Testing, confirmation, parallel: \(describe(parallel, swiftTestingCounts, perTest))")

  for place in [Place.main, .async] {
    for waiter in builtInWaiters {
      let tests = trivialTests(count: count, place)
      let outcome = (0..<counts.perTestRepeats)
        .map { _ in runOurs(tests, waiter: waiter, place: place, console: true) }
        .sorted { $0.seconds < $1.seconds }[counts.perTestRepeats / 2]
      let label = "\(waiter.name) · \(place.rawValue)"
      print(String(format: "ours %-36@ %8.1f µs/test, median of %d  (%d passed)", label as NSString,
                   perTest(outcome.seconds), counts.perTestRepeats, outcome.summary.passed))
      if place == .main {
        report.add(Row(label: "per test · \(label)", ours: perTest(outcome.seconds),
                       anchorLabel: "XCTest wait(for:)", anchor: xctestFigure, unit: "µs"))
      } else {
        report.add(Row(label: "per test · \(label)", ours: perTest(outcome.seconds),
                       anchorLabel: "Swift Testing confirmation, serial", anchor: serialFigure, unit: "µs"))
      }
    }
  }
  report.add(Row(label: "per test · anchor", ours: nil, anchorLabel: "Swift Testing confirmation, parallel",
                 anchor: parallel.map { perTest($0.seconds) }, unit: "µs"))
  fflush(nil)
  return xctestFigure
}

/// Describes what a child process reported; `countNames` names its counts in order.
/// What the XCTest and Swift Testing child processes count.
private let xctestCounts = ["tests run", "failures recorded"]
private let swiftTestingCounts = ["cases", "exit status"]

private func describe(_ result: ChildResult?, _ countNames: [String], _ perTest: (Double) -> Double) -> String {
  guard let result else { return "did not report" }
  let counts = zip(countNames, result.counts).map { "\($0) \($1)" }.joined(separator: ", ")
  return String(format: "%.2f s, %.1f µs/test (%@)", result.seconds, perTest(result.seconds), counts)
}

// MARK: 4. Failing suites

@MainActor
func measureFailingSuites(_ counts: Counts, _ report: Report) {
  let count = counts.failingTests
  report.section("4. Failing suites: \(count) tests whose callback fails, 1 s timeout (s for the suite)")
  let sample = runChild(["xctest", "fail", "\(counts.failingSample)"])
  let xctest = sample.map { $0.seconds / Double(counts.failingSample) * Double(count) }
  let sampled = sample.map { result in
    zip(xctestCounts, result.counts).map { "\($0) \($1)" }.joined(separator: ", ")
  } ?? "did not report"
  print(String(format: "XCTest: %d tests in %.2f s (%@); extrapolated to %d: %@", counts.failingSample,
               sample?.seconds ?? .nan, sampled, count, xctest.map { String(format: "%.0f s", $0) } ?? "—"))
  for waiter in builtInWaiters {
    let tests = (0..<count).map { index in
      Test("failing \(index)") { t in
        let done = t.expectation("callback")
        t.background.async { t.fail("callback failed") }
        try t.wait(for: done, timeout: .seconds(1))
      }
    }
    let outcome = runOurs(tests, waiter: waiter, place: .main, console: true)
    print(String(format: "ours %-14@ %8.3f s  (%d of %d failed)", waiter.name as NSString,
                 outcome.seconds, outcome.summary.failed, count))
    report.add(Row(label: "failing suite · \(waiter.name) · main", ours: outcome.seconds,
                   anchorLabel: "XCTest (extrapolated ×\(count / counts.failingSample))", anchor: xctest, unit: "s"))
  }
  fflush(nil)
}
