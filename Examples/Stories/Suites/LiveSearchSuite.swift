import AsyncHarness
import Stories

/// Stale results on an `AsyncStream`: the screen shows whatever search finished last. The
/// scheduled strategy lets the earlier query's search finish second in a share of its
/// schedules: `EXAMPLES_ORDERING_BUG=1 swift run examples --filter LiveSearch --explore 100`.
let liveSearchSuite = Suite("Stories.LiveSearch") {
  Test("the naive search box ends on the last query's results", traits: orderingBugTraits) { t async throws in
    await expectLastQuerysResults(from: NaiveLiveSearch(catalog: paintings), t)
  }

  Test("the search box ends on the last query's results") { t async throws in
    await expectLastQuerysResults(from: LiveSearch(catalog: paintings), t)
  }
}

private let paintings = Catalog(titles: ["The Starry Night", "Nighthawks", "The Night Watch", "Water Lilies"])

/// Types "night", then "starry", into `search`, and reads its stream as a screen would: the
/// screen ends on the results for "starry".
private func expectLastQuerysResults(from search: some SearchBox, _ t: TestContext) async {
  let screen = Task {
    var shown: [String] = []
    for await found in search.results { shown = found }
    return shown
  }
  let first = search.type("night")
  let second = search.type("starry")
  await first.value
  await second.value
  search.close()
  t.expectEqual(await screen.value, ["The Starry Night"])
}
