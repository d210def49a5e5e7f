import FlyingFox
import FlyingSocks
import Foundation
import PinacotecaFixtures

/// The example image server: answers `GET` requests from ``Fixtures`` over HTTP on the
/// loopback interface.
///
/// Clients should send `Connection: close`: FlyingFox answers a reused keep-alive
/// connection tens of milliseconds late.
public final class PinacotecaServer: Sendable {
  /// The port the server listens on.
  public let port: UInt16
  private let running: Task<Void, any Error>

  private init(port: UInt16, running: Task<Void, any Error>) {
    self.port = port
    self.running = running
  }

  /// The server's root URL, `http://127.0.0.1:PORT`.
  public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

  /// Starts a server on 127.0.0.1 and returns once it listens.
  /// - Parameter port: the port, or 0 for one the system picks.
  /// - Throws: when the server cannot listen.
  public static func start(port: UInt16 = 0) async throws -> PinacotecaServer {
    let server = HTTPServer(address: try .inet(ip4: "127.0.0.1", port: port), logger: .disabled)
    await server.appendRoute("*") { request in
      let fixture = Fixtures.response(forPath: request.path)
      return HTTPResponse(statusCode: HTTPStatusCode(fixture.statusCode, phrase: ""),
                          headers: [.contentType: "application/json"], body: fixture.body)
    }
    let running = Task { try await server.run() }
    do {
      try await server.waitUntilListening()
      guard case .ip4(_, port: let boundPort)? = await server.listeningAddress else { throw ServerError.noAddress }
      return PinacotecaServer(port: boundPort, running: running)
    } catch {
      running.cancel()
      throw error
    }
  }

  /// Waits until the server stops.
  /// - Throws: the error that stopped it.
  public func waitUntilStopped() async throws {
    try await running.value
  }

  /// Why a server could not start.
  public enum ServerError: Error {
    /// The socket has no IPv4 address after listening.
    case noAddress
  }
}
