import Dispatch
import Synchronization

/// Preferences saved in the background: each save is written by a block on a Dispatch queue.
/// The bug writes on a concurrent global queue, where two saves may be written in either order,
/// so the last one saved may not be the one kept; the fix writes on a serial queue of its own,
/// in the order saved.
public final class Preferences: Sendable {
  private let theme = Mutex("system")
  private let queue: DispatchQueue
  private let writes = DispatchGroup()

  /// Preferences written on a global queue (the bug), or on a serial queue of their own.
  public init(writesInOrder: Bool = false) {
    queue = writesInOrder ? DispatchQueue(label: "preferences.writes") : DispatchQueue.global()
  }

  /// Saves the theme, in the background.
  public func save(theme newTheme: String) {
    queue.async(group: writes) { self.theme.withLock { $0 = newTheme } }
  }

  /// Calls `completion` on a global queue once every save so far was written.
  public func whenWritten(_ completion: @escaping @Sendable () -> Void) {
    writes.notify(queue: .global(), execute: completion)
  }

  /// The theme as written so far.
  public var savedTheme: String { theme.withLock { $0 } }
}

/// A lookup that asks its cache and the network at once, each answering on a Dispatch queue
/// of its own, and hands back the first answer. The cache holds what the user edited last,
/// so its answer must win: the bug takes whichever answer comes first; the fix asks the
/// network only when the cache has nothing.
public final class Lookup: Sendable {
  private let cached: String?
  private let cacheQueue = DispatchQueue(label: "lookup.cache")
  private let networkQueue = DispatchQueue(label: "lookup.network")
  private let askingCacheFirst: Bool

  /// A lookup whose cache holds `cached`, which asks both at once (the bug) or the cache first.
  public init(cached: String?, askingCacheFirst: Bool = false) {
    self.cached = cached
    self.askingCacheFirst = askingCacheFirst
  }

  /// Calls `completion` once, with the first answer.
  public func value(for key: String, completion: @escaping @Sendable (String) -> Void) {
    let answered = Mutex(false)
    let answer: @Sendable (String) -> Void = { value in
      let first = answered.withLock { answered in
        defer { answered = true }
        return !answered
      }
      if first { completion(value) }
    }
    let network: @Sendable () -> Void = { [networkQueue] in networkQueue.async { answer("\(key) from the network") } }
    if askingCacheFirst {
      cacheQueue.async { [cached] in
        if let cached { answer(cached) } else { network() }
      }
    } else {
      cacheQueue.async { [cached] in if let cached { answer(cached) } }
      network()
    }
  }
}
