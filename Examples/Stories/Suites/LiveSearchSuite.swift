import AsyncHarness
import Stories

/// Stale results on an `AsyncStream`: the screen shows whatever search finished last. The
/// scheduled strategy lets the earlier query's search finish second in a share of its
/// schedules: `EXAMPLES_ORDERING_BUG=1 swift run examples --filter LiveSearch --explore 100`.
let liveSearchSuite = Suite("Stories.LiveSearch") {
  Test("the naive search box ends on the last query's results", traits: orderingBugTraits) { t async throws in
    let search = NaiveLiveSearch(catalog: paintings)
    let screen = Task { await lastShown(search.results) }
    let first = search.type("night")
    let second = search.type("starry")
    await first.value
    await second.value
    search.close()
    t.expectEqual(await screen.value, ["The Starry Night"])
  }

  Test("the search box ends on the last query's results") { t async throws in
    let search = LiveSearch(catalog: paintings)
    let screen = Task { await lastShown(search.results) }
    let first = search.type("night")
    let second = search.type("starry")
    await first.value
    await second.value
    search.close()
    t.expectEqual(await screen.value, ["The Starry Night"])
  }
}

private let paintings = Catalog(titles: ["The Starry Night", "Nighthawks", "The Night Watch", "Water Lilies"])

/// What a screen reading `results` shows at the end: the last results it read.
private func lastShown(_ results: AsyncStream<[String]>) async -> [String] {
  var shown: [String] = []
  for await found in results { shown = found }
  return shown
}
