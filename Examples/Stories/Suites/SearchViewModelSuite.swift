import AsyncHarness
import Foundation
import Stories

/// The flaky demonstration runs only when asked: `EXAMPLES_FLAKY=1`.
private let runsFlakyDemonstration = ProcessInfo.processInfo.environment["EXAMPLES_FLAKY"] != nil

private let paintings = ["The Starry Night", "Starry Night Over the Rhône", "The Night Watch", "Water Lilies"]

/// A view model searching through a `Task` that works on the test's queues. Sleeping
/// instead of waiting passes on real queues nearly every time, the hops taking
/// microseconds; with `--jitter` each hop takes up to 2 ms more and the sleep loses often:
/// `EXAMPLES_FLAKY=1 swift run examples --filter Search --jitter --repeat 100` reports it
/// flaky. Waiting for the view model's callback passes under jitter every time.
let searchViewModelSuite = Suite("Stories.SearchViewModel") {
  Test("shows the results: sleeps instead of waiting",
       traits: runsFlakyDemonstration ? [] : [.skip("flaky by design: sleeps instead of waiting; EXAMPLES_FLAKY=1 runs it")]) { t async throws in
    let model = SearchViewModel(catalog: paintings, work: t.background, delivery: t.main)
    model.search("starry")
    try await Task.sleep(for: .milliseconds(2)) // deliberate flaky demonstration: sleeps instead of waiting
    t.expectEqual(model.results, ["The Starry Night", "Starry Night Over the Rhône"])
  }

  Test("shows the results: waits for the view model") { t async throws in
    let shown = t.expectation("results shown")
    let model = SearchViewModel(catalog: paintings, work: t.background, delivery: t.main) { shown.fulfill() }
    model.search("starry")
    try await t.wait(for: shown)
    t.expectEqual(model.results, ["The Starry Night", "Starry Night Over the Rhône"])
  }
}
