import Foundation
import PinacotecaServer

// pinacoteca-server [--port N]: serves the example fixtures on 127.0.0.1; `--port 0` (the
// default) lets the system pick a port. Prints the URL once it listens.
var port: UInt16 = 0
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
  guard argument == "--port", let value = arguments.popFirst().flatMap(UInt16.init) else {
    FileHandle.standardError.write(Data("usage: pinacoteca-server [--port N]\n".utf8))
    exit(2)
  }
  port = value
}
let server = try await PinacotecaServer.start(port: port)
print("pinacoteca-server listening on \(server.baseURL.absoluteString)")
fflush(nil)
try await server.waitUntilStopped()
