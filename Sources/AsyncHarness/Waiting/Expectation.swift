import Synchronization

/// Something a test expects to happen, fulfilled by the code under test's callback.
///
/// Expectations follow XCTest's semantics: an expected fulfillment count, inversion (the
/// wait fails if the expectation *is* fulfilled), and an API-misuse issue when fulfilled
/// more often than expected. An expectation belongs to the test that created it: a
/// fulfillment arriving after that test ended is reported against it as a late signal and
/// never satisfies a wait in a later test.
///
/// Every expectation a test creates must be covered by a wait (or a
/// `t.result(waitingFor:timeout:)`)
/// before the test ends; a forgotten one fails the test, as in XCTest, unless it was
/// created with `requiresWait: false`.
///
/// Create expectations with ``TestContext/expectation(_:expectedFulfillmentCount:isInverted:assertForOverFulfill:requiresWait:fileID:filePath:line:column:)``.
public final class Expectation: Sendable, CustomStringConvertible {
  /// What the test expects, as it appears in failure messages.
  public let expectationDescription: String
  /// How many fulfillments satisfy the expectation.
  public let expectedFulfillmentCount: Int
  /// Whether the expectation must *not* be fulfilled.
  public let isInverted: Bool
  /// Whether fulfilling more than ``expectedFulfillmentCount`` times is an issue.
  public let assertForOverFulfill: Bool
  /// Where the expectation was created.
  public let sourceLocation: SourceLocation
  /// Whether the test fails when it ends without a wait having covered the expectation.
  public let requiresWait: Bool

  struct State {
    var fulfillmentCount = 0
    /// A run-wide sequence number taken when the expectation became fulfilled, for
    /// enforce-order checks.
    var fulfillmentOrder: Int?
    /// Where the first `fulfill()` was called, once it was: an inverted expectation's
    /// failure points there.
    var firstFulfillment: SourceLocation?
    /// Where the `fulfill()` that reached the expected count was called: an order failure
    /// points there.
    var completingFulfillment: SourceLocation?
    /// Where a wait on this expectation was made, once one was.
    var waitedAt: SourceLocation?
    /// Called once when the wait that covered the expectation ends, or when its test ends:
    /// stops what fulfills it (a notification observer).
    var stopFulfilling: (@Sendable () -> Void)?
  }

  let state = Mutex(State())
  let owner: TestRecord

  init(description: String, expectedFulfillmentCount: Int, isInverted: Bool,
       assertForOverFulfill: Bool, requiresWait: Bool, sourceLocation: SourceLocation, owner: TestRecord) {
    self.expectationDescription = description
    self.expectedFulfillmentCount = expectedFulfillmentCount
    self.isInverted = isInverted
    self.assertForOverFulfill = assertForOverFulfill
    self.requiresWait = requiresWait
    self.sourceLocation = sourceLocation
    self.owner = owner
  }

  /// How many times the expectation has been fulfilled.
  public var fulfillmentCount: Int { state.withLock { $0.fulfillmentCount } }

  /// Whether the expectation has reached its expected fulfillment count.
  public var isFulfilled: Bool { fulfillmentCount >= expectedFulfillmentCount }

  /// Records that what the test expected happened. Safe from any thread.
  ///
  /// Fulfilling more often than expected records an API-misuse issue (unless
  /// ``assertForOverFulfill`` is false). Fulfilling after the owning test ended records a
  /// late-signal issue against that test and changes nothing else.
  public func fulfill(
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) {
    let location = SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    guard owner.isRunning else {
      owner.recordLate(Issue(
        kind: .lateSignal,
        message: "Late fulfillment of \"\(expectationDescription)\" (created at \(sourceLocation)) arrived after its test ended",
        sourceLocation: location))
      return
    }
    let overFulfilled = state.withLock { state -> Bool in
      state.fulfillmentCount += 1
      if state.fulfillmentCount == 1 { state.firstFulfillment = location }
      if state.fulfillmentCount == expectedFulfillmentCount {
        state.fulfillmentOrder = FulfillmentSequence.next()
        state.completingFulfillment = location
      }
      return state.fulfillmentCount > expectedFulfillmentCount
    }
    if overFulfilled && assertForOverFulfill && !isInverted {
      owner.record(Issue(
        kind: .apiMisused,
        message: "API violation - multiple calls made to fulfill() for \"\(expectationDescription)\" (expected \(expectedFulfillmentCount))",
        sourceLocation: location))
    }
    owner.signal()
  }

  /// The expectation's state as the pure outcome check sees it, with the fulfillment
  /// sequence read under the same lock that orders its own fulfillment.
  var snapshot: ExpectationSnapshot {
    state.withLock {
      ExpectationSnapshot(
        description: expectationDescription, expectedFulfillmentCount: expectedFulfillmentCount,
        fulfillmentCount: $0.fulfillmentCount, isInverted: isInverted,
        fulfillmentOrder: $0.fulfillmentOrder, sequenceWhenTaken: FulfillmentSequence.current,
        sourceLocation: sourceLocation,
        fulfillmentLocation: isInverted ? $0.firstFulfillment : $0.completingFulfillment)
    }
  }

  /// Whether a wait has covered the expectation.
  var wasWaitedFor: Bool { state.withLock { $0.waitedAt != nil } }

  /// Sets what ``stopFulfillment()`` stops.
  func onStopFulfilling(_ stop: @escaping @Sendable () -> Void) {
    state.withLock { $0.stopFulfilling = stop }
  }

  /// Stops what fulfills the expectation, once: its wait ended or its test did.
  func stopFulfillment() {
    state.withLock { state in
      defer { state.stopFulfilling = nil }
      return state.stopFulfilling
    }?()
  }

  /// The expectation's description.
  public var description: String { expectationDescription }
}

/// Hands out increasing numbers so fulfillment order can be compared across threads.
enum FulfillmentSequence {
  private static let counter = Atomic<Int>(0)
  static func next() -> Int { counter.add(1, ordering: .sequentiallyConsistent).newValue }
  /// The last number handed out: every expectation whose order is at most this had
  /// reached its count before the read.
  static var current: Int { counter.load(ordering: .sequentiallyConsistent) }
}
