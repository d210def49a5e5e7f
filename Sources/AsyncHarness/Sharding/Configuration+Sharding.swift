extension Configuration {
  /// The selected tests of each suite, in declaration order: those the filters and exact
  /// IDs keep (``includes(_:in:)``), and of them, when ``sharding`` is set, this shard's
  /// part. The operation on the plan behind `--shard`; `--list` lists the same selection.
  ///
  /// An empty shard (more shards than suites, say) is a valid, empty run: only a selection
  /// that is empty before sharding is an error (``checkSelection(in:)``).
  /// - Parameter suites: the suites, in declaration order.
  /// - Returns: every suite with its selected tests, possibly none.
  package func selection(of suites: [Suite]) -> [(suite: Suite, tests: [Test])] {
    let selected = suites.map { suite in (suite: suite, tests: suite.tests.filter { includes($0, in: suite) }) }
    guard let sharding else { return selected }
    let assignment = sharding.assignment(of: selected.flatMap { suite, tests in
      tests.map { TestIdentity(suite: suite.name, name: $0.name) }
    })
    return selected.map { suite, tests in
      (suite, tests.filter { assignment.shards[TestIdentity(suite: suite.name, name: $0.name)] == sharding.shard.index })
    }
  }
}
