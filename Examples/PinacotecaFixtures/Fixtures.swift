import Foundation

/// One canned HTTP response of the example image server.
public struct FixtureResponse: Sendable, Equatable {
  /// The HTTP status code.
  public let statusCode: Int
  /// The response body, served as `application/json`.
  public let body: Data

  init(statusCode: Int, body: Data) {
    self.statusCode = statusCode
    self.body = body
  }
}

/// The example server's responses, read from the `Fixtures` resource directory: one file
/// per request path (`images/1.json` answers `/images/1`), and `PATH.STATUS.json` for a
/// response with another status (`images/50.503.json`). Both the stub `URLProtocol` and
/// `pinacoteca-server` answer from here, so stubbed and real HTTP serve the same bytes.
public enum Fixtures {
  /// The body of the 404 answer for a path with no fixture.
  static let notFoundBody = Data(#"{ "error": "not found" }"#.utf8)

  /// Every fixture by request path.
  public static let responses: [String: FixtureResponse] = load()

  /// The response for a request path, or a 404 when no fixture matches.
  public static func response(forPath path: String) -> FixtureResponse {
    responses[path] ?? FixtureResponse(statusCode: 404, body: notFoundBody)
  }

  private static func load() -> [String: FixtureResponse] {
    guard let root = Bundle.module.resourceURL?.appendingPathComponent("Fixtures", isDirectory: true),
          let files = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
    else { return [:] }
    var responses: [String: FixtureResponse] = [:]
    let rootPath = root.standardizedFileURL.path
    for case let file as URL in files where file.pathExtension == "json" {
      guard let body = try? Data(contentsOf: file) else { continue }
      // "images/50.503.json" → path "/images/50", status 503.
      var relative = String(file.standardizedFileURL.path.dropFirst(rootPath.count)).dropLast(".json".count)
      var status = 200
      if let dot = relative.lastIndex(of: "."), let code = Int(relative[relative.index(after: dot)...]) {
        status = code
        relative = relative[..<dot]
      }
      let path = relative.hasPrefix("/") ? String(relative) : "/" + relative
      responses[path] = FixtureResponse(statusCode: status, body: body)
    }
    return responses
  }
}
