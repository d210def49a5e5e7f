import Foundation
import XCTest

/// A test case with a fresh directory of its own for each test, removed after it.
open class TemporaryDirectoryTestCase: XCTestCase {
  /// The test's directory.
  package private(set) var directory: URL!

  override open func setUpWithError() throws {
    directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(type(of: self))-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  }

  override open func tearDownWithError() throws {
    try? FileManager.default.removeItem(at: directory)
  }
}
