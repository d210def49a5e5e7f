extension Configuration {
  /// Whether the run runs only some of its tests: filters, exact IDs (`--only`, `--rerun-failed`),
  /// a shard, or a replayed schedule. `harness test` runs a package's XCTest tests as
  /// `swift test --filter` does then, and as `swift test` does otherwise.
  var choosesTests: Bool {
    !filters.isEmpty || only != nil || sharding != nil || replay != nil
  }

  /// The selected tests of each group, in catalog order: those the filters and exact
  /// IDs keep (``includes(_:in:)``), and of them, when ``sharding`` is set, this shard's
  /// part. The operation on the plan behind `--shard`; `--list` lists the same selection.
  ///
  /// An empty shard (more shards than suites, say) is a valid, empty run: only a selection
  /// that is empty before sharding is an error (``checkSelection(in:)``).
  /// - Parameter catalog: the tests, in catalog order.
  /// - Returns: every group with its selected tests, possibly none.
  func selection(of catalog: Catalog) -> [(group: Catalog.Group, tests: [Catalog.Item])] {
    let selected = catalog.groups.map { group in (group: group, tests: group.tests.filter { includes($0, in: group) }) }
    guard let sharding else { return selected }
    let assignment = sharding.assignment(of: selected.flatMap { group, tests in
      tests.map { TestPath(suite: group.name, name: $0.name) }
    })
    return selected.map { group, tests in
      (group, tests.filter { assignment.shards[TestPath(suite: group.name, name: $0.name)] == sharding.shard.index })
    }
  }
}
