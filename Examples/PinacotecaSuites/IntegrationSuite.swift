import AsyncHarness
import ExampleSupport
import Foundation
import PinacotecaCore
import PinacotecaServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The in-process `pinacoteca-server`, started on an ephemeral port on first use and kept
/// for the rest of the process.
private actor LoopbackServer {
  static let shared = LoopbackServer()
  private var server: PinacotecaServer?

  /// A controller talking to the server over real HTTP on 127.0.0.1.
  func api() async throws -> ServerAPIController {
    let server: PinacotecaServer
    if let running = self.server {
      server = running
    } else {
      server = try await PinacotecaServer.start()
      self.server = server
    }
    return ServerAPIController(baseURL: server.baseURL, session: Self.session)
  }

  /// `Connection: close` on every request: FlyingFox answers reused connections late.
  private static let session: URLSession = {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.httpAdditionalHeaders = ["Connection": "close"]
    return URLSession(configuration: configuration)
  }()
}

/// The resource manager against the real server over loopback HTTP.
let integrationSuite = Suite("Pinacoteca.Integration") {
  Test("fetches a new image from pinacoteca-server and saves it") { t async throws in
    let store = try ImageStore.inMemory()
    let manager = ResourceManager(store: store, api: try await LoopbackServer.shared.api(), work: t.background)
    let saved = t.expectation(forNotification: ResourceManager.didSaveImage, object: manager, count: 2)
    let updated = t.expectation("update handler called")
    let result = Locked<Result<Image, ResourceError>?>(nil)
    let first = try manager.image(id: 2, queue: t.main) { answer in
      result.set(answer)
      updated.fulfill()
    }
    t.expect(first.isPlaceholder, "a new image starts as a placeholder")
    try await t.wait(for: [saved, updated], timeout: .seconds(5))
    let image = try t.require(try result.value?.get())
    t.expectEqual(image.title, "The Starry Night")
    t.expectEqual(try store.image(id: 2), image)
  }

  Test("an unknown image comes back as HTTP 404 and stays a placeholder") { t async throws in
    let store = try ImageStore.inMemory()
    let manager = ResourceManager(store: store, api: try await LoopbackServer.shared.api(), work: t.background)
    let updated = t.expectation("update handler called")
    let result = Locked<Result<Image, ResourceError>?>(nil)
    try manager.image(id: 404, queue: t.main) { answer in
      result.set(answer)
      updated.fulfill()
    }
    try await t.wait(for: updated, timeout: .seconds(5))
    t.expectEqual(result.value, .failure(.api(.httpStatus(404))))
    t.expectEqual(try store.image(id: 404), .placeholder(id: 404))
  }

  Test("the async API over HTTP") { t async throws in
    t.expectEqual(try await LoopbackServer.shared.api().fetchImage(id: 1), .monaLisa)
  }
}
