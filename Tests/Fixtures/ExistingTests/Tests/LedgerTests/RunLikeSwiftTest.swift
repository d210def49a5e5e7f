import Foundation
import Synchronization
import Testing

// Swift Testing tests whose verdict depends on being run as `swift test` runs them: side by side
// in Swift Testing's default parallel run, a `.serialized` suite in its order, an exit test, a
// warning (one its issue handler counts), a cancelled test, a parameterized test that crashes, an
// attachment.

/// Two tests that pass only when they run side by side: each waits for the other to arrive.
@Suite struct OnlyInParallel {
  static let arrived = Atomic(0)

  /// Arrives, then waits up to a second for the other test: run one at a time, it must fail
  /// rather than hang, so it looks every 10 ms until then.
  static func meetTheOther() async throws {
    arrived.add(1, ordering: .sequentiallyConsistent)
    let deadline = ContinuousClock.now + .seconds(1)
    while arrived.load(ordering: .sequentiallyConsistent) < 2 && ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(10))  // deliberate: the other test, in this process, says nothing when it arrives
    }
    #expect(arrived.load(ordering: .sequentiallyConsistent) >= 2, "the other test never ran beside this one")
  }

  @Test func meetsTheOtherOne() async throws { try await Self.meetTheOther() }
  @Test func meetsTheOtherTwo() async throws { try await Self.meetTheOther() }
}

/// A serialized suite whose second test depends on its first having run before it.
@Suite(.serialized) struct InItsOrder {
  static let steps = Mutex<[String]>([])

  @Test func first() {
    Self.steps.withLock { $0.append("first") }
  }

  @Test func second() {
    #expect(Self.steps.withLock { $0 } == ["first"], "second ran before first, or beside it")
  }
}

/// Swift Testing's other ways for a test to end.
@Suite struct OtherEnds {
  @Test func exitTestPasses() async {
    await #expect(processExitsWith: .failure) { exit(1) }
  }

  @Test func recordsAWarning() {
    Issue.record("only a warning", severity: .warning)
  }

  @Test func cancelsItself() throws {
    try Test.cancel("not today")
  }

  /// Crashes for the argument 2, only with EXISTING_TESTS_RUDE=1.
  @Test(arguments: [1, 2, 3]) func crashesForTwo(value: Int) {
    guard rude, value == 2 else { return }
    fatalError("crashed for the argument 2")
  }

  /// The warnings this suite's `countsItsWarning()` was handed.
  static let warningsHandled = Atomic(0)

  /// Counts the warning it records with an issue handler of its own, as swift-property-based
  /// counts its checks' warnings: Swift Testing hands a warning to issue handlers under `swift
  /// test`, but not in a run that asked for an event stream older than 6.3, where this fails.
  @Test func countsItsWarning() async throws {
    let counting = IssueHandlingTrait.compactMapIssues { issue in
      if issue.severity == .warning { OtherEnds.warningsHandled.add(1, ordering: .sequentiallyConsistent) }
      return nil
    }
    try await counting.provideScope(for: Test.current!, testCase: Test.Case.current) {
      Issue.record("a warning it counts", severity: .warning)
    }
    #expect(Self.warningsHandled.load(ordering: .sequentiallyConsistent) == 1, "its issue handler was not handed its warning")
  }

  /// Attaches a log of a megabyte (`⎙ Attached 'ledger.log' to attachesALog().` under `swift
  /// test`, which saves it with `--attachments-path`), and passes.
  @Test func attachesALog() {
    Attachment.record(String(repeating: "debit 1 credit 1\n", count: 1 << 16), named: "ledger.log")
  }
}
