import AsyncHarness
import ExampleSupport
import Foundation
import PinacotecaCore
import PinacotecaFixtures
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The controller against the fixtures, served by a stub `URLProtocol`.
private let fixtureAPI = ServerAPIController(baseURL: URL(string: "https://pinacoteca.example")!, session: .fixtures())

/// Fetches one image through the completion API and checks the completion ran on the
/// queue it asked for.
private func fetch(_ id: Int64, from api: ServerAPIController = fixtureAPI, in t: TestContext,
                   line: Int = #line) throws -> Result<Image, APIError> {
  let queue = t.main
  let delivered = t.expectation("image \(id) delivered")
  let result = Locked<Result<Image, APIError>?>(nil)
  api.fetchImage(id: id, queue: queue) { answer in
    t.expect(queue.isCurrent, "the completion runs on the queue it was given", line: line)
    result.set(answer)
    delivered.fulfill()
  }
  try t.wait(for: delivered, line: line)
  return try t.require(result.value, line: line)
}

/// The server API controller: JSON mapping and typed errors, over a stubbed network.
let serverAPIControllerSuite = Suite("Pinacoteca.ServerAPIController") {
  Test("maps the server's JSON to an image") { t in
    t.expectEqual(try fetch(1, in: t), .success(.monaLisa))
  }

  Test("accepts an image whose year is unknown") { t in
    let image = try fetch(3, in: t).get()
    t.expectEqual(image.year, nil)
    t.expectEqual(image.title, "Untitled fragment")
  }

  Test("an unknown image is HTTP 404") { t in
    t.expectEqual(try fetch(999, in: t), .failure(.httpStatus(404)))
  }

  Test("a server error is its HTTP status") { t in
    t.expectEqual(try fetch(50, in: t), .failure(.httpStatus(503)))
  }

  Test("truncated JSON is bad JSON") { t in
    let result = try fetch(40, in: t)
    guard case .failure(.badJSON) = result else { return t.fail("expected bad JSON, got \(result)") }
  }

  Test("names the missing fields") { t in
    t.expectEqual(try fetch(41, in: t), .failure(.missingFields(["artist", "width"])))
  }

  Test("an image that fails validation is invalid") { t in
    t.expectEqual(try fetch(42, in: t), .failure(.invalidImage(.nonPositiveSize(width: 0, height: 10))))
  }

  Test("no connection is a transport error") { t in
    let offline = ServerAPIController(baseURL: URL(string: "https://pinacoteca.example")!, session: .offline())
    t.expectEqual(try fetch(1, from: offline, in: t), .failure(.transport(.notConnectedToInternet)))
  }

  Test("the async variant maps the same JSON and errors") { t async throws in
    t.expectEqual(try await fixtureAPI.fetchImage(id: 1), .monaLisa)
    do throws(APIError) {
      let image = try await fixtureAPI.fetchImage(id: 41)
      t.fail("expected missing fields, got \(image)")
    } catch {
      t.expectEqual(error, .missingFields(["artist", "width"]))
    }
  }
}
