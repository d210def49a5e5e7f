import AsyncHarness
import Foundation

/// Why the resource manager could not update an image.
public enum ResourceError: Error, Sendable, Hashable {
  /// The server API controller failed.
  case api(APIError)
  /// The details arrived but could not be saved; the text describes the database error.
  case database(String)
}

/// Ties the store and the server together: answers at once with what it has, then updates
/// the image from the server.
public final class ResourceManager: Sendable {
  /// Posted after each save, with the manager as the object and the image id under
  /// ``imageIDKey``.
  public static let didSaveImage = Notification.Name("PinacotecaCore.ResourceManager.didSaveImage")
  /// The `userInfo` key of the saved image's id (`Int64`).
  public static let imageIDKey = "imageID"

  private let store: ImageStore
  private let api: any ImageFetching
  private let work: any Dispatching
  private let center: NotificationCenter

  /// Creates a manager.
  /// - Parameters:
  ///   - store: where images are kept.
  ///   - api: where details come from.
  ///   - work: the queue answers are saved on.
  ///   - center: where saves are posted.
  public init(store: ImageStore, api: any ImageFetching, work: any Dispatching, center: NotificationCenter = .default) {
    self.store = store
    self.api = api
    self.work = work
    self.center = center
  }

  /// Returns the stored image with this id at once, or stores and returns a placeholder
  /// holding only the id; then fetches the details, saves them and calls `updateHandler`
  /// on `queue` with the saved image or the error.
  /// - Throws: a database error when the store cannot be read or the placeholder saved.
  @discardableResult
  public func image(id: Int64, queue: any Dispatching,
                    updateHandler: @escaping @Sendable (Result<Image, ResourceError>) -> Void) throws -> Image {
    let current: Image
    if let stored = try store.image(id: id) {
      current = stored
    } else {
      current = .placeholder(id: id)
      try save(current)
    }
    api.fetchImage(id: id, queue: work) { [self] fetched in
      let outcome: Result<Image, ResourceError>
      switch fetched {
      case .success(let image):
        do {
          try save(image)
          outcome = .success(image)
        } catch {
          outcome = .failure(.database(String(describing: error)))
        }
      case .failure(let error):
        outcome = .failure(.api(error))
      }
      queue.async { updateHandler(outcome) }
    }
    return current
  }

  private func save(_ image: Image) throws {
    try store.save(image)
    center.post(name: Self.didSaveImage, object: self, userInfo: [Self.imageIDKey: image.id])
  }
}
