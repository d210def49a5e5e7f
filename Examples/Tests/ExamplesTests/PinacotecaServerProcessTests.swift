import Dispatch
import ExampleSupport
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `pinacoteca-server` executable as a child process: `--port 0` picks a port and
/// prints the URL; the fixtures come back over HTTP.
final class PinacotecaServerProcessTests: XCTestCase {
  private var executable: URL { builtExecutable("pinacoteca-server", for: Self.self) }

  /// Reads the child's standard output until the first full line.
  private func firstLine(of handle: FileHandle) -> String {
    var bytes = Data()
    while !bytes.contains(UInt8(ascii: "\n")) {
      let chunk = handle.availableData
      if chunk.isEmpty { break }  // the child closed its output (it exited)
      bytes.append(chunk)
    }
    return String(decoding: bytes, as: UTF8.self).components(separatedBy: "\n")[0]
  }

  /// The status code of `GET url`, waiting at most five seconds.
  private func status(of url: URL) -> Int? {
    var request = URLRequest(url: url)
    request.setValue("close", forHTTPHeaderField: "Connection")
    let answered = DispatchSemaphore(value: 0)
    let status = Locked<Int?>(nil)
    URLSession.shared.dataTask(with: request) { _, response, _ in
      status.set((response as? HTTPURLResponse)?.statusCode)
      answered.signal()
    }.resume()
    return answered.wait(timeout: .now() + 5) == .success ? status.value : nil
  }

  func testServesTheFixturesOnAnEphemeralPort() throws {
    let process = Process()
    process.executableURL = executable
    process.arguments = ["--port", "0"]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    defer {
      process.terminate()
      process.waitUntilExit()
    }
    let line = firstLine(of: output.fileHandleForReading)
    let prefix = "pinacoteca-server listening on "
    XCTAssertTrue(line.hasPrefix(prefix), line)
    let base = try XCTUnwrap(URL(string: String(line.dropFirst(prefix.count))))
    XCTAssertEqual(base.host, "127.0.0.1")
    XCTAssertNotEqual(base.port, 0)
    XCTAssertEqual(status(of: base.appendingPathComponent("images/1")), 200)
    XCTAssertEqual(status(of: base.appendingPathComponent("images/50")), 503)
    XCTAssertEqual(status(of: base.appendingPathComponent("images/999")), 404)
  }
}
