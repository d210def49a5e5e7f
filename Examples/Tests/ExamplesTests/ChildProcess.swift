import Foundation
import XCTest

/// An executable SwiftPM built next to the test bundle.
func builtExecutable(_ name: String, for testCase: AnyClass) -> URL {
  // The test bundle is a directory on macOS and the build directory itself on Linux.
  let bundle = Bundle(for: testCase).bundleURL
  let directory = bundle.pathExtension == "xctest" ? bundle.deletingLastPathComponent() : bundle
  return directory.appendingPathComponent(name)
}

/// Runs a child process to its end, its standard output and error going to files (so
/// neither pipe can fill and stall it), and returns its status and both texts. The child
/// gets this process's environment plus `environment`.
func runToEnd(_ executable: URL, _ arguments: [String],
              environment: [String: String] = [:]) throws -> (status: Int32, output: String, errors: String) {
  let directory = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(UUID().uuidString)")
  try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: directory) }
  let outputURL = directory.appendingPathComponent("stdout")
  let errorsURL = directory.appendingPathComponent("stderr")
  try Data().write(to: outputURL)
  try Data().write(to: errorsURL)
  let process = Process()
  process.executableURL = executable
  process.arguments = arguments
  process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
  process.standardOutput = try FileHandle(forWritingTo: outputURL)
  process.standardError = try FileHandle(forWritingTo: errorsURL)
  try process.run()
  process.waitUntilExit()
  return (process.terminationStatus,
          try String(contentsOf: outputURL, encoding: .utf8), try String(contentsOf: errorsURL, encoding: .utf8))
}
