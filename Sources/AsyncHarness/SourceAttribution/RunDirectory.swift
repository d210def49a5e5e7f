import Foundation

/// The directory the run started in, read once before any test runs: report paths and the
/// locations in messages are relative to it, whatever directory a test changes to later. A
/// worker process starts in its parent's directory (the parent never runs test code), so
/// both resolve paths alike.
package enum RunDirectory {
  /// The working directory when this was first read (``HarnessMain`` and ``Runner`` read it
  /// before any test runs).
  package static let start = FileManager.default.currentDirectoryPath

  /// `path`, made absolute against ``start`` when it is relative.
  package static func absolute(_ path: String) -> String {
    guard !path.hasPrefix("/") else { return path }
    return start.hasSuffix("/") ? start + path : start + "/" + path
  }
}
