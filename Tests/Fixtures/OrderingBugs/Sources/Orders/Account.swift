/// Reentrancy across an `await`: an actor checks its balance, then suspends to record the
/// withdrawal with an auditor, then spends the balance it checked before the suspension.
/// Another withdrawal can run while the first one is suspended.
public actor Account {
  public private(set) var balance: Int
  private let auditor = Auditor()

  public init(balance: Int) {
    self.balance = balance
  }

  /// Withdraws `amount` when the balance covers it (the bug: checked before the `await`).
  public func withdraw(_ amount: Int) async -> Bool {
    guard balance >= amount else { return false }
    await auditor.record(amount)
    balance -= amount
    return true
  }

  /// Withdraws `amount` when the balance covers it, deciding after the `await` (the fix).
  public func withdrawCheckingAfterTheAudit(_ amount: Int) async -> Bool {
    await auditor.record(amount)
    guard balance >= amount else { return false }
    balance -= amount
    return true
  }
}

/// Keeps a log of the amounts withdrawn.
actor Auditor {
  private var amounts: [Int] = []

  func record(_ amount: Int) {
    amounts.append(amount)
  }
}
