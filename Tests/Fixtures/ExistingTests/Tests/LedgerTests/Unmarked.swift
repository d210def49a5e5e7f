import Testing

/// Types without `@Suite` that hold tests, as swift-snapshot-testing 1.19.7 declares
/// `BaseSuite.AssertSnapshotTests` and `BaseSuite.MainActorTests`: Swift Testing makes each a
/// suite as it runs them (`✔ Suite First passed`), but its listing has no record of them. Each
/// holds a test of the same name.
@Suite struct HoldsUnmarked {
  struct First {
    @Test func same() {}
  }

  struct Second {
    @Test func same() {}
  }
}
