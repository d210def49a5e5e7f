/// The waiter strategies a run can choose by name (`--waiter NAME`).
///
/// ```swift
/// let registry = try WaiterRegistry.builtIn.registering(MyWaiter())
/// HarnessMain.run(suites, registry: registry)
/// ```
public struct WaiterRegistry: Sendable {
  /// The strategies, in registration order.
  public private(set) var waiters: [any Waiter]

  /// A registry holding exactly these strategies.
  /// - Throws: ``WaiterRegistryError`` when two share a name.
  public init(_ waiters: [any Waiter]) throws {
    self.waiters = []
    for waiter in waiters { try register(waiter) }
  }

  /// The six built-in strategies: expectation, semaphore, probePoller, notification,
  /// synchronous, scheduled.
  public static let builtIn = try! WaiterRegistry([
    ExpectationWaiter(), SemaphoreWaiter(), ProbePollerWaiter(), NotificationWaiter(), SynchronousWaiter(),
    ScheduledWaiter(),
  ])

  /// The names of the strategies, in registration order.
  public var names: [String] { waiters.map(\.name) }

  /// The strategy with this name, if registered.
  public func waiter(named name: String) -> (any Waiter)? {
    waiters.first { $0.name == name }
  }

  /// This registry plus `waiter`.
  /// - Throws: ``WaiterRegistryError`` when the name is empty or already taken.
  public func registering(_ waiter: any Waiter) throws -> WaiterRegistry {
    var copy = self
    try copy.register(waiter)
    return copy
  }

  private mutating func register(_ waiter: any Waiter) throws {
    guard !waiter.name.isEmpty, waiter.name != "all" else { throw WaiterRegistryError.invalidName(waiter.name) }
    guard self.waiter(named: waiter.name) == nil else { throw WaiterRegistryError.duplicateName(waiter.name) }
    waiters.append(waiter)
  }
}

/// Why a waiter could not be registered.
public enum WaiterRegistryError: Error, Equatable, CustomStringConvertible {
  /// Another registered waiter has this name.
  case duplicateName(String)
  /// The name is empty or reserved (`all`).
  case invalidName(String)

  /// The message a user reads.
  public var description: String {
    switch self {
    case .duplicateName(let name): "a waiter named \"\(name)\" is already registered"
    case .invalidName(let name): "\"\(name)\" cannot name a waiter: names must be non-empty and not \"all\""
    }
  }
}
