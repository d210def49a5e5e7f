import AsyncHarness
import Foundation
import Synchronization

/// Where a profile screen gets the user's name: a cache on disk (fast, maybe stale) and the
/// server (slower, fresh). Each answers on its own queue.
public struct ProfileSources: Sendable {
  /// Reads the cached name on the disk queue.
  public let cached: @Sendable (_ completion: @escaping @Sendable (String) -> Void) -> Void
  /// Fetches the fresh profile: the response arrives on the network queue and its JSON
  /// (the profile and its recent activity, a few hundred kilobytes) is decoded on the
  /// decoding queue: a millisecond or more of work, where the cache takes microseconds.
  public let fresh: @Sendable (_ completion: @escaping @Sendable (String) -> Void) -> Void

  /// Sources answering `cachedName` and a profile named `freshName` through `Dispatching`
  /// queues, as the app's disk and network layers do.
  public init(cachedName: String, freshName: String,
              disk: any Dispatching, network: any Dispatching, decoding: any Dispatching) {
    cached = { completion in disk.async { completion(cachedName) } }
    fresh = { completion in
      network.async {
        let response = Profile.response(named: freshName)  // what the server sent
        decoding.async {
          let profile = try? JSONDecoder().decode(Profile.self, from: response)
          completion(profile?.name ?? "")
        }
      }
    }
  }
}

/// The server's profile: a name and the recent activity that comes with it.
struct Profile: Codable {
  struct Activity: Codable {
    var id: Int
    var title: String
    var date: Date
  }

  var name: String
  var activity: [Activity]

  /// The JSON the server sends for `name`, with 1,000 activities.
  static func response(named name: String) -> Data {
    let activity = String(data: recentActivity, encoding: .utf8) ?? "[]"
    return Data("{\"name\":\(String(data: (try? JSONEncoder().encode(name)) ?? Data(), encoding: .utf8) ?? "\"\""),\"activity\":\(activity)}".utf8)
  }

  private static let recentActivity: Data = {
    let activity = (0..<1000).map { Activity(id: $0, title: "Viewed painting \($0)", date: Date(timeIntervalSince1970: Double($0))) }
    return (try? JSONEncoder().encode(activity)) ?? Data("[]".utf8)
  }()
}

/// The story's bug: the screen shows the cached name at once, then the server's, applying
/// each on the delivery queue as it arrives. When the cache answers *after* the server, the
/// stale name overwrites the fresh one. The cache is fast and the server takes one hop more,
/// so on real queues the cache practically always answers first, and the tests pass.
public final class NaiveProfileScreen: Sendable {
  private let sources: ProfileSources
  private let delivery: any Dispatching
  private let state = Mutex<(name: String, updates: Int)>(("", 0))
  private let changed: @Sendable () -> Void

  /// A screen showing what `sources` give, on `delivery`; `changed` runs after each update.
  public init(sources: ProfileSources, delivery: any Dispatching, changed: @escaping @Sendable () -> Void) {
    self.sources = sources
    self.delivery = delivery
    self.changed = changed
  }

  /// The name on screen.
  public var name: String { state.withLock { $0.name } }

  /// Loads the cached name, then the fresh one.
  public func load() {
    sources.cached { [self] name in delivery.async { self.show(name) } }
    sources.fresh { [self] name in delivery.async { self.show(name) } }
  }

  private func show(_ name: String) {
    state.withLock { $0 = (name, $0.updates + 1) }
    changed()
  }
}

/// The fix: once the server's name is on screen, a late cached name is ignored.
public final class ProfileScreen: Sendable {
  private let sources: ProfileSources
  private let delivery: any Dispatching
  private let state = Mutex<(name: String, isFresh: Bool)>(("", false))
  private let changed: @Sendable () -> Void

  /// A screen showing what `sources` give, on `delivery`; `changed` runs after each answer.
  public init(sources: ProfileSources, delivery: any Dispatching, changed: @escaping @Sendable () -> Void) {
    self.sources = sources
    self.delivery = delivery
    self.changed = changed
  }

  /// The name on screen.
  public var name: String { state.withLock { $0.name } }

  /// Loads the cached name, then the fresh one; the fresh one always wins.
  public func load() {
    sources.cached { [self] name in
      delivery.async {
        self.state.withLock { if !$0.isFresh { $0.name = name } }
        self.changed()
      }
    }
    sources.fresh { [self] name in
      delivery.async {
        self.state.withLock { $0 = (name, true) }
        self.changed()
      }
    }
  }
}
