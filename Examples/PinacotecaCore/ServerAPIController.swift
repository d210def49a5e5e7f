import AsyncHarness
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Fetches image details: what the ``ResourceManager`` needs from the server, so tests can
/// replace the server with a test double.
public protocol ImageFetching: Sendable {
  /// Fetches the image with this id and calls `completion` once, on `queue`.
  func fetchImage(id: Int64, queue: any Dispatching,
                  completion: @escaping @Sendable (Result<Image, APIError>) -> Void)
}

/// Talks to the image server over HTTP: `GET {baseURL}/images/{id}` answers the image's JSON.
///
/// Completions arrive on a ``Dispatching`` queue rather than a `DispatchQueue`: production
/// code passes `AsyncQueue.main`, tests pass the test's `t.main` (real under most waiters,
/// inline under the synchronous one) or a queue that checks where it runs. URLSession's own
/// callback queue is never exposed to callers.
public final class ServerAPIController: ImageFetching {
  /// The server's root URL.
  public let baseURL: URL
  private let session: URLSession

  /// Creates a controller.
  /// - Parameters:
  ///   - baseURL: the server's root URL.
  ///   - session: the session requests go through; tests inject one with a stub
  ///     `URLProtocol` in its configuration.
  public init(baseURL: URL, session: URLSession) {
    self.baseURL = baseURL
    self.session = session
  }

  /// The request for one image.
  public func request(forImage id: Int64) -> URLRequest {
    var request = URLRequest(url: baseURL.appendingPathComponent("images").appendingPathComponent(String(id)))
    request.setValue("application/json", forHTTPHeaderField: "Accept")
    return request
  }

  public func fetchImage(id: Int64, queue: any Dispatching,
                         completion: @escaping @Sendable (Result<Image, APIError>) -> Void) {
    session.dataTask(with: request(forImage: id)) { data, response, error in
      let result = Self.result(data: data, response: response, error: error)
      queue.async { completion(result) }
    }.resume()
  }

  /// Fetches the image with this id.
  /// - Throws: the ``APIError`` that says why not.
  public func fetchImage(id: Int64) async throws(APIError) -> Image {
    let answer: (Data, URLResponse)
    do {
      answer = try await session.data(for: request(forImage: id))
    } catch {
      throw Self.transportError(error)
    }
    return try Self.result(data: answer.0, response: answer.1, error: nil).get()
  }

  /// Maps what URLSession delivered to an image or a typed error.
  public static func result(data: Data?, response: URLResponse?, error: (any Error)?) -> Result<Image, APIError> {
    if let error { return .failure(transportError(error)) }
    guard let http = response as? HTTPURLResponse else { return .failure(.transport(.badServerResponse)) }
    guard (200..<300).contains(http.statusCode) else { return .failure(.httpStatus(http.statusCode)) }
    return Result { () throws(APIError) in try ImageJSON.image(from: data ?? Data()) }
  }

  private static func transportError(_ error: any Error) -> APIError {
    .transport((error as? URLError)?.code ?? .unknown)
  }
}
