import AsyncHarness
import Foundation
import XCTest

/// `--jitter` with `--repeat` shakes out a test that sleeps instead of waiting: the
/// `examples` executable run as its user would, on the search view model's story.
///
/// Under jitter each of the story's two hops (the work queue, then the main queue) waits
/// 0 to 2 ms more, so the 2 ms sleep loses whenever the two delays add up to more than it
/// does (one time in two) and when the hops themselves are slow: 590, 626 and 633 of
/// 1,000 repetitions failed here under seeds 1, 2 and 3 (1 or 2 in 1,000 without jitter).
/// The check asks for at least one failure in 100; even at a rate of one in five it
/// misses with a probability of 0.8¹⁰⁰ ≈ 2 × 10⁻¹⁰. The waiting test fails only when its
/// wait times out (10 s here, against a few milliseconds of work).
final class JitterStoryTests: XCTestCase {
  private var examples: URL { builtExecutable("examples", for: Self.self) }

  func testJitterShowsTheSleepingTestFlakyAndTheWaitingOneNever() throws {
    let json = FileManager.default.temporaryDirectory.appendingPathComponent("jitter-\(UUID().uuidString).jsonl")
    defer { try? FileManager.default.removeItem(at: json) }
    let result = try runToEnd(
      examples,
      ["--filter", "Stories.SearchViewModel", "--waiter", "expectation", "--jitter", "1", "--repeat", "100",
       "--timeout", "10", "--json", json.path],
      environment: ["EXAMPLES_FLAKY": "1"])
    XCTAssertEqual(result.status, 1, "the sleeping test failed: \(result.errors)")
    XCTAssertTrue(result.output.hasPrefix("Real queues jittered with seed 1 (0–2 ms before each item; rerun with --jitter 1)\n"),
                  result.output)

    let events = try String(contentsOf: json, encoding: .utf8).split(separator: "\n").map { try Event(jsonLine: $0) }
    guard case .runStarted(let run)? = events.first?.kind else { return XCTFail("no runStarted") }
    XCTAssertEqual(run.jitterSeed, 1)
    var failures: [String: Int] = [:]
    var runs: [String: Int] = [:]
    for case .testEnded(let test, let result) in events.map(\.kind) {
      runs[test.name, default: 0] += 1
      if result.verdict.isFailure { failures[test.name, default: 0] += 1 }
    }
    let sleeping = "shows the results: sleeps instead of waiting"
    let waiting = "shows the results: waits for the view model"
    XCTAssertEqual(runs, [sleeping: 100, waiting: 100])
    XCTAssertGreaterThan(failures[sleeping] ?? 0, 0, "the sleeping test is flaky under jitter")
    XCTAssertEqual(failures[waiting] ?? 0, 0, "the waiting test passes every repetition")
  }
}
