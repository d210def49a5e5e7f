import Foundation

/// Maps the server's image JSON to an ``Image``.
///
/// ```json
/// { "id": 1, "title": "Mona Lisa", "artist": "Leonardo da Vinci", "year": 1503,
///   "image_url": "https://…", "width": 77, "height": 53, "last_updated": "2024-05-01T10:00:00Z" }
/// ```
/// Every field is required except `year`, which may be absent or `null`.
public enum ImageJSON {
  private struct Payload: Decodable {
    var id: Int64?
    var title: String?
    var artist: String?
    var year: Int?
    var imageURL: String?
    var width: Int?
    var height: Int?
    var lastUpdated: String?

    enum CodingKeys: String, CodingKey {
      case id, title, artist, year, width, height
      case imageURL = "image_url"
      case lastUpdated = "last_updated"
    }
  }

  /// Decodes and validates an image.
  /// - Throws: ``APIError/badJSON(_:)``, ``APIError/missingFields(_:)`` or
  ///   ``APIError/invalidImage(_:)``.
  public static func image(from data: Data) throws(APIError) -> Image {
    let payload: Payload
    do {
      payload = try JSONDecoder().decode(Payload.self, from: data)
    } catch let DecodingError.typeMismatch(_, context), let DecodingError.dataCorrupted(context) {
      let field = context.codingPath.map(\.stringValue).joined(separator: ".")
      throw .badJSON(field.isEmpty ? "not a JSON object" : "\(field) has the wrong type")
    } catch {
      throw .badJSON("\(error)")
    }
    let required: [(Payload.CodingKeys, Any?)] = [
      (.id, payload.id), (.title, payload.title), (.artist, payload.artist), (.imageURL, payload.imageURL),
      (.width, payload.width), (.height, payload.height), (.lastUpdated, payload.lastUpdated),
    ]
    let missing = required.filter { $0.1 == nil }.map(\.0.stringValue).sorted()
    guard missing.isEmpty, let id = payload.id, let urlText = payload.imageURL, let updatedText = payload.lastUpdated
    else { throw .missingFields(missing) }
    guard let imageURL = URL(string: urlText) else { throw .badJSON("image_url is not a URL") }
    guard let lastUpdated = try? Date.ISO8601FormatStyle().parse(updatedText) else {
      throw .badJSON("last_updated is not an ISO 8601 date")
    }
    let image = Image(id: id, title: payload.title, artist: payload.artist, year: payload.year, imageURL: imageURL,
                      width: payload.width, height: payload.height, lastUpdated: lastUpdated)
    do {
      try image.validate()
    } catch {
      throw .invalidImage(error)
    }
    return image
  }
}
