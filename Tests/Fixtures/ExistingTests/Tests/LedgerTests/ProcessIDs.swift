import Foundation
import Testing

// Swift Testing suites whose tests print the ID of the process they run in, for
// `harness test --workers N`, which may cut a suite between workers: one that is not
// serialized, and one that is, which must run whole in one process.

/// Four tests that may run in any process.
@Suite struct PrintsItsProcess {
  @Test func first() { print("process \(ProcessInfo.processInfo.processIdentifier)") }
  @Test func second() { print("process \(ProcessInfo.processInfo.processIdentifier)") }
  @Test func third() { print("process \(ProcessInfo.processInfo.processIdentifier)") }
  @Test func fourth() { print("process \(ProcessInfo.processInfo.processIdentifier)") }
}

/// Five tests that run one at a time, in order, in one process: the suite's `.serialized`
/// holds for the suite in it too.
@Suite(.serialized) struct PrintsItsProcessInOrder {
  @Test func first() { print("process \(ProcessInfo.processInfo.processIdentifier)") }
  @Test func second() { print("process \(ProcessInfo.processInfo.processIdentifier)") }
  @Test func third() { print("process \(ProcessInfo.processInfo.processIdentifier)") }
  @Test func fourth() { print("process \(ProcessInfo.processInfo.processIdentifier)") }

  @Suite struct Inside {
    @Test func fifth() { print("process \(ProcessInfo.processInfo.processIdentifier)") }
  }
}
