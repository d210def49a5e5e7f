import AsyncHarness
import Stories

/// A lost update between two tasks: each like loads the count, then saves it plus one. The
/// scheduled strategy runs both loads before either save in a share of its schedules:
/// `EXAMPLES_ORDERING_BUG=1 swift run examples --filter LikeCounter --explore 100`.
let likeCounterSuite = Suite("Stories.LikeCounter") {
  Test("the naive counter keeps two likes at once", traits: orderingBugTraits) { t async throws in
    let store = LikeStore()
    let counter = NaiveLikeCounter(store: store)
    let first = Task { await counter.like() }
    let second = Task { await counter.like() }
    await first.value
    await second.value
    t.expectEqual(await store.likes, 2)
  }

  Test("the counter keeps two likes at once") { t async throws in
    let store = LikeStore()
    let counter = LikeCounter(store: store)
    let first = Task { await counter.like() }
    let second = Task { await counter.like() }
    await first.value
    await second.value
    t.expectEqual(await store.likes, 2)
  }
}
