import Testing

/// `swift test` runs no Swift Testing test of a bundle built from an entry point of the
/// package's own (it would have to be asked to, with --enable-swift-testing).
@Test func neverRunsUnderItsOwnEntryPoint() {
  Issue.record("a Swift Testing test ran in a bundle built from Tests/LinuxMain.swift")
}
