#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Captures what the tests of this process write to standard output and standard error
/// (`print`, `FileHandle.standardError`, C `printf`) as their output.
///
/// For the length of each test, file descriptors 1 and 2 point to an unlinked temporary
/// file; when the test ends they point back, and the file is read back as the test's
/// `outputCaptured` events, in chunks of at most 64 KiB that end at a line or character
/// boundary, so the reporters' output caps apply and memory stays flat whatever a test
/// prints. The harness's own text goes to the descriptors 1 and 2 had before
/// (``FileHandleOutput``), so the console is never captured.
///
/// Output written from another thread after its test ended reaches the terminal; output of
/// a test that crashes the process is lost with it (worker processes keep it).
final class OutputCapture: Sendable {
  private let file: Int32
  private let savedOutput: Int32
  private let savedError: Int32
  static let chunkSize = 65536

  /// Creates the capture file and saves the descriptors of standard output and error; `nil`
  /// when either fails (the tests' output then goes where it always did).
  init?() {
    var template = Array((NSTemporaryDirectory() + "/asyncharness-output-XXXXXX").utf8CString)
    let file = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    guard file >= 0 else { return nil }
    template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
    let output = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3)
    let error = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3)
    guard output >= 0, error >= 0 else {
      for descriptor in [file, output, error] where descriptor >= 0 { close(descriptor) }
      return nil
    }
    _ = fcntl(file, F_SETFD, FD_CLOEXEC)
    fflush(nil)
    StandardStreams.bufferStandardOutputByLine()
    self.file = file
    savedOutput = output
    savedError = error
    FileHandleOutput.redirect(output: output, error: error)
  }

  /// Points standard output and error at the emptied capture file.
  func begin() {
    fflush(nil)
    _ = ftruncate(file, 0)
    _ = lseek(file, 0, SEEK_SET)
    _ = dup2(file, STDOUT_FILENO)
    _ = dup2(file, STDERR_FILENO)
  }

  /// Points standard output and error back and hands what the test wrote to `emit`.
  func end(_ emit: (String) -> Void) {
    fflush(nil)
    _ = dup2(savedOutput, STDOUT_FILENO)
    _ = dup2(savedError, STDERR_FILENO)
    _ = lseek(file, 0, SEEK_SET)
    var pending: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: Self.chunkSize)
    while true {
      let count = read(file, &buffer, buffer.count)
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else { break }
      pending += buffer[..<count]
      let cut = Self.boundary(in: pending)
      if cut > 0 {
        emit(String(decoding: pending[..<cut], as: UTF8.self))
        pending.removeFirst(cut)
      }
    }
    if !pending.isEmpty { emit(String(decoding: pending, as: UTF8.self)) }
  }

  /// Stops capturing for good: the harness's text goes to standard output and error again.
  func finish() {
    FileHandleOutput.redirect(output: STDOUT_FILENO, error: STDERR_FILENO)
    for descriptor in [file, savedOutput, savedError] { close(descriptor) }
  }

  /// Where a chunk of `bytes` may end: after the last newline, or else after the last
  /// complete UTF-8 character (a character cut by the read waits for the next one).
  static func boundary(in bytes: [UInt8]) -> Int {
    if let newline = bytes.lastIndex(of: 0x0A) { return newline + 1 }
    var lead = bytes.count - 1
    while lead >= 0 && bytes[lead] & 0xC0 == 0x80 { lead -= 1 }
    guard lead >= 0 else { return bytes.count }
    let length = switch bytes[lead] {
    case 0xF0...: 4
    case 0xE0...: 3
    case 0xC0...: 2
    default: 1
    }
    return lead + length <= bytes.count ? bytes.count : lead
  }
}
