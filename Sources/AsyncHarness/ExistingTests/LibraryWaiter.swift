/// The waiter that the suites standing for a package's own tests run under (`harness
/// test`), named after the testing library that runs them (`xctest`, `swift-testing`), so
/// that reports read `LedgerTests.BalanceXCTests [xctest]`. Those tests run in their own
/// test bundle and wait as their library does; a wait of this process would block as the
/// semaphore strategy does.
struct LibraryWaiter: Waiter {
  /// The library's name.
  let name: String

  func block(on condition: WaitCondition, until deadline: ContinuousClock.Instant) {
    SemaphoreWaiter().block(on: condition, until: deadline)
  }
}

extension LibraryWaiter {
  /// The names of the testing libraries that stand as waiters in `harness test`.
  static let libraryNames: Set<String> = [ExistingTest.Library.xctest.name, ExistingTest.Library.swiftTesting.name]

  /// What reports call the waiter named `name`: `library` for a testing library (`harness
  /// test`), else `waiter`.
  static func role(ofWaiterNamed name: String) -> String {
    libraryNames.contains(name) ? "library" : "waiter"
  }
}
