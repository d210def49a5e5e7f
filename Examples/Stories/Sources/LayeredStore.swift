import AsyncHarness
import Foundation
import Synchronization

/// A store that saves in layers, like a Core Data child context, its parent and the
/// persistent store: one ``insert(_:)`` saves three times, each save a later step on the
/// work queue, and posts ``didSave`` after each. A test that stops waiting after the
/// first save looks at data that is not on disk yet.
public final class LayeredStore: Sendable {
  /// The layers, in the order a save goes through them.
  public enum Layer: String, Sendable, CaseIterable {
    case child, parent, disk
  }

  /// Posted after each layer saved, with the store as the object and the layer's raw
  /// value under ``layerKey``.
  public static let didSave = Notification.Name("Stories.LayeredStore.didSave")
  /// The `userInfo` key of the layer that saved.
  public static let layerKey = "layer"

  private let work: any Dispatching
  private let center: NotificationCenter
  private let contents = Mutex<[Layer: [String]]>([:])

  /// Creates an empty store that saves on `work` and posts on `center`.
  public init(work: any Dispatching, center: NotificationCenter) {
    self.work = work
    self.center = center
  }

  /// What the persistent layer holds.
  public var persistedItems: [String] { contents.withLock { $0[.disk] ?? [] } }

  /// Inserts items: saved in the child layer, then the parent, then on disk.
  public func insert(_ items: [String]) {
    save(items, from: Layer.allCases[...])
  }

  private func save(_ items: [String], from layers: ArraySlice<Layer>) {
    guard let layer = layers.first else { return }
    work.async { [self] in
      contents.withLock { $0[layer, default: []] += items }
      center.post(name: Self.didSave, object: self, userInfo: [Self.layerKey: layer.rawValue])
      save(items, from: layers.dropFirst())
    }
  }
}
