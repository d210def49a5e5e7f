import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `URLProtocol` that answers every request from ``Fixtures``, without a network.
///
/// `URLProtocol.registerClass` has no effect on Linux: use it through
/// ``Foundation/URLSession/fixtures()``, which installs it in the session's configuration.
public final class FixtureURLProtocol: URLProtocol {
  override public class func canInit(with request: URLRequest) -> Bool { true }
  override public class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

  override public func startLoading() {
    guard let url = request.url else {
      client?.urlProtocol(self, didFailWithError: URLError(.badURL))
      return
    }
    let fixture = Fixtures.response(forPath: url.path)
    let response = HTTPURLResponse(url: url, statusCode: fixture.statusCode, httpVersion: "HTTP/1.1",
                                   headerFields: ["Content-Type": "application/json"])!
    client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
    client?.urlProtocol(self, didLoad: fixture.body)
    client?.urlProtocolDidFinishLoading(self)
  }

  override public func stopLoading() {}
}

/// A `URLProtocol` that fails every request as a transport error (no connection).
public final class OfflineURLProtocol: URLProtocol {
  override public class func canInit(with request: URLRequest) -> Bool { true }
  override public class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

  override public func startLoading() {
    client?.urlProtocol(self, didFailWithError: URLError(.notConnectedToInternet))
  }

  override public func stopLoading() {}
}

extension URLSession {
  /// A session whose every request is answered from ``Fixtures``.
  public static func fixtures() -> URLSession { stubbed(by: FixtureURLProtocol.self) }

  /// A session whose every request fails with `URLError.notConnectedToInternet`.
  public static func offline() -> URLSession { stubbed(by: OfflineURLProtocol.self) }

  private static func stubbed(by stub: URLProtocol.Type) -> URLSession {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.protocolClasses = [stub]
    return URLSession(configuration: configuration)
  }
}
