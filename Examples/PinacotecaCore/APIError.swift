import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Why the server API controller could not deliver an image.
public enum APIError: Error, Sendable, Hashable {
  /// The server answered with a status outside 200–299.
  case httpStatus(Int)
  /// The body is not the JSON object expected; the text says what was wrong.
  case badJSON(String)
  /// The JSON lacks these required fields (server names, sorted).
  case missingFields([String])
  /// The JSON maps to an image that fails validation.
  case invalidImage(ImageValidationError)
  /// The request did not complete: no connection, a timeout, a non-HTTP answer.
  case transport(URLError.Code)
}
