import Foundation
import Synchronization

// Plumbing the harness's parts share: writing whole to a descriptor, and carrying a
// thread-safe value Swift does not know to be `Sendable`.

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
    // Nothing is left to tell when the harness's own streams are gone.
    try? writeWhole(Array(text.utf8), to: target, path: isError ? "standard error" : "standard output")
  }
}

/// Writes `line` with one `write` call (more only when the system writes part of it).
func writeWhole(_ line: [UInt8], to descriptor: Int32, path: String) throws {
  try line.withUnsafeBytes { try writeWhole($0, to: descriptor, path: path) }
}

/// Writes `line` with one `write` call (more only when the system writes part of it).
func writeWhole(_ line: UnsafeRawBufferPointer, to descriptor: Int32, path: String) throws {
  var bytes = line
  while !bytes.isEmpty {
    let written = write(descriptor, bytes.baseAddress, bytes.count)
    if written < 0, errno == EINTR { continue }
    guard written > 0 else { throw ReportFileError(path: path, reason: ReportDestination.systemError()) }
    bytes = UnsafeRawBufferPointer(rebasing: bytes[written...])
  }
}

/// Carries a value that is safe to share but not declared `Sendable`: a `NotificationCenter`
/// (thread-safe, but not marked so on every platform), an observer token, a dispatch timer.
struct SendableBox<Value>: @unchecked Sendable {
  let value: Value
  init(_ value: Value) { self.value = value }
}
