@testable @_spi(ForToolsIntegrationOnly) import AsyncHarness
import Foundation
import HarnessTestSupport
import Synchronization
import XCTest

/// `--jitter SEED`: the real queues a test gets delay each item by 0 to 2 ms drawn from the
/// seed, keep their order, and the run says which seed it used.
final class JitterTests: XCTestCase {
  private let jitter = Jitter(seed: 7)

  func testEachItemWaitsAtLeastTheDelayItsQueueDrewForIt() throws {
    let count = 40
    let waited = Mutex<[Int: Duration]>([:])
    let recorder = try runSuites([Suite("Jitter") {
      Test("delays") { t in
        let queues = [t.main, t.background] + (2..<count).map { t.queue("q\($0)") }
        let ran = t.expectation("every item ran", expectedFulfillmentCount: count)
        for (index, queue) in queues.enumerated() {
          let sent = ContinuousClock().now
          queue.async {
            waited.withLock { $0[index] = sent.duration(to: .now) }
            ran.fulfill()
          }
        }
        try t.wait(for: ran)
      }
    }]) { $0.jitter = jitter }
    let result = try XCTUnwrap(recorder.results.first)
    XCTAssertEqual(result.result.verdict, .passed, "\(result.result.issues)")
    // The queues were made in this order, so each one's first delay is the first of the
    // sequence of the same place.
    let source = jitter.delays(for: result.test)
    let drawn = (0..<count).map { _ in var delays = source.nextQueue(); return delays.next() }
    let measured = waited.withLock { $0 }
    for index in 0..<count {
      let measured = try XCTUnwrap(measured[index])
      XCTAssertGreaterThanOrEqual(measured, drawn[index], "queue \(index) ran its item before its delay")
    }
    XCTAssertGreaterThan(drawn.reduce(.zero, +), .milliseconds(20), "the delays drawn average about 1 ms")
  }

  func testAJitteredQueueKeepsItsOrderAndASyncCallRunsAfterTheDelayedItems() throws {
    let items = 300
    let recorder = try runSuites([Suite("Jitter") {
      Test("order") { t in
        let (io, flushed) = (t.queue("io"), t.queue("flushed"))
        let ioLog = Mutex<[Int]>([])
        let flushedLog = Mutex<[Int]>([])
        let ran = t.expectation("every item ran", expectedFulfillmentCount: 2 * items)
        for index in 0..<items {
          io.async {
            ioLog.withLock { $0.append(index) }
            ran.fulfill()
          }
          flushed.async {
            flushedLog.withLock { $0.append(index) }
            ran.fulfill()
          }
        }
        let seenBySync = flushed.sync { flushedLog.withLock { $0.count } }
        t.expectEqual(seenBySync, items, "a sync call runs after every item sent before it")
        try t.wait(for: ran)
        t.expectEqual(ioLog.withLock { $0 }, Array(0..<items), "items delayed by their own timers")
        t.expectEqual(flushedLog.withLock { $0 }, Array(0..<items), "items handed over by a sync call")
      }
    }]) {
      $0.jitter = jitter
      $0.repetitions = 20
    }
    XCTAssertEqual(recorder.results.count, 20)
    for (test, result, _) in recorder.results {
      XCTAssertEqual(result.verdict, .passed, "\(test): \(result.issues)")
    }
  }

  func testASeedDrawsTheSameDelaysAgainAndEachRepetitionOrQueueNewOnes() {
    let test = TestID(suite: "Jitter", name: "delays", host: "semaphore")
    func delays(_ jitter: Jitter, _ test: TestID, queue: Int) -> [Duration] {
      let source = jitter.delays(for: test)
      for _ in 0..<queue { _ = source.nextQueue() }
      var delays = source.nextQueue()
      return (0..<2000).map { _ in delays.next() }
    }
    let first = delays(jitter, test, queue: 0)
    XCTAssertEqual(delays(jitter, test, queue: 0), first)
    XCTAssertNotEqual(delays(jitter, test, queue: 1), first)
    XCTAssertNotEqual(delays(Jitter(seed: 8), test, queue: 0), first)
    var again = test
    again.repetition = 2
    XCTAssertNotEqual(delays(jitter, again, queue: 0), first)
    XCTAssertTrue(first.allSatisfy { $0 >= .zero && $0 <= Jitter.maximumDelay })
    XCTAssertLessThan(first.min() ?? .zero, .microseconds(20))
    XCTAssertGreaterThan(first.max() ?? .zero, .microseconds(1980))
  }

  func testTheRunReportsTheSeedInItsFirstEvent() throws {
    let recorder = try runSuites([Suite("Jitter") { Test("passes") { _ in } }]) { $0.jitter = jitter }
    guard case .runStarted(let run)? = recorder.events.first?.kind else { return XCTFail("no runStarted") }
    XCTAssertEqual(run.jitterSeed, 7)
    XCTAssertTrue(recorder.events[0].jsonLine.contains(#""jitterSeed":7,"#), recorder.events[0].jsonLine)
  }

  func testAWorkerGetsTheJitterWithItsStep() throws {
    let suite = Suite("Jitter") { Test("passes") { _ in } }
    var configuration = Configuration()
    configuration.jitter = Jitter(seed: .max)
    let plan = try Runner.Plan(suites: [suite], configuration: configuration, registry: .builtIn)
    let step = try XCTUnwrap(plan.plannedTests(of: plan.entries[0], repetition: 1).first)
    guard case .run(let request) = try WorkerRequest(line: WorkerRequest.run(WorkerRunRequest(step, ref: 1)).line) else {
      return XCTFail("not a run request")
    }
    let received = try WorkerCatalog([suite], registry: .builtIn).plannedTest(for: request).get()
    XCTAssertEqual(received.jitter, Jitter(seed: .max))
  }

  // MARK: The command line

  private func run(_ arguments: [String]) -> (status: Int32, output: String, errors: String) {
    let output = WrittenText()
    let errors = WrittenText()
    let status = HarnessMain.status(arguments: arguments, suites: [Suite("Jitter") { Test("passes") { _ in } }],
                                    console: .plain, output: output.write, errors: errors.write)
    return (status, output.text, errors.text)
  }

  func testJitterWithoutASeedPrintsTheOneItDrew() throws {
    let seeded = run(["--jitter", "42", "--repeat", "2"])
    XCTAssertEqual(seeded.status, 0, seeded.errors)
    XCTAssertTrue(seeded.output.hasPrefix("Real queues jittered with seed 42 (0–2 ms before each item; rerun with --jitter 42)\n"),
                  seeded.output)
    for arguments in [["--jitter"], ["--jitter", "--repeat", "2"]] {
      let drawn = run(arguments)
      XCTAssertEqual(drawn.status, 0, drawn.errors)
      let header = try XCTUnwrap(drawn.output.split(separator: "\n").first)
      let seed = try XCTUnwrap(header.split(separator: " ").last.flatMap { UInt64($0.dropLast()) }, String(header))
      XCTAssertEqual(header, "Real queues jittered with seed \(seed) (0–2 ms before each item; rerun with --jitter \(seed))")
    }
  }

  func testABadSeedIsAUsageErrorNamingTheFlagAndTheValue() {
    for flag in ["--jitter", "--shuffle"] {
      for value in ["abc", "-1", "1.5", "18446744073709551616"] {
        let result = run([flag, value])
        XCTAssertEqual(result.status, 2, "\(flag) \(value)")
        XCTAssertEqual(result.output, "", "\(flag) \(value)")
        XCTAssertTrue(result.errors.hasPrefix("error: The value '\(value)' is invalid for '\(flag) <seed>'\nUSAGE: "), result.errors)
      }
    }
  }

  func testJitterAndTheScheduledWaitersFlagsAreAUsageError() {
    for (flag, value) in [("--explore", "3"), ("--schedule", "7:pct3:9f2c1a")] {
      let result = run(["--jitter", flag, value])
      XCTAssertEqual(result.status, 2, flag)
      XCTAssertTrue(result.errors.hasPrefix(
        "error: --jitter and \(flag) cannot be combined: \(flag) runs under the scheduled waiter, which orders work itself on queues --jitter does not delay\n"),
        result.errors)
    }
  }
}
