import Foundation
import Synchronization

/// A view model that counts a notification, either in the observer itself or through a
/// `Task`, and posts ``didUpdate`` after each change.
public final class NotificationCounter: Sendable {
  /// How the counter reacts to a notification.
  public enum Delivery: Sendable {
    /// In the observer, before `post` returns: a test needs no wait.
    case synchronous
    /// In a `Task` the observer starts: the count changes later, so a test must wait.
    case task
  }

  /// Posted on the counter's center after each change, with the counter as the object.
  public static let didUpdate = Notification.Name("Stories.NotificationCounter.didUpdate")

  /// Observer tokens are not `Sendable`; this one is only handed back to the center that
  /// made it, whose methods are thread-safe.
  private struct Token: @unchecked Sendable {
    let observer: any NSObjectProtocol
  }

  private let center: NotificationCenter
  private let count = Mutex(0)
  private let token = Mutex<Token?>(nil)

  /// Starts counting the notifications named `name` posted on `center`.
  public init(counting name: Notification.Name, on center: NotificationCenter, delivery: Delivery) {
    self.center = center
    let observer = center.addObserver(forName: name, object: nil, queue: nil) { [weak self] _ in
      guard let self else { return }
      switch delivery {
      case .synchronous: increment()
      case .task: Task { self.increment() }
      }
    }
    token.withLock { $0 = Token(observer: observer) }
  }

  deinit {
    if let token = token.withLock({ $0 }) { center.removeObserver(token.observer) }
  }

  /// How many notifications were counted so far.
  public var value: Int { count.withLock { $0 } }

  private func increment() {
    count.withLock { $0 += 1 }
    center.post(name: Self.didUpdate, object: self)
  }
}
