import Foundation

/// Writes text to a standard stream without buffering surprises.
struct FileHandleOutput: Sendable {
  let handle: FileHandle

  static let standardOutput = FileHandleOutput(handle: .standardOutput)
  static let standardError = FileHandleOutput(handle: .standardError)

  func write(_ text: String) {
    handle.write(Data(text.utf8))
  }
}
