import AsyncHarness
import Synchronization

/// Uploads a file, retrying after a back-off when the server refuses: the kind of code whose
/// production delays (30 s here) make tests slow, unless time is virtual.
public final class RetryingUploader: Sendable {
  private let queue: any Dispatching
  private let backOff: Duration
  private let attempt: @Sendable (_ number: Int) -> Bool
  private let attempts = Mutex(0)

  /// An uploader whose attempts run on `queue`, `backOff` apart; `attempt` says whether
  /// attempt number N (from 1) succeeded.
  public init(queue: any Dispatching, backOff: Duration = .seconds(30), attempt: @escaping @Sendable (_ number: Int) -> Bool) {
    self.queue = queue
    self.backOff = backOff
    self.attempt = attempt
  }

  /// How many attempts were made.
  public var attemptCount: Int { attempts.withLock { $0 } }

  /// Uploads, retrying up to `limit` attempts; `completion` gets whether it succeeded.
  public func upload(limit: Int = 3, completion: @escaping @Sendable (Bool) -> Void) {
    queue.async { self.tryOnce(limit: limit, completion: completion) }
  }

  private func tryOnce(limit: Int, completion: @escaping @Sendable (Bool) -> Void) {
    let number = attempts.withLock { count in
      count += 1
      return count
    }
    if attempt(number) { return completion(true) }
    guard number < limit else { return completion(false) }
    queue.asyncAfter(backOff) { self.tryOnce(limit: limit, completion: completion) }
  }
}
