/// What one line of a test bundle's worker says about the tests it runs, whichever testing
/// library runs them.
enum BundleNote: Equatable {
  /// A test began, by the name its library gives it in the worker's output.
  case started(String)
  /// The test running recorded an issue; one without a location is at the test's declaration.
  case issue(Issue)
  /// The test running printed a line.
  case output(String)
  /// The test running ended: skipped with `skipReason` when that is set, after `seconds`
  /// when the library says.
  case ended(skipReason: String?, seconds: Double?)
}

/// How a worker of one testing library is started and how its output is read.
///
/// - XCTest: `<bundle> Module.Class/a,Module.Class/b` (through `stdbuf -oL`), its standard
///   output read by ``XCTestOutput``.
/// - Swift Testing: `<bundle> --testing-library swift-testing --filter '^(id1|id2)$'
///   --no-parallel --quiet --event-stream-output-path /dev/stdout --event-stream-version 0`:
///   the event stream is written to the same pipe as the tests' output, so that a line a test
///   prints comes between its `testStarted` and `testEnded` records, in the order written.
///   `--no-parallel` runs one test at a time, so a crash is the one test started and not
///   ended, and output belongs to the test running. A line holding a record
///   (``SwiftTestingRecord/split(_:)``) is read as one; every other line is output, the
///   console lines of Swift Testing's own for an issue (on standard error, `--quiet` keeps
///   only those) included.
enum BundleOutputReader {
  case xctest(XCTestOutput, failuresRelayed: Int, outputRelayed: Int)
  case swiftTesting

  /// A reader for `library`'s output.
  init(_ library: ExistingTest.Library) {
    self = library == .xctest ? .xctest(XCTestOutput(), failuresRelayed: 0, outputRelayed: 0) : .swiftTesting
  }

  /// The library's name in messages.
  var libraryName: String {
    if case .xctest = self { "XCTest" } else { "Swift Testing" }
  }

  /// Whether the library leaves its standard output fully buffered through a pipe (XCTest
  /// does), so that the worker needs `stdbuf -oL` to keep what a dying test printed.
  var buffersOutput: Bool {
    if case .xctest = self { true } else { false }
  }

  /// The exit statuses of a worker that ran every test it found: XCTest's 0 and 1 (a
  /// failure), and Swift Testing's 69 too (no test matched the filter).
  var statusesOfACompleteRun: [Int32] {
    if case .xctest = self { [0, 1] } else { [0, 1, 69] }
  }

  /// The name the library gives `test` in its output.
  func name(of test: ExistingTest) -> String {
    guard case .xctest = self else { return test.id }
    let method = test.id.split(separator: "/", maxSplits: 1)
    return XCTestOutput.name(ofMethod: String(method.last ?? ""), inClass: String(method.first ?? ""))
  }

  /// The most bytes of test IDs one worker's list holds. The list is one argument, and Linux
  /// takes at most 128 KiB in one (`MAX_ARG_STRLEN`); Swift Testing's filter escapes each
  /// ID, which can double it.
  static let listLimit = 48 * 1024

  /// The arguments of the bundle running `tests` in order, and the variables added to its
  /// environment.
  func invocation(of tests: [ExistingTest]) -> (arguments: [String], environment: [String: String]) {
    guard case .swiftTesting = self else { return ([tests.map(\.id).joined(separator: ",")], [:]) }
    let filter = "^(" + tests.map { Self.escaped($0.id) }.joined(separator: "|") + ")$"
    return (["--testing-library", "swift-testing", "--filter", filter, "--no-parallel", "--quiet",
             "--event-stream-output-path", "/dev/stdout", "--event-stream-version", "0"], ["NO_COLOR": "1"])
  }

  /// `text` with every character a regular expression gives a meaning to escaped.
  static func escaped(_ text: String) -> String {
    String(text.flatMap { "\\^$.|?*+()[]{}".contains($0) ? ["\\", $0] : [$0] })
  }

  /// Reads one line of the worker's output; `running` is the test running, if any (XCTest
  /// names the module of a failure's file only through it).
  mutating func read(_ line: Substring, running: Runner.Step?) -> [BundleNote] {
    switch self {
    case .xctest(var parsed, var failuresRelayed, var outputRelayed):
      defer { self = .xctest(parsed, failuresRelayed: failuresRelayed, outputRelayed: outputRelayed) }
      let count = parsed.records.count
      parsed.read(line)
      guard let record = parsed.records.last else { return [] }
      if parsed.records.count > count {
        (failuresRelayed, outputRelayed) = (0, 0)
        return [.started(record.test)]
      }
      let suite = running?.suite.name ?? ""
      let module = suite.split(separator: ".").first.map(String.init) ?? suite
      var notes = record.failures[failuresRelayed...].map { BundleNote.issue(Self.issue($0, module: module)) }
        + record.output[outputRelayed...].map { BundleNote.output($0) }
      (failuresRelayed, outputRelayed) = (record.failures.count, record.output.count)
      if let outcome = record.outcome {
        notes.append(.ended(skipReason: outcome == .skipped ? record.skipReason ?? "" : nil, seconds: record.seconds))
      }
      return notes
    case .swiftTesting:
      guard let (printed, record) = SwiftTestingRecord.split(line) else { return [.output(String(line))] }
      let notes: [BundleNote] = printed.isEmpty ? [] : [.output(String(printed))]
      guard record.kind == "event", let id = record.payload.testID else { return notes }
      switch record.payload.kind {
      case "testStarted": return notes + [.started(id)]
      case "testSkipped": return notes + [.started(id), .ended(skipReason: record.payload.skipReason ?? "", seconds: 0)]
      case "issueRecorded": return notes + (record.payload.recordedIssue.map { [.issue($0)] } ?? [])
      case "testEnded": return notes + [.ended(skipReason: nil, seconds: nil)]
      default: return notes
      }
    }
  }

  /// An XCTest failure as an issue: a thrown error (no location) at the test, an assertion
  /// at its file and line.
  private static func issue(_ failure: XCTestOutput.Failure, module: String) -> Issue {
    guard let file = failure.file else { return Issue(kind: .errorThrown, message: failure.message, sourceLocation: nil) }
    let name = file.split(separator: "/").last.map(String.init) ?? file
    return Issue(kind: .expectationFailed, message: failure.message,
                 sourceLocation: SourceLocation(fileID: "\(module)/\(name)", filePath: file, line: failure.line ?? 0, column: 1))
  }
}
