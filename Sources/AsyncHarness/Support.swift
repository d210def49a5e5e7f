import Foundation
import Synchronization

/// Writes the harness's own text (the console, warnings) to standard output or standard
/// error, without buffering surprises: to the descriptors they had before a test's output
/// was redirected (``OutputCapture``), so that text is never captured as a test's output.
struct FileHandleOutput: Sendable {
  private let isError: Bool

  static let standardOutput = FileHandleOutput(isError: false)
  static let standardError = FileHandleOutput(isError: true)

  /// Where standard output and standard error go now: 1 and 2, or their saved copies while
  /// tests' output is captured.
  private static let output = Atomic<Int32>(STDOUT_FILENO)
  private static let error = Atomic<Int32>(STDERR_FILENO)

  /// Sends the harness's text to these descriptors from now on.
  static func redirect(output: Int32, error: Int32) {
    Self.output.store(output, ordering: .sequentiallyConsistent)
    Self.error.store(error, ordering: .sequentiallyConsistent)
  }

  func write(_ text: String) {
    let target = isError ? Self.error.load(ordering: .sequentiallyConsistent) : Self.output.load(ordering: .sequentiallyConsistent)
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
      let written = bytes.withUnsafeBytes { Foundation.write(target, $0.baseAddress, $0.count) }
      if written < 0 && errno == EINTR { continue }
      guard written > 0 else { return }
      bytes = bytes.dropFirst(written)
    }
  }
}
