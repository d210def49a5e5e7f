import Dispatch

/// A ``Dispatching`` queue backed by a real `DispatchQueue`.
public struct AsyncQueue: Dispatching {
  /// The queue work is sent to.
  public let queue: DispatchQueue
  /// The queue's identity, which ``QueueIdentity/current`` reports while its work runs.
  public let identity: QueueIdentity
  let issues: IssueSink

  /// Wraps a dispatch queue. Pass `DispatchQueue.main` to stand for the main queue.
  public init(_ queue: DispatchQueue, label: String? = nil) {
    let isMain = queue.label == DispatchQueue.main.label
    self.init(queue, identity: isMain ? .main : QueueIdentity(label: label ?? queue.label), issues: IssueSink(record: nil))
  }

  init(_ queue: DispatchQueue, identity: QueueIdentity, issues: IssueSink) {
    self.queue = queue
    self.identity = identity
    self.issues = issues
  }

  /// The main queue.
  public static var main: AsyncQueue { AsyncQueue(.main) }

  /// Runs `work` on this queue, later.
  public func async(_ work: @escaping @Sendable () -> Void) {
    let identity = identity
    queue.async { DispatchChain.$frames.withValue([identity], operation: work) }
  }

  /// Runs `work` on this queue once `delay` has passed.
  public func asyncAfter(_ delay: Duration, _ work: @escaping @Sendable () -> Void) {
    let identity = identity
    queue.asyncAfter(deadline: .now() + delay.dispatchInterval) { DispatchChain.$frames.withValue([identity], operation: work) }
  }

  /// Runs `work` on this queue and waits for it.
  /// - Returns: What `work` returns.
  public func sync<T>(_ work: () throws -> T) rethrows -> T {
    let (chain, isCycle) = DispatchChain.enter(identity, issues: issues)
    if isCycle { return try DispatchChain.$frames.withValue(chain, operation: work) }
    return try queue.sync { try DispatchChain.$frames.withValue(chain, operation: work) }
  }
}
