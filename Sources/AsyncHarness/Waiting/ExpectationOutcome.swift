/// What the outcome check needs to know of one expectation: a plain value, so the check is
/// a pure function testable without threads or clocks.
package struct ExpectationSnapshot: Sendable, Hashable {
  /// The expectation's description.
  package var description: String
  /// How many fulfillments satisfy it.
  package var expectedFulfillmentCount: Int
  /// How many it received.
  package var fulfillmentCount: Int
  /// Whether it must not be fulfilled.
  package var isInverted: Bool
  /// When the expectation reached its count, as a run-wide sequence number.
  package var fulfillmentOrder: Int?
  /// The run-wide sequence when the snapshot was taken: an expectation whose
  /// ``fulfillmentOrder`` is higher reached its count after this snapshot, so this one may
  /// have reached its own in between. Snapshots of several expectations are taken one
  /// after another, and this is what keeps their order check to what one instant saw.
  package var sequenceWhenTaken: Int
  /// Where it was created.
  package var sourceLocation: SourceLocation
  /// Where the `fulfill()` that matters to the outcome was called: the first one of an
  /// inverted expectation, the one that reached the count of a regular one.
  package var fulfillmentLocation: SourceLocation?

  /// Creates a snapshot.
  package init(description: String, expectedFulfillmentCount: Int = 1, fulfillmentCount: Int = 0,
              isInverted: Bool = false, fulfillmentOrder: Int? = nil, sequenceWhenTaken: Int = .max,
              sourceLocation: SourceLocation = SourceLocation(fileID: "T/T.swift", filePath: "T.swift", line: 1, column: 1),
              fulfillmentLocation: SourceLocation? = nil) {
    self.description = description
    self.expectedFulfillmentCount = expectedFulfillmentCount
    self.fulfillmentCount = fulfillmentCount
    self.isInverted = isInverted
    self.fulfillmentOrder = fulfillmentOrder
    self.sequenceWhenTaken = sequenceWhenTaken
    self.sourceLocation = sourceLocation
    self.fulfillmentLocation = fulfillmentLocation
  }

  var isFulfilled: Bool { fulfillmentCount >= expectedFulfillmentCount }
}

/// The state of a wait for expectations, decided by ``ExpectationOutcome/evaluate(_:enforceOrder:timedOut:)``.
package enum ExpectationOutcome: Sendable, Hashable {
  /// Keep waiting.
  case pending
  /// Every expectation is satisfied (inverted ones stayed unfulfilled through the timeout).
  case completed
  /// An inverted expectation was fulfilled.
  case invertedFulfillment([ExpectationSnapshot])
  /// Expectations were fulfilled out of the enforced order.
  case incorrectOrder(ExpectationSnapshot, ExpectationSnapshot)
  /// The timeout passed with these expectations unfulfilled.
  case timedOut([ExpectationSnapshot])

  /// Decides a wait's state from its expectations.
  ///
  /// An earlier expectation is out of order only when a later one reached its count
  /// before the earlier one's snapshot was taken (``ExpectationSnapshot/sequenceWhenTaken``):
  /// a later fulfilment that happened while the snapshots were being taken proves
  /// nothing, and the wait goes on to look again.
  ///
  /// - Parameters:
  ///   - expectations: the expectations waited for, in the order given to the wait.
  ///   - enforceOrder: whether they must be fulfilled in that order.
  ///   - timedOut: whether the wait's deadline has passed.
  /// - Returns: `.pending` while the wait should go on, otherwise how it ended.
  package static func evaluate(_ expectations: [ExpectationSnapshot], enforceOrder: Bool,
                              timedOut: Bool) -> ExpectationOutcome {
    let inverted = expectations.filter { $0.isInverted && $0.fulfillmentCount > 0 }
    if !inverted.isEmpty { return .invertedFulfillment(inverted) }
    if enforceOrder {
      let regular = expectations.filter { !$0.isInverted }
      for (index, earlier) in regular.enumerated() {
        for later in regular[(index + 1)...] {
          guard let laterOrder = later.fulfillmentOrder else { continue }
          if let earlierOrder = earlier.fulfillmentOrder, earlierOrder < laterOrder { continue }
          if earlier.fulfillmentOrder == nil && laterOrder > earlier.sequenceWhenTaken { continue }
          return .incorrectOrder(earlier, later)
        }
      }
    }
    let unfulfilled = expectations.filter { !$0.isInverted && !$0.isFulfilled }
    if unfulfilled.isEmpty {
      let hasInverted = expectations.contains { $0.isInverted }
      return hasInverted && !timedOut ? .pending : .completed
    }
    return timedOut ? .timedOut(unfulfilled) : .pending
  }

  /// The failure message for an ended wait, or `nil` when it completed. Worded as XCTest
  /// words it, plus where each expectation was created; an order or inverted failure,
  /// which ``failureLocation`` attributes to a `fulfill()` call, also names the wait.
  /// - Parameters:
  ///   - timeout: the wait's timeout.
  ///   - waitedAt: where the wait was made.
  package func failureMessage(timeout: Duration, waitedAt: SourceLocation? = nil) -> String? {
    let wait = waitedAt.map { " (the wait at \($0))" } ?? ""
    switch self {
    case .pending, .completed:
      return nil
    case .timedOut(let unfulfilled):
      return "Exceeded timeout of \(timeout.secondsDescription) seconds, with unfulfilled expectations: "
        + unfulfilled.map(\.labelWithLocation).joined(separator: ", ")
    case .invertedFulfillment(let fulfilled):
      return "Fulfilled inverted expectation "
        + fulfilled.map(\.labelWithLocation).joined(separator: ", ") + wait
    case .incorrectOrder(let earlier, let later):
      return "Failed due to expectation fulfilled in incorrect order: requires \(earlier.quotedLabel), actually fulfilled \(later.quotedLabel)" + wait
    }
  }

  /// The `fulfill()` call a failed wait is attributed to, when one caused it: the first
  /// fulfillment of an inverted expectation, or the one that completed an expectation out
  /// of order. `nil` for a timeout, which belongs to the wait.
  package var failureLocation: SourceLocation? {
    switch self {
    case .pending, .completed, .timedOut: nil
    case .invertedFulfillment(let fulfilled): fulfilled.first?.fulfillmentLocation
    case .incorrectOrder(_, let later): later.fulfillmentLocation
    }
  }

  /// The outcome as a ``WaitResult``; `nil` while pending.
  var result: WaitResult? {
    switch self {
    case .pending: nil
    case .completed: .completed
    case .timedOut: .timedOut
    case .incorrectOrder: .incorrectOrder
    case .invertedFulfillment: .invertedFulfillment
    }
  }
}

extension ExpectationSnapshot {
  var quotedLabel: String { "\"\(description)\"" }
  var labelWithLocation: String {
    let count = expectedFulfillmentCount > 1 ? " (\(fulfillmentCount) of \(expectedFulfillmentCount))" : ""
    return "\(quotedLabel)\(count) created at \(sourceLocation)"
  }
}

extension Duration {
  /// Seconds as a short decimal: `1`, `0.2`, `0.05`.
  var secondsDescription: String {
    let (seconds, attoseconds) = components
    let milliseconds = Int64(seconds) * 1000 + attoseconds / 1_000_000_000_000_000
    if milliseconds % 1000 == 0 { return "\(milliseconds / 1000)" }
    var fraction = String(milliseconds % 1000)
    fraction = String(repeating: "0", count: 3 - fraction.count) + fraction
    while fraction.hasSuffix("0") { fraction.removeLast() }
    return "\(milliseconds / 1000).\(fraction)"
  }

  var timeInterval: Double {
    Double(components.seconds) + Double(components.attoseconds) / 1e18
  }

  /// Whole nanoseconds, saturating at `Int.max` for durations too long to count them.
  var nanoseconds: Int {
    let (seconds, attoseconds) = components
    let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
    guard !overflow else { return seconds < 0 ? Int.min : Int.max }
    return Int(truncatingIfNeeded: whole) &+ Int(attoseconds / 1_000_000_000)
  }
}
