import Foundation
import Testing
import XCTest

// Tests that write the environment they see, one variable a line in order, to the file
// EXISTING_TESTS_ENVIRONMENT names (with `.xctest` or `.swift-testing` after it); without it
// they pass at once. The harness's tests compare what they see under `harness test` with
// what they see under `swift test`.

/// Writes this process's environment, but `_` (the shell's last command), to the file
/// EXISTING_TESTS_ENVIRONMENT names, with `suffix` after it.
func writeTheEnvironment(_ suffix: String) throws {
  let environment = ProcessInfo.processInfo.environment
  guard let path = environment["EXISTING_TESTS_ENVIRONMENT"] else { return }
  let lines = environment.filter { $0.key != "_" }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)\n" }
  try lines.joined().write(toFile: path + suffix, atomically: true, encoding: .utf8)
}

final class EnvironmentXCTests: XCTestCase {
  func testWritesTheEnvironment() throws { try writeTheEnvironment(".xctest") }
}

@Suite struct EnvironmentSwiftTests {
  @Test func writesTheEnvironment() throws { try writeTheEnvironment(".swift-testing") }
}
