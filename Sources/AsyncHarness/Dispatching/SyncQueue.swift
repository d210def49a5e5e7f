/// A ``Dispatching`` queue that runs all work inline, at once, on the calling thread: tests
/// become plain Arrange, Act, Assert with no waiting.
///
/// It still tracks which queues are waiting for which, so a `sync` that would deadlock on
/// real queues is reported as an issue naming them.
public struct SyncQueue: Dispatching {
  /// The queue's identity, which ``QueueIdentity/current`` reports while its work runs.
  public let identity: QueueIdentity
  let issues: IssueSink

  /// Creates an inline queue standing for a queue with this label.
  public init(label: String) {
    self.init(identity: QueueIdentity(label: label), issues: IssueSink(record: nil))
  }

  init(identity: QueueIdentity, issues: IssueSink) {
    self.identity = identity
    self.issues = issues
  }

  /// An inline queue standing for the main queue.
  public static var main: SyncQueue { SyncQueue(identity: .main, issues: IssueSink(record: nil)) }

  /// Runs `work` on this queue, later.
  public func async(_ work: @escaping @Sendable () -> Void) {
    DispatchChain.$frames.withValue([identity], operation: work)
  }

  /// Runs `work` on this queue and waits for it.
  /// - Returns: What `work` returns.
  public func sync<T>(_ work: () throws -> T) rethrows -> T {
    try DispatchChain.$frames.withValue(DispatchChain.enter(identity, issues: issues).chain, operation: work)
  }
}
