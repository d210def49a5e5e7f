import AsyncHarness

/// Loads messages on a background queue and delivers them on a main one, greeting with
/// ``greeting`` when there are none.
///
/// Both queues are ``Dispatching`` values: the app passes real queues (`AsyncQueue`), a
/// test passes its own (`t.background`, `t.main`) or inline ones (`SyncQueue`).
public final class MessageLoader: Sendable {
  /// What the loader delivers when the source has no messages.
  public static let greeting = "hello"

  private let work: any Dispatching
  private let delivery: any Dispatching
  private let source: @Sendable () -> [String]

  /// Creates a loader.
  /// - Parameters:
  ///   - work: where the source is read.
  ///   - delivery: where results are delivered (the main queue in an app).
  ///   - source: reads the messages (a database or a server in an app).
  public init(work: any Dispatching, delivery: any Dispatching, source: @escaping @Sendable () -> [String]) {
    self.work = work
    self.delivery = delivery
    self.source = source
  }

  /// Reads the messages on the work queue, then calls `completion` on the delivery queue.
  public func load(completion: @escaping @Sendable ([String]) -> Void) {
    work.async { [self] in
      let messages = read()
      delivery.async { completion(messages) }
    }
  }

  /// Reads the messages on the work queue and hands them to `update` on the delivery
  /// queue, waiting for both: a *synchronous* dispatch chain. Called from the delivery
  /// queue itself (the main queue), this is the classic deadlock, main → background → main.
  public func loadNow(update: ([String]) -> Void) {
    work.sync {
      let messages = read()
      delivery.sync { update(messages) }
    }
  }

  private func read() -> [String] {
    let messages = source()
    return messages.isEmpty ? [Self.greeting] : messages
  }
}
