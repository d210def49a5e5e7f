import Dispatch

/// A ``Dispatching`` queue backed by a real `DispatchQueue`.
///
/// The queues a test gets under `--jitter` delay each item a little before the dispatch
/// queue gets it (``Jitter``).
public struct AsyncQueue: Dispatching {
  /// The queue work is sent to.
  public let queue: DispatchQueue
  /// The queue's identity, which ``QueueIdentity/current`` reports while its work runs.
  public let identity: QueueIdentity
  let issues: IssueSink
  /// The delays of a jittered queue (`--jitter`); `nil` sends work at once.
  let jitter: JitteredDelivery?

  /// Wraps a dispatch queue. Pass `DispatchQueue.main` to stand for the main queue.
  public init(_ queue: DispatchQueue, label: String? = nil) {
    let isMain = queue.label == DispatchQueue.main.label
    self.init(queue, identity: isMain ? .main : QueueIdentity(label: label ?? queue.label), issues: IssueSink(record: nil))
  }

  init(_ queue: DispatchQueue, identity: QueueIdentity, issues: IssueSink, jitter: JitteredDelivery? = nil) {
    self.queue = queue
    self.identity = identity
    self.issues = issues
    self.jitter = jitter
  }

  /// The main queue.
  public static var main: AsyncQueue { AsyncQueue(.main) }

  /// Runs `work` on this queue, later. (Sent by a test running side by side in a worker, it
  /// carries that test's crash notice: a crash in it names the test.)
  public func async(_ work: @escaping @Sendable () -> Void) {
    let work = CrashNotice.carrying(work)
    let (identity, queue) = (identity, queue)
    let send: @Sendable () -> Void = { queue.async { DispatchChain.$frames.withValue([identity], operation: work) } }
    if let jitter { jitter.delay(send) } else { send() }
  }

  /// Runs `work` on this queue once `delay` has passed.
  public func asyncAfter(_ delay: Duration, _ work: @escaping @Sendable () -> Void) {
    let work = CrashNotice.carrying(work)
    guard jitter == nil else { return sendAfter(delay, work) }
    let identity = identity
    queue.asyncAfter(deadline: .now() + delay.dispatchInterval) { DispatchChain.$frames.withValue([identity], operation: work) }
  }

  /// Runs `work` on this queue and waits for it.
  /// - Returns: What `work` returns.
  public func sync<T>(_ work: () throws -> T) rethrows -> T {
    let (chain, isCycle) = DispatchChain.enter(identity, issues: issues)
    if isCycle { return try DispatchChain.$frames.withValue(chain, operation: work) }
    jitter?.handAll()
    return try queue.sync { try DispatchChain.$frames.withValue(chain, operation: work) }
  }
}
