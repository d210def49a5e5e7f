import Foundation

/// A place in the user's source code: where an expectation was created, a wait was made,
/// or an assertion failed.
///
/// Every user-facing call that can fail takes the caller's location through defaulted
/// `fileID:filePath:line:column:` parameters, so a failure points at the test, not at the
/// harness.
public struct SourceLocation: Sendable, Hashable, Codable, CustomStringConvertible {
  /// The file's identifier, `Module/File.swift`.
  public var fileID: String
  /// The full path of the file when it was compiled.
  public var filePath: String
  /// The line, counted from 1.
  public var line: Int
  /// The column, counted from 1.
  public var column: Int

  /// Creates a location; with no arguments, the location of the call.
  public init(
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) {
    self.fileID = fileID
    self.filePath = filePath
    self.line = line
    self.column = column
  }

  /// The file's name without its directories, e.g. `LoaderTests.swift`.
  public var fileName: String {
    fileID.split(separator: "/").last.map(String.init) ?? fileID
  }

  /// The file's path relative to the directory the run started in when the file lies inside
  /// it (`Sources/LoaderSuites/main.swift`), so a terminal or an editor can open it, whatever
  /// directory a test changed to since; else its file ID (`LoaderSuites/main.swift`), which
  /// names the module and never a machine's directories.
  public var path: String {
    path(relativeTo: RunDirectory.start)
  }

  /// The file's path relative to `directory` when the file lies inside it, else its file ID.
  func path(relativeTo directory: String) -> String {
    let base = directory.hasSuffix("/") ? directory : directory + "/"
    guard filePath.hasPrefix(base), filePath.count > base.count else { return fileID }
    return String(filePath.dropFirst(base.count))
  }

  /// `path/File.swift:LINE` (see ``path``), the form used in failure messages and reports.
  public var description: String { "\(path):\(line)" }
}
