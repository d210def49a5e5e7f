import AsyncHarness
import Stories

/// A lost update between two tasks: each like loads the count, then saves it plus one. The
/// scheduled strategy runs both loads before either save in a share of its schedules:
/// `EXAMPLES_ORDERING_BUG=1 swift run examples --filter LikeCounter --explore 100`.
let likeCounterSuite = Suite("Stories.LikeCounter") {
  Test("the naive counter keeps two likes at once", traits: orderingBugTraits) { t async throws in
    await expectTwoLikesKept(by: NaiveLikeCounter(store: LikeStore()), t)
  }

  Test("the counter keeps two likes at once") { t async throws in
    await expectTwoLikesKept(by: LikeCounter(store: LikeStore()), t)
  }
}

/// Two tasks like a post at once through `counter`: both likes are kept.
private func expectTwoLikesKept(by counter: some Liking, _ t: TestContext) async {
  let first = Task { await counter.like() }
  let second = Task { await counter.like() }
  await first.value
  await second.value
  t.expectEqual(await counter.store.likes, 2)
}
