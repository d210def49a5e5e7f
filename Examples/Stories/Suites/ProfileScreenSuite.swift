import AsyncHarness
import Foundation
import Stories

/// A profile screen shows a cached name, then the server's. The naive screen lets a late
/// cached name overwrite the fresh one: green under every strategy on real queues in
/// practically every run, found by the scheduled strategy's `--explore`:
/// `EXAMPLES_ORDERING_BUG=1 swift run examples --filter Profile --explore 100`.
let profileScreenSuite = Suite("Stories.ProfileScreen") {
  Test("the naive screen ends on the server's name", traits: orderingBugTraits) { t in
    let answered = t.expectation("both sources answered", expectedFulfillmentCount: 2)
    let screen = NaiveProfileScreen(sources: sources(in: t), delivery: t.main) { answered.fulfill() }
    screen.load()
    try t.wait(for: answered)
    t.expectEqual(screen.name, "Ada Lovelace")
  }

  Test("the screen ends on the server's name") { t in
    let answered = t.expectation("both sources answered", expectedFulfillmentCount: 2)
    let screen = ProfileScreen(sources: sources(in: t), delivery: t.main) { answered.fulfill() }
    screen.load()
    try t.wait(for: answered)
    t.expectEqual(screen.name, "Ada Lovelace")
  }
}

/// A stale cached name and a fresh one from the server, on the test's queues.
private func sources(in t: TestContext) -> ProfileSources {
  ProfileSources(cachedName: "Ada", freshName: "Ada Lovelace",
                 disk: t.queue("disk"), network: t.queue("network"), decoding: t.queue("decoding"))
}
