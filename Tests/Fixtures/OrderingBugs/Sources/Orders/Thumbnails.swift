/// Check-then-act: a cache looks a key up, and on a miss renders the value and stores it, in
/// three steps with suspensions between them. Two requests for one key can both miss and
/// both render.
public actor Renderer {
  public private(set) var renders = 0

  public init() {}

  func render(_ key: String) async -> String {
    renders += 1
    return "thumbnail of \(key)"
  }
}

/// The cache's storage.
actor ThumbnailStore {
  private var thumbnails: [String: String] = [:]

  func thumbnail(for key: String) -> String? { thumbnails[key] }
  func store(_ thumbnail: String, for key: String) { thumbnails[key] = thumbnail }
}

/// A cache of thumbnails that renders each key at most once (so it says).
public final class Thumbnails: Sendable {
  public let renderer = Renderer()
  private let store = ThumbnailStore()
  private let inFlight = InFlight()

  public init() {}

  /// The thumbnail of `key`: looked up, rendered on a miss, stored (the bug: two misses of one
  /// key both render).
  public func thumbnail(for key: String) async -> String {
    if let cached = await store.thumbnail(for: key) { return cached }
    let thumbnail = await renderer.render(key)
    await store.store(thumbnail, for: key)
    return thumbnail
  }

  /// The thumbnail of `key`, a request for a key already being rendered joining that render
  /// (the fix).
  public func thumbnailRenderedOnce(for key: String) async -> String {
    await inFlight.value(for: key) { await self.renderer.render(key) }
  }
}

/// The renders in flight, by key: the first request starts one, later ones await it.
actor InFlight {
  private var tasks: [String: Task<String, Never>] = [:]

  func value(for key: String, _ make: @escaping @Sendable () async -> String) async -> String {
    if let task = tasks[key] { return await task.value }
    let task = Task { await make() }
    tasks[key] = task
    return await task.value
  }
}
