import AsyncHarness
import Synchronization

/// A feed of updates shared by the whole app (a singleton, a push channel): subscribers
/// get every update published until they are removed. A test that subscribes and forgets
/// to unsubscribe leaves work behind that runs during later tests.
public final class UpdateFeed: Sendable {
  private let subscribers = Mutex<[@Sendable (String) -> Void]>([])

  /// Creates a feed with no subscribers.
  public init() {}

  /// Calls `handler` with every update published from now on.
  public func subscribe(_ handler: @escaping @Sendable (String) -> Void) {
    subscribers.withLock { $0.append(handler) }
  }

  /// Removes every subscriber.
  public func removeAllSubscribers() {
    subscribers.withLock { $0.removeAll() }
  }

  /// Sends `update` to every subscriber, on `queue`.
  public func publish(_ update: String, on queue: any Dispatching) {
    let handlers = subscribers.withLock { $0 }
    queue.async {
      for handler in handlers { handler(update) }
    }
  }
}
