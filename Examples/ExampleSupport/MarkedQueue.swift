import AsyncHarness

/// A ``Dispatching`` queue that marks the work it runs, so a callback can check that it
/// runs on the queue it was promised (``isCurrent``), whether the queue underneath is real
/// (`AsyncQueue`) or inline (`SyncQueue`).
public struct MarkedQueue: Dispatching {
  @TaskLocal private static var running: QueueIdentity?

  /// The queue that runs the work.
  public let base: any Dispatching
  private let mark: QueueIdentity

  /// Wraps a queue.
  public init(_ base: any Dispatching) {
    self.base = base
    self.mark = QueueIdentity(label: "marked \(base.identity.label)")
  }

  public var identity: QueueIdentity { base.identity }

  /// Whether the caller runs inside work sent to this queue.
  public var isCurrent: Bool { Self.running === mark }

  public func async(_ work: @escaping @Sendable () -> Void) {
    let mark = mark
    base.async { Self.$running.withValue(mark, operation: work) }
  }

  public func sync<T>(_ work: () throws -> T) rethrows -> T {
    try base.sync { try Self.$running.withValue(mark, operation: work) }
  }
}
