import CoreFoundation
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Checks a report file's path before any test runs, so that a run never ends with its report
/// lost: shared by the JUnit and JSON Lines reporters and `HarnessMain`.
package enum ReportDestination {
  /// Why a report cannot be written to `path`, or nil when it can: the path ends in `/` or
  /// names a directory; its directory is missing, not a directory, or cannot hold a new file
  /// (checked by creating and removing one); or its file name, plus the `stagingBytes` a
  /// temporary file beside it adds, is longer than the file system allows. Creates nothing
  /// that stays, and never touches `path` itself.
  package static func problem(with path: String, stagingBytes: Int = 0) -> String? {
    guard !path.isEmpty else { return "the path is empty" }
    guard !path.hasSuffix("/") else { return "the path ends with /, so it names a directory, not a file" }
    let url = URL(fileURLWithPath: path)
    let directory = url.deletingLastPathComponent().path
    if isDirectory(path) { return "it is a directory" }
    var info = stat()
    guard stat(directory, &info) == 0 else {
      return errno == ENOENT ? "the directory \(directory) does not exist" : "\(directory): \(systemError())"
    }
    guard info.st_mode & S_IFMT == S_IFDIR else { return "\(directory) is not a directory" }
    let nameBytes = url.lastPathComponent.utf8.count
    let nameMax = pathconf(directory, Int32(_PC_NAME_MAX))
    if nameMax > 0, nameBytes + stagingBytes > nameMax {
      let staging = stagingBytes > 0 ? " (\(nameMax - stagingBytes) with the \(stagingBytes) bytes its temporary file adds)" : ""
      return "the file name is too long: \(nameBytes) bytes, at most \(nameMax)\(staging) in \(directory)"
    }
    let probe = "\(directory)/.asyncharness-probe-\(UUID().uuidString)"
    let descriptor = open(probe, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { return "cannot create a file in \(directory): \(systemError())" }
    close(descriptor)
    unlink(probe)
    return nil
  }

  /// The bytes the temporary file of ``replace(_:with:)`` adds to a report's file name
  /// (`.NAME.tmp-XXXXXX`): what ``problem(with:stagingBytes:)`` allows for.
  package static let temporaryNameBytes = ".".utf8.count + ".tmp-XXXXXX".utf8.count

  /// Writes `bytes` to `path` atomically: to a new temporary file beside it
  /// (`.NAME.tmp-XXXXXX`), then renamed onto `path`, so a reader sees the old file or the
  /// whole new one, never part of it. The temporary file is removed when anything fails.
  /// - Throws: ``ReportFileError`` naming the `report` (as its message says it), `path` and
  ///   why it failed.
  package static func replace(_ path: String, report: String, with bytes: UnsafeBufferPointer<UInt8>) throws {
    let url = URL(fileURLWithPath: path)
    let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).tmp-XXXXXX").path
    var template = Array(temporary.utf8CString)
    let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    guard descriptor >= 0 else {
      throw ReportFileError(path: path, reason: "cannot create \(temporary): \(systemError())", report: report)
    }
    let staged = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    var writeError: ReportFileError?
    do {
      try writeWhole(UnsafeRawBufferPointer(bytes), to: descriptor, path: path)
    } catch {
      writeError = ReportFileError(path: path, reason: (error as? ReportFileError)?.reason ?? "\(error)", report: report)
    }
    _ = fchmod(descriptor, 0o644)  // mkstemp's 0600 would keep the report from others
    let closed = close(descriptor) == 0
    if writeError == nil, closed, rename(staged, path) == 0 { return }
    let reason = systemError()
    unlink(staged)
    throw writeError ?? ReportFileError(path: path, reason: closed ? "rename: \(reason)" : reason, report: report)
  }

  /// Whether `path` names an existing directory.
  package static func isDirectory(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
  }

  /// The message of the last failed system call.
  package static func systemError() -> String {
    String(cString: strerror(errno))
  }
}
