import Foundation

/// The prefix of the line a child process reports its figures on (standard error).
let childResultPrefix = "HARNESS-BENCH-RESULT"

/// What a child process reported: the seconds it measured, then its own counts.
struct ChildResult {
  var seconds: Double
  var counts: [Int]
}

/// Runs this executable again with `arguments` (a `--child` mode), its standard output
/// discarded, and returns the figures it reported, or `nil` if it reported none.
func runChild(_ arguments: [String], environment: [String: String] = [:]) -> ChildResult? {
  let process = Process()
  process.executableURL = Bundle.main.executableURL ?? URL(fileURLWithPath: "/proc/self/exe")
  process.arguments = ["--child"] + arguments
  process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
  process.standardOutput = FileHandle.nullDevice
  let errors = Pipe()
  process.standardError = errors
  do { try process.run() } catch { return nil }
  let output = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
  process.waitUntilExit()
  guard let line = output.split(separator: "\n").last(where: { $0.hasPrefix(childResultPrefix) }) else {
    return nil
  }
  let fields = line.split(separator: " ").dropFirst()
  guard let seconds = fields.first.flatMap({ Double($0) }) else { return nil }
  return ChildResult(seconds: seconds, counts: fields.dropFirst().compactMap { Int($0) })
}
