import Foundation
import Synchronization

/// What the last run of a suites executable ran, for `--rerun-failed`: the flags it was given
/// (with the seeds `--shuffle` and `--jitter` drew) and how each test ended. Every run of
/// `HarnessMain.run` writes it when the run ends (also when interrupted), atomically, to
/// `.build/harness/EXECUTABLE/last-run.json` in the working directory, one file for each
/// suites executable:
///
/// ```json
/// {"arguments":["--waiter","semaphore"],"executable":"LoaderSuites","suites":[{"seconds":0.25,
///  "suite":"Loader","waiter":"semaphore"}],"tests":[{"id":"Loader/loads","repetition":1,
///  "seconds":0.25,"verdict":"failed","waiter":"semaphore"}],"version":1}
/// ```
///
/// `tests` has each test's last attempt under each waiter and repetition, in the order they
/// ended; `id` is the test's ID as `--only` reads it, `seconds` its attempts' durations added
/// up. `outside`, only when the run had failures outside every test, holds the tests they
/// name: those of the suite where each happened, and its suspects. `suites` has each suite's
/// seconds from its start to its end. The durations balance the next run's lanes
/// (``durations``, ``LaneBalance``); a record without them reads as one that timed nothing.
struct RunRecord: Equatable {
  /// How one test ended.
  struct Ended: Equatable {
    var id: TestPath
    var waiter: String
    var repetition: Int
    var verdict: Verdict
    /// Its attempts' durations added up, when recorded.
    var seconds: Double?
  }

  /// How long a suite ran under one waiter (or library), from its start to its end.
  struct SuiteTime: Equatable {
    var suite: String
    var waiter: String
    var seconds: Double
  }

  /// The version of the file's layout.
  static let version = 1
  /// The flags of the run, as it parsed them.
  var arguments: [String]
  /// Each test's last attempt, in the order they ended.
  var tests: [Ended]
  /// The tests the run's failures outside every test name, in the order they were found.
  var outside: [TestPath] = []
  /// Each suite's time, in the order the suites ended.
  var suites: [SuiteTime] = []

  /// The recorded durations: each test's and each suite's seconds, added up over waiters and
  /// repetitions.
  var durations: RecordedDurations {
    var durations = RecordedDurations()
    for test in tests {
      if let seconds = test.seconds { durations.tests[test.id, default: 0] += seconds }
    }
    for suite in suites { durations.suites[suite.suite, default: 0] += suite.seconds }
    return durations
  }

  /// The file of `executable`'s last run, relative to the working directory.
  static func path(of executable: String) -> String {
    ".build/harness/\(executable)/last-run.json"
  }

  /// The tests that failed or errored (under any waiter or repetition), in the order they
  /// ended, then those the failures outside every test name: each once.
  var failed: [TestPath] {
    var seen: Set<TestPath> = []
    return (tests.filter { $0.verdict == .failed || $0.verdict == .errored }.map(\.id) + outside)
      .filter { seen.insert($0).inserted }
  }

  /// Writes the record to `path` atomically, creating its directories.
  /// - Throws: the error of creating a directory, or ``ReportFileError``.
  func write(to path: String, executable: String) throws {
    try FileManager.default.createDirectory(at: URL(fileURLWithPath: path).deletingLastPathComponent(),
                                            withIntermediateDirectories: true)
    var json = JSONText()
    json.object { json in
      json.field("arguments") { $0.array(arguments) { $0.string($1) } }
      json.field("executable", executable)
      if !outside.isEmpty { json.field("outside") { $0.array(outside) { $0.string($1.description) } } }
      json.field("suites") { json in
        json.array(suites) { json, suite in
          json.object { json in
            json.field("seconds", suite.seconds)
            json.field("suite", suite.suite)
            json.field("waiter", suite.waiter)
          }
        }
      }
      json.field("tests") { json in
        json.array(tests) { json, test in
          json.object { json in
            json.field("id", test.id.description)
            json.field("repetition", test.repetition)
            if let seconds = test.seconds { json.field("seconds", seconds) }
            json.field("verdict", test.verdict.rawValue)
            json.field("waiter", test.waiter)
          }
        }
      }
      json.field("version", Self.version)
    }
    json.newline()
    try json.withUnsafeBytes { try ReportDestination.replace(path, report: "the run's record", with: $0) }
  }

  /// Reads the record at `path`; `nil` when there is no file.
  /// - Throws: ``EventDecodingError`` when the file is not a record this build reads.
  static func read(from path: String) throws -> RunRecord? {
    guard let data = FileManager.default.contents(atPath: path) else { return nil }
    guard let value = JSONValue.parse(data) else { throw EventDecodingError(reason: "not JSON") }
    let json = try JSONFields(value)
    let version: Int = try json.number("version")
    guard version == Self.version else {
      throw EventDecodingError(reason: "record version \(version); this build reads version \(Self.version)")
    }
    let arguments = try json.array("arguments") { value, path in
      guard case .string(let argument) = value else { throw EventDecodingError.wrongType(path) }
      return argument
    }
    let tests = try json.array("tests") { value, path in
      let test = try JSONFields(value, path: path)
      return Ended(id: try TestPath(parsing: try test.string("id")), waiter: try test.string("waiter"),
                   repetition: try test.number("repetition"), verdict: try test.raw("verdict"),
                   seconds: try test.optionalNumber("seconds"))
    }
    var suites: [SuiteTime] = []
    if json.optional("suites") != nil {
      suites = try json.array("suites") { value, path in
        let suite = try JSONFields(value, path: path)
        return SuiteTime(suite: try suite.string("suite"), waiter: try suite.string("waiter"),
                         seconds: try suite.number("seconds"))
      }
    }
    var outside: [TestPath] = []
    if json.optional("outside") != nil {
      outside = try json.array("outside") { value, path -> TestPath in
        guard case .string(let id) = value else { throw EventDecodingError.wrongType(path) }
        return try TestPath(parsing: id)
      }
    }
    return RunRecord(arguments: arguments, tests: tests, outside: outside, suites: suites)
  }

  /// The flags of a rerun of the failed tests: this run's, without its selection (`--only`,
  /// `--only-from`, `--filter`), then the flags given now (without `--rerun-failed`), which
  /// win over this run's (the parser keeps an option's last value), then an `--only` for
  /// each failed test.
  func rerunArguments(given: [String]) -> [String] {
    let selection: Set<String> = ["--only", "--only-from", "--filter"]
    var kept: [String] = []
    var index = arguments.startIndex
    while index < arguments.endIndex {
      let argument = arguments[index]
      index += 1
      if selection.contains(argument) {
        index += 1  // and its value
      } else if !selection.contains(where: { argument.hasPrefix("\($0)=") }) {
        kept.append(argument)
      }
    }
    return kept + given.filter { $0 != "--rerun-failed" } + failed.flatMap { ["--only", $0.description] }
  }
}

/// Records each test's last attempt of a run and writes the ``RunRecord`` when the run ends.
/// Never fails the run: a record that cannot be written is a warning.
final class RunRecorder: Reporter {
  private let path: String
  private let executable: String
  private let arguments: [String]
  private let warn: @Sendable (String) -> Void
  private let tests = Mutex<[RunRecord.Ended]>([])
  private let suites = Mutex<[RunRecord.SuiteTime]>([])
  /// The failures outside every test, in the order they were found.
  private let outside = Mutex<[OutsideFailure]>([])

  /// Creates a recorder of a run of `executable` with `arguments`, writing to `path` and
  /// warning through `warn`.
  init(path: String, executable: String, arguments: [String], warn: @escaping @Sendable (String) -> Void) {
    self.path = path
    self.executable = executable
    self.arguments = arguments
    self.warn = warn
  }

  /// The durations the last run recorded where this one writes (what balances several lanes,
  /// ``LaneBalance``); `nil` when there is no record this build reads.
  var lastDurations: RecordedDurations? {
    (try? RunRecord.read(from: path))?.durations
  }

  /// Keeps how a test ended, each suite's time, and each failure outside every test.
  func handle(_ event: Event) {
    switch event.kind {
    case .testEnded(let test, let end):
      let ended = RunRecord.Ended(id: test.testPath, waiter: test.host, repetition: test.repetition, verdict: end.verdict,
                                  seconds: end.duration)
      tests.withLock { $0.append(ended) }
    case .suiteEnded(let suite, _, let duration):
      suites.withLock { $0.append(RunRecord.SuiteTime(suite: suite.suite, waiter: suite.host, seconds: duration)) }
    case .outsideFailure(let failure):
      outside.withLock { $0.append(failure) }
    default:
      break
    }
  }

  /// Writes the record.
  func finish() {
    let tests = tests.withLock { $0 }
    // A failure outside every test names the tests of its suite that ran, and its suspects.
    let named = outside.withLock { $0 }.flatMap { failure in
      tests.filter { $0.id.suite == failure.suite.suite && $0.waiter == failure.suite.host }.map(\.id)
        + failure.suspects.compactMap { try? TestPath(parsing: $0) }
    }
    let record = RunRecord(arguments: arguments, tests: tests, outside: named, suites: suites.withLock { $0 })
    do {
      try record.write(to: path, executable: executable)
    } catch {
      warn("warning: the run was not recorded for --rerun-failed: \(error)\n")
    }
  }
}
