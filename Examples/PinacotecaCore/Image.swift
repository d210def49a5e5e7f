import Foundation
import GRDB

/// An image of the collection: what the server tells about a work of art.
///
/// A *placeholder* holds only the id: the resource manager stores one when asked for an
/// image it does not know yet, then fills in the details from the server.
public struct Image: Codable, Sendable, Hashable, Identifiable, FetchableRecord, PersistableRecord {
  /// The server's identifier (positive).
  public var id: Int64
  /// The work's title.
  public var title: String?
  /// Who made it.
  public var artist: String?
  /// The year it was made, when known (never later than ``lastUpdated``).
  public var year: Int?
  /// Where the picture itself is (http or https).
  public var imageURL: URL?
  /// The picture's width, positive, given together with ``height``.
  public var width: Int?
  /// The picture's height, positive, given together with ``width``.
  public var height: Int?
  /// When the server last changed the details; `nil` for a placeholder.
  public var lastUpdated: Date?

  /// Creates an image.
  public init(id: Int64, title: String? = nil, artist: String? = nil, year: Int? = nil, imageURL: URL? = nil,
              width: Int? = nil, height: Int? = nil, lastUpdated: Date? = nil) {
    self.id = id
    self.title = title
    self.artist = artist
    self.year = year
    self.imageURL = imageURL
    self.width = width
    self.height = height
    self.lastUpdated = lastUpdated
  }

  /// A placeholder: only the id, no details yet.
  public static func placeholder(id: Int64) -> Image { Image(id: id) }

  /// Whether this is a placeholder still waiting for its details.
  public var isPlaceholder: Bool { lastUpdated == nil }

  /// Checks the image's invariants.
  /// - Throws: the first ``ImageValidationError`` found.
  public func validate() throws(ImageValidationError) {
    guard id > 0 else { throw .nonPositiveID(id) }
    if let title, title.trimmingCharacters(in: .whitespaces).isEmpty { throw .emptyTitle }
    if let artist, artist.trimmingCharacters(in: .whitespaces).isEmpty { throw .emptyArtist }
    switch (width, height) {
    case (nil, nil): break
    case let (width?, height?): guard width > 0 && height > 0 else { throw .nonPositiveSize(width: width, height: height) }
    default: throw .incompleteSize
    }
    if let scheme = imageURL?.scheme?.lowercased(), scheme != "http" && scheme != "https" {
      throw .unsupportedURLScheme(scheme)
    }
    if let year, let lastUpdated {
      let updatedYear = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: lastUpdated).year!
      guard year <= updatedYear else { throw .yearAfterLastUpdate(year) }
    }
  }
}

/// Why an ``Image`` is not valid.
public enum ImageValidationError: Error, Sendable, Hashable {
  /// The id is zero or negative.
  case nonPositiveID(Int64)
  /// The title is present but blank.
  case emptyTitle
  /// The artist is present but blank.
  case emptyArtist
  /// Only one of width and height is given.
  case incompleteSize
  /// The width or the height is zero or negative.
  case nonPositiveSize(width: Int, height: Int)
  /// The image URL is neither http nor https.
  case unsupportedURLScheme(String)
  /// The year the work was made is later than the year its details were last updated.
  case yearAfterLastUpdate(Int)
}
