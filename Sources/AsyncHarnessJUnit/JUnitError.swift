/// Why a JUnit report could not be written, or reports could not be merged.
public enum JUnitError: Error, Equatable, CustomStringConvertible {
  /// The report cannot be written to `path`: its directory is missing or unwritable, or the
  /// path names a directory. Thrown when the reporter is created, before any test runs.
  case destinationUnusable(path: String, reason: String)
  /// A report to merge is missing, unreadable, not well-formed, or not a JUnit report.
  case unreadableReport(path: String, reason: String)
  /// Testcases to merge appear more than once (the same `classname` and `name`): `count` of
  /// them, the first few described in `examples` with the inputs they appear in.
  case duplicateTestcases(count: Int, examples: [String])
  /// A Swift Testing event stream to convert is missing, unreadable, or not a version 0
  /// event stream; `reason` names the line when one is malformed.
  case unreadableEventStream(path: String, reason: String)
  /// An AsyncHarness event stream could not be read: missing, or a line is not an event this
  /// build reads.
  case unreadableHarnessEvents(path: String, reason: String)
  /// A libxml2 or system call failed while writing or reading `path`.
  case callFailed(call: String, path: String, reason: String?)
  /// The reporter received events in an order no runner sends.
  case unexpectedEvent(String)
  /// `--junit-profile` named no profile.
  case unknownProfile(String)
  /// Reports merged with `--expect-shards N` are not the reports of N shards of one run,
  /// each once: the reason names the input or the missing shards.
  case incompleteShards(String)

  /// The message a user reads.
  public var description: String {
    switch self {
    case .destinationUnusable(let path, let reason):
      "cannot write the JUnit report to \(path): \(reason)"
    case .unreadableReport(let path, let reason):
      "cannot read the JUnit report \(path): \(reason)"
    case .unreadableEventStream(let path, let reason):
      "cannot read the Swift Testing event stream \(path): \(reason)"
    case .unreadableHarnessEvents(let path, let reason):
      "cannot read the AsyncHarness event stream \(path): \(reason)"
    case .duplicateTestcases(let count, let examples):
      "\(count) testcase\(count == 1 ? "" : "s") would appear more than once in the merged report "
        + "(dashboards keep only the first): \(examples.joined(separator: "; "))"
        + "\(count > examples.count ? "; and \(count - examples.count) more" : ""). "
        + "Keep the last of each (keep-last) or rename the later ones (rename)"
    case .callFailed(let call, let path, let reason?):
      "\(call) failed for \(path): \(reason)"
    case .callFailed(let call, let path, nil):
      "\(call) failed for \(path)"
    case .unexpectedEvent(let message):
      "JUnit reporter: \(message)"
    case .incompleteShards(let reason):
      "the reports are not those of every shard: \(reason)"
    case .unknownProfile(let name):
      "unknown JUnit profile \"\(name)\"; profiles: \(JUnitProfile.allCases.map(\.name).joined(separator: ", "))"
    }
  }
}
