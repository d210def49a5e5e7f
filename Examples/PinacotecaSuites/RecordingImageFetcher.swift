import AsyncHarness
import PinacotecaCore
import Synchronization

/// A test double for the server API controller: records each fetch and answers only when
/// the test says so, on the queue the caller asked for.
public final class RecordingImageFetcher: ImageFetching {
  private struct Call {
    var id: Int64
    var queue: any Dispatching
    var completion: @Sendable (Result<Image, APIError>) -> Void
  }

  private let pending = Mutex<[Call]>([])
  private let requested = Mutex<[Int64]>([])

  /// Creates a fetcher with no calls.
  public init() {}

  /// The ids asked for, in order.
  public var requestedIDs: [Int64] { requested.withLock { $0 } }

  public func fetchImage(id: Int64, queue: any Dispatching,
                         completion: @escaping @Sendable (Result<Image, APIError>) -> Void) {
    requested.withLock { $0.append(id) }
    pending.withLock { $0.append(Call(id: id, queue: queue, completion: completion)) }
  }

  /// Answers the oldest unanswered fetch of `id` with `result`, on the queue it gave.
  /// - Returns: whether there was such a fetch.
  @discardableResult
  public func answer(_ id: Int64, with result: Result<Image, APIError>) -> Bool {
    let call = pending.withLock { calls -> Call? in
      guard let index = calls.firstIndex(where: { $0.id == id }) else { return nil }
      return calls.remove(at: index)
    }
    guard let call else { return false }
    call.queue.async { call.completion(result) }
    return true
  }
}
