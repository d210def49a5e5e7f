import Foundation

/// Writes every ``Event`` as one JSON object a line (schema ``Event/schemaVersion``), for
/// tools and worker processes. Keys are sorted and dates are ISO 8601, so the stream is
/// stable and diffable.
public final class JSONLinesReporter: Reporter {
  private let write: (String) -> Void
  private let close: () throws -> Void
  private let encoder: JSONEncoder = {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .iso8601
    return encoder
  }()

  /// Creates a reporter writing lines through `write`.
  public init(write: @escaping (String) -> Void) {
    self.write = write
    self.close = {}
  }

  /// Creates a reporter writing to a new file at `path`.
  /// - Throws: ``ReportFileError`` when the file cannot be created (a missing directory,
  ///   no permission), before any test runs.
  public init(path: String) throws {
    guard FileManager.default.createFile(atPath: path, contents: nil),
          let handle = FileHandle(forWritingAtPath: path) else {
      throw ReportFileError(path: path)
    }
    self.write = { handle.write(Data($0.utf8)) }
    self.close = { try handle.close() }
  }

  public func handle(_ event: Event) throws {
    write(String(decoding: try encoder.encode(event), as: UTF8.self) + "\n")
  }

  public func finish() throws {
    try close()
  }

  /// Reads one line of the stream back into an event.
  /// - Throws: `DecodingError` when the line is not an event.
  public static func decode(line: String) throws -> Event {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .iso8601
    return try decoder.decode(Event.self, from: Data(line.utf8))
  }
}

/// A report file that could not be created.
public struct ReportFileError: Error, Equatable, CustomStringConvertible {
  /// The path that was asked for.
  public var path: String

  /// Creates the error.
  public init(path: String) { self.path = path }

  public var description: String {
    let directory = (path as NSString).deletingLastPathComponent
    var isDirectory: ObjCBool = false
    if !directory.isEmpty && !(FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) && isDirectory.boolValue) {
      return "cannot write report \(path): directory \(directory) does not exist"
    }
    return "cannot write report \(path): the file cannot be created there"
  }
}
