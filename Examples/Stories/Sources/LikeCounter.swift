/// Where the likes of a post are kept: an actor, so each call on its own is safe.
public actor LikeStore {
  /// The likes saved.
  public private(set) var likes = 0

  /// Creates a store with no likes.
  public init() {}

  /// The likes saved now.
  public func load() -> Int { likes }

  /// Replaces the likes saved.
  public func save(_ likes: Int) { self.likes = likes }

  /// Adds one like, in one turn of the actor.
  public func increment() { likes += 1 }
}

/// What a test asks of a like counter.
public protocol Liking: Sendable {
  /// Where the likes are kept.
  var store: LikeStore { get }
  /// Adds a like.
  func like() async
}

/// Counts likes with a lost update: ``like()`` loads the count and saves it plus one, in two
/// calls. Two likes at once can both load the same count, and one of them is lost. Each
/// call is safe on its own; the pair is not.
public struct NaiveLikeCounter: Liking {
  /// Where the likes are kept.
  public let store: LikeStore

  /// Creates a counter saving to `store`.
  public init(store: LikeStore) { self.store = store }

  /// Adds a like.
  public func like() async {
    let likes = await store.load()
    await store.save(likes + 1)
  }
}

/// The fixed counter asks the store to add the like, in one call.
public struct LikeCounter: Liking {
  /// Where the likes are kept.
  public let store: LikeStore

  /// Creates a counter saving to `store`.
  public init(store: LikeStore) { self.store = store }

  /// Adds a like.
  public func like() async {
    await store.increment()
  }
}
