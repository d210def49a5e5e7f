import Foundation
import PinacotecaCore
import PinacotecaFixtures
import PinacotecaSuites
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class ImageJSONTests: XCTestCase {
  private func map(_ json: String) -> Result<Image, APIError> {
    Result { () throws(APIError) in try ImageJSON.image(from: Data(json.utf8)) }
  }

  private func mapFixture(_ path: String) -> Result<Image, APIError> {
    Result { () throws(APIError) in try ImageJSON.image(from: Fixtures.response(forPath: path).body) }
  }

  func testMapsEveryField() {
    XCTAssertEqual(mapFixture("/images/1"), .success(.monaLisa))
  }

  func testYearMayBeNullOrAbsent() throws {
    XCTAssertNil(try mapFixture("/images/3").get().year)
    let withoutYear = #"{"id": 8, "title": "T", "artist": "A", "image_url": "https://x.example/a.jpg", "width": 1, "height": 2, "last_updated": "2020-01-01T00:00:00Z"}"#
    XCTAssertNil(try map(withoutYear).get().year)
  }

  func testErrors() {
    XCTAssertEqual(mapFixture("/images/40").badJSONOnly, .failure(.badJSON("")))
    XCTAssertEqual(mapFixture("/images/41"), .failure(.missingFields(["artist", "width"])))
    XCTAssertEqual(mapFixture("/images/42"), .failure(.invalidImage(.nonPositiveSize(width: 0, height: 10))))
    XCTAssertEqual(map("[]"), .failure(.badJSON("not a JSON object")))
    XCTAssertEqual(map(#"{"id": "one"}"#), .failure(.badJSON("id has the wrong type")))
    XCTAssertEqual(map("{}"), .failure(.missingFields(["artist", "height", "id", "image_url", "last_updated", "title", "width"])))
    let badDate = #"{"id": 8, "title": "T", "artist": "A", "image_url": "https://x.example/a.jpg", "width": 1, "height": 2, "last_updated": "yesterday"}"#
    XCTAssertEqual(map(badDate), .failure(.badJSON("last_updated is not an ISO 8601 date")))
  }
}

private extension Result where Failure == APIError {
  /// Bad JSON with any message becomes bad JSON with an empty one, to compare the case only.
  var badJSONOnly: Self {
    if case .failure(.badJSON) = self { return .failure(.badJSON("")) }
    return self
  }
}

final class ServerAPIErrorMappingTests: XCTestCase {
  private let url = URL(string: "https://pinacoteca.example/images/1")!

  private func http(_ status: Int) -> HTTPURLResponse {
    HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: nil)!
  }

  func testMapsWhatURLSessionDelivers() {
    let body = Fixtures.response(forPath: "/images/1").body
    XCTAssertEqual(ServerAPIController.result(data: body, response: http(200), error: nil), .success(.monaLisa))
    XCTAssertEqual(ServerAPIController.result(data: body, response: http(500), error: nil), .failure(.httpStatus(500)))
    XCTAssertEqual(ServerAPIController.result(data: body, response: http(304), error: nil), .failure(.httpStatus(304)))
    XCTAssertEqual(ServerAPIController.result(data: nil, response: nil, error: URLError(.timedOut)),
                   .failure(.transport(.timedOut)))
    XCTAssertEqual(ServerAPIController.result(data: nil, response: nil, error: CocoaError(.fileNoSuchFile)),
                   .failure(.transport(.unknown)))
    let notHTTP = URLResponse(url: url, mimeType: nil, expectedContentLength: 0, textEncodingName: nil)
    XCTAssertEqual(ServerAPIController.result(data: body, response: notHTTP, error: nil),
                   .failure(.transport(.badServerResponse)))
    XCTAssertEqual(ServerAPIController.result(data: nil, response: http(200), error: nil).badJSONOnly,
                   .failure(.badJSON("")))
  }

  func testBuildsTheImageRequest() {
    let api = ServerAPIController(baseURL: URL(string: "http://127.0.0.1:8080")!, session: .fixtures())
    XCTAssertEqual(api.request(forImage: 42).url?.absoluteString, "http://127.0.0.1:8080/images/42")
  }

  func testTheFixturesCoverEveryCase() {
    XCTAssertEqual(Set(Fixtures.responses.keys),
                   ["/images/1", "/images/2", "/images/3", "/images/40", "/images/41", "/images/42", "/images/50"])
    XCTAssertEqual(Fixtures.response(forPath: "/images/50").statusCode, 503)
    XCTAssertEqual(Fixtures.response(forPath: "/images/1").statusCode, 200)
    XCTAssertEqual(Fixtures.response(forPath: "/nowhere").statusCode, 404)
  }
}
