/// A running balance of entries, the code the fixture's tests exercise.
public struct Ledger: Sendable {
  /// The amounts entered, in order.
  public private(set) var entries: [Int] = []

  /// An empty ledger.
  public init() {}

  /// The sum of the entries.
  public var balance: Int { entries.reduce(0, +) }

  /// Adds `amount` to the ledger.
  public mutating func enter(_ amount: Int) {
    entries.append(amount)
  }

  /// The entry at `index`; traps when there is none.
  public func entry(at index: Int) -> Int {
    entries[index]
  }

  /// The balance, read by a task of its own, for async tests.
  public func settledBalance() async -> Int {
    let balance = balance
    return await Task { balance }.value
  }
}

/// The error a test throws.
public struct LedgerError: Error, CustomStringConvertible {
  /// What went wrong.
  public var reason: String

  /// An error for `reason`.
  public init(_ reason: String) { self.reason = reason }

  public var description: String { "LedgerError: \(reason)" }
}
