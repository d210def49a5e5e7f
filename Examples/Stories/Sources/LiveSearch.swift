import Synchronization

/// The titles a search looks through: an actor, so every search is an `await` away.
public actor Catalog {
  private let titles: [String]

  /// Creates a catalog of `titles`.
  public init(titles: [String]) { self.titles = titles }

  /// The titles containing `query`, ignoring case.
  public func search(_ query: String) -> [String] {
    titles.filter { $0.lowercased().contains(query.lowercased()) }
  }
}

/// What a test asks of a search box.
public protocol SearchBox: Sendable {
  /// The results the screen reads.
  var results: AsyncStream<[String]> { get }
  /// Searches for `query`; the task ends when its search is done.
  @discardableResult
  func type(_ query: String) -> Task<Void, Never>
  /// Ends the stream.
  func close()
}

/// A search box whose results arrive on a stream the screen reads, with a stale-results
/// bug: each query is searched in a task of its own, and whichever search finishes last is
/// what the screen ends on. Type "night", then "starry": if the search for "night" finishes
/// second, the screen shows its results under "starry". On real executors the first search
/// almost always finishes first.
public final class NaiveLiveSearch: SearchBox {
  /// The results of each search, in the order the searches finish.
  public let results: AsyncStream<[String]>
  private let continuation: AsyncStream<[String]>.Continuation
  private let catalog: Catalog

  /// Creates a search box over `catalog`.
  public init(catalog: Catalog) {
    (results, continuation) = AsyncStream.makeStream()
    self.catalog = catalog
  }

  /// Searches for `query`; the task ends when its results are on the stream.
  @discardableResult
  public func type(_ query: String) -> Task<Void, Never> {
    Task { [catalog, continuation] in
      continuation.yield(await catalog.search(query))
    }
  }

  /// Ends the stream: the screen has read everything.
  public func close() { continuation.finish() }
}

/// The fixed search box numbers the queries and lets only the latest query's results reach
/// the stream: a search that finishes after a later query was typed is dropped.
public final class LiveSearch: SearchBox {
  /// The results of the latest query, when its search finishes.
  public let results: AsyncStream<[String]>
  private let continuation: AsyncStream<[String]>.Continuation
  private let catalog: Catalog
  private let latest = Mutex(0)

  /// Creates a search box over `catalog`.
  public init(catalog: Catalog) {
    (results, continuation) = AsyncStream.makeStream()
    self.catalog = catalog
  }

  /// Searches for `query`; the task ends when its results are on the stream or dropped.
  @discardableResult
  public func type(_ query: String) -> Task<Void, Never> {
    let number = latest.withLock { latest in
      latest += 1
      return latest
    }
    return Task { [self] in
      let found = await catalog.search(query)
      latest.withLock { latest in
        if latest == number { continuation.yield(found) }
      }
    }
  }

  /// Ends the stream: the screen has read everything.
  public func close() { continuation.finish() }
}
