import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The threads and running child processes of this process, read from `/proc` (Linux; none
/// elsewhere): what a worker's leak check (``LeakCheck``) reports as a test's leftovers. (A
/// test bundle's preloaded library reads the same files for itself: it is compiled apart,
/// with none of AsyncHarness.)
enum ProcessChildren {
  /// The threads of this process now, by ID.
  static func threads() -> [Int32] {
    guard let directory = opendir("/proc/self/task") else { return [] }
    defer { closedir(directory) }
    var ids: [Int32] = []
    while let entry = readdir(directory) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
      if let id = Int32(name) { ids.append(id) }
    }
    return ids
  }

  /// The children of this process that have not exited: those of each of `threads`.
  static func running(threads: [Int32]) -> [Int32] {
    threads.flatMap { thread in
      ((try? String(contentsOfFile: "/proc/self/task/\(thread)/children", encoding: .utf8)) ?? "")
        .split(separator: " ").compactMap { Int32($0) }
    }.filter(isRunning)
  }

  /// `PID (command line)`, as a leak is reported.
  static func described(_ process: Int32) -> String {
    "\(process) (\(command(of: process)))"
  }

  /// Whether a process has not exited (it is no zombie).
  private static func isRunning(_ process: Int32) -> Bool {
    let stat = (try? String(contentsOfFile: "/proc/\(process)/stat", encoding: .utf8)) ?? ""
    guard let state = stat.split(separator: ")").last?.split(separator: " ").first else { return false }
    return state != "Z" && state != "X"
  }

  /// A process's command line, its arguments joined by spaces.
  private static func command(of process: Int32) -> String {
    let data = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(process)/cmdline"))) ?? Data()
    let command = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }.joined(separator: " ")
    return command.isEmpty ? "unknown command" : command
  }
}
