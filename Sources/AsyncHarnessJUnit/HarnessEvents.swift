import AsyncHarness
import Foundation

/// Converts an AsyncHarness event stream (`--json PATH`, JSON Lines) into a JUnit report,
/// through ``JUnitReporter``: the report the run itself would have written with `--junit`.
///
/// The stream may be of any schema version this build reads (1, 2 or 3): it is read with
/// `EventStream`, so a file an earlier build wrote gives the same report as the run that wrote
/// it. A stream cut short (its run crashed) gives the suites and tests it has.
///
/// ```swift
/// try convertHarnessEvents(".build/events.jsonl", toJUnit: ".build/junit.xml")
/// ```
///
/// - Parameters:
///   - input: The event stream.
///   - output: The report to write.
///   - profile: The attributes written beyond the standard profile.
/// - Returns: The counts of the stream's `runEnded`, or of its ended tests when it has none.
/// - Throws: ``JUnitError/unreadableHarnessEvents(path:reason:)`` when `input` is missing or a
///   line is not an event this build reads (naming the line and why); a ``JUnitError`` when
///   `output` cannot be written. Nothing is written then.
@discardableResult
public func convertHarnessEvents(_ input: String, toJUnit output: String, profile: JUnitProfile = .standard) throws
  -> Summary
{
  var stream = EventStream()
  var events: [Event] = []
  try forEachLine(of: input, unreadable: JUnitError.unreadableHarnessEvents) { number, line in
    do {
      events += try stream.read(line: String(decoding: line, as: UTF8.self))
    } catch {
      throw JUnitError.unreadableHarnessEvents(path: input, reason: "line \(number): \(error)")
    }
  }
  let reporter = try JUnitReporter(path: output, profile: profile)
  var summary = Summary()
  for event in events {
    try reporter.handle(event)
    if case .testEnded(_, let end) = event.kind { summary.count(end.verdict) }
    if case .runEnded(let total, _) = event.kind { summary = total }
  }
  try reporter.finish()
  return summary
}

/// Calls `body` with each line of the JSON Lines file at `path` that is not blank, and its
/// line number in the file, from 1: the one reading of a stream file of both converters.
/// - Throws: `unreadable(path, reason)` when the file is missing or cannot be read; what
///   `body` throws.
func forEachLine(of path: String, unreadable: (String, String) -> JUnitError,
                 _ body: (Int, ArraySlice<UInt8>) throws -> Void) throws {
  guard let data = FileManager.default.contents(atPath: path) else {
    throw unreadable(path, FileManager.default.fileExists(atPath: path) ? "it cannot be read" : "No such file or directory")
  }
  let bytes = [UInt8](data)
  for (index, line) in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated()
  where !line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") }) {
    try body(index + 1, line)
  }
}
