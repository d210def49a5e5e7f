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
  guard let data = FileManager.default.contents(atPath: input) else {
    let exists = FileManager.default.fileExists(atPath: input)
    throw JUnitError.unreadableHarnessEvents(path: input, reason: exists ? "it cannot be read" : "No such file or directory")
  }
  var stream = EventStream()
  var events: [Event] = []
  for (index, line) in data.split(separator: UInt8(ascii: "\n")).enumerated()
  where !line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") }) {
    do {
      events += try stream.read(line: String(decoding: line, as: UTF8.self))
    } catch {
      throw JUnitError.unreadableHarnessEvents(path: input, reason: "line \(index + 1): \(error)")
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
