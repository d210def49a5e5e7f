import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a run as Chrome trace-event JSON (`--trace PATH`): the format Perfetto
/// (ui.perfetto.dev) and `chrome://tracing` open, one JSON object with `traceEvents` and
/// `displayTimeUnit`.
///
/// The run is one process (this one's pid) with a track (`tid`) for each lane of the runner,
/// named `lane N` (with `--workers N`, each lane runs its tests in a worker process of its
/// own); track 0 holds the suites. What the trace holds:
///
/// - a complete slice (`"ph":"X"`) for each attempt that ran, retries included, named
///   `Suite/test`, on the track of the lane its `testStarted` names, with the waiter, the
///   verdict, the attempt, the retry number (0 for a first attempt), the repetition, the
///   test's ID (as `--only` reads it) and, under a schedule, its replay token as args;
/// - an instant event (`"ph":"i"`, on the attempt's track, at its end) for each crash, time
///   limit, interrupt and leak (issue kinds `crashed`, `timeLimitExceeded`, `interrupted`,
///   `leaked`), named by the kind, with the test and the message (at most 4 KiB) as args;
/// - a span for each suite under a waiter, as async begin and end events (`"ph":"b"`/`"e"`),
///   which may overlap when suites run in several lanes;
/// - metadata events (`"ph":"M"`) naming the process and the tracks.
///
/// Timestamps are microseconds from the run's start, and never go back on a track: an
/// attempt never starts before the one before it in its lane ended. The file is written
/// atomically when the run ends (``finish()``), also when it was interrupted: an attempt or
/// suite still open then ends there, an attempt with the verdict `unfinished`. Every text is
/// written through the event stream's JSON writer, so whatever a test's name or message
/// holds, the file is valid JSON.
public final class TraceReporter: Reporter {
  /// Where the trace is written.
  public let path: String
  private let processName: String
  private let processID = Int(getpid())
  private let state = Mutex(State())

  /// The most UTF-8 bytes of an issue's message an instant event keeps.
  static let messageLimit = 4096
  /// The issue kinds shown as instant events.
  static let instantKinds: Set<Issue.Kind> = [.crashed, .timeLimitExceeded, .interrupted, .leaked]

  /// One trace event, with its time in microseconds from the run's start.
  private enum Entry {
    /// An attempt: `result` is nil for one the run's end cut short.
    case attempt(TestID, lane: Int, start: Int64, duration: Int64, result: TestResult?)
    /// An issue shown at a point in time.
    case instant(Issue, of: TestID, lane: Int, at: Int64)
    /// A suite's span begins or ends.
    case suite(SuiteRun, id: Int, begins: Bool, at: Int64)
    /// Metadata naming the process (`process_name`) or a track (`thread_name`).
    case metadata(StaticString, name: String, track: Int)
  }

  private struct State {
    /// The run's start: the `runStarted` event's timestamp (or the first event's).
    var origin: Date?
    /// The latest time seen, where what is still open at the end ends.
    var latest: Int64 = 0
    /// The attempts that started and have not ended: their lane and start.
    var running: [TestID: (lane: Int, start: Int64)] = [:]
    /// The suite spans that began and have not ended, with their IDs.
    var openSuites: [SuiteRun: Int] = [:]
    var suiteCount = 0
    /// The last time written on each track (lanes from 1; the suites' track 0).
    var trackTimes: [Int: Int64] = [:]
    var entries: [Entry] = []
    var finished = false

    /// `date` in microseconds from the run's start, never before the last time on `track`.
    mutating func time(_ date: Date, on track: Int) -> Int64 {
      let origin = origin ?? date
      self.origin = origin
      let micros = max(0, Int64((date.timeIntervalSince(origin) * 1_000_000).rounded()))
      let time = max(micros, trackTimes[track] ?? 0)
      trackTimes[track] = time
      latest = max(latest, time)
      return time
    }
  }

  /// Creates a reporter that writes the trace to `path` when the run ends (an existing file is
  /// replaced then, atomically).
  /// - Parameters:
  ///   - path: the file.
  ///   - processName: the name of the run's process in the trace.
  /// - Throws: ``ReportFileError`` when the file could not be written (the path names a
  ///   directory, the directory is missing or cannot hold a file, the name is too long),
  ///   before any test runs.
  public init(path: String, processName: String = ProcessInfo.processInfo.processName) throws {
    if let reason = ReportDestination.problem(with: path, stagingBytes: ReportDestination.temporaryNameBytes) {
      throw ReportFileError(path: path, reason: reason, report: Self.report)
    }
    self.path = path
    self.processName = processName
  }

  /// How errors name the file.
  private static let report = "the trace"

  /// Keeps what the trace shows of one event.
  /// - Parameter event: The event.
  public func handle(_ event: Event) {
    state.withLock { state in
      guard !state.finished else { return }
      switch event.kind {
      case .runStarted:
        state.origin = state.origin ?? event.timestamp
      case .suiteStarted(let suite):
        state.suiteCount += 1
        state.openSuites[suite] = state.suiteCount
        state.entries.append(.suite(suite, id: state.suiteCount, begins: true, at: state.time(event.timestamp, on: 0)))
      case .testStarted(let test):
        let lane = event.lane ?? 1
        state.running[test] = (lane, state.time(event.timestamp, on: lane))
      case .testEnded(let test, let result, _):
        guard let (lane, start) = state.running.removeValue(forKey: test) else { return }
        let end = state.time(event.timestamp, on: lane)
        state.entries.append(.attempt(test, lane: lane, start: start, duration: end - start, result: result))
        for issue in result.issues where Self.instantKinds.contains(issue.kind) {
          state.entries.append(.instant(issue, of: test, lane: lane, at: end))
        }
      case .suiteEnded(let suite, _, _):
        guard let id = state.openSuites.removeValue(forKey: suite) else { return }
        state.entries.append(.suite(suite, id: id, begins: false, at: state.time(event.timestamp, on: 0)))
      case .issueRecorded, .outputCaptured, .testSlow, .runEnded:
        _ = state.time(event.timestamp, on: 0)
      }
    }
  }

  /// Ends what is still open and writes the trace, atomically.
  /// - Throws: ``ReportFileError`` when the file cannot be written.
  public func finish() throws {
    let entries = state.withLock { state -> [Entry]? in
      guard !state.finished else { return nil }
      state.finished = true
      let end = state.latest
      for (test, (lane, start)) in state.running.sorted(by: { $0.value.start < $1.value.start }) {
        state.entries.append(.attempt(test, lane: lane, start: start, duration: max(0, end - start), result: nil))
      }
      for (suite, id) in state.openSuites.sorted(by: { $0.value < $1.value }) {
        state.entries.append(.suite(suite, id: id, begins: false, at: end))
      }
      return state.entries
    }
    guard let entries else { return }
    var json = JSONText()
    write(entries, to: &json)
    try json.withUnsafeBytes { try ReportDestination.replace(path, report: Self.report, with: $0) }
  }

  /// Writes the trace's one JSON object: the metadata naming the process and its tracks,
  /// then `entries`.
  private func write(_ entries: [Entry], to json: inout JSONText) {
    var lanes: Set<Int> = []
    for case .attempt(_, let lane, _, _, _) in entries { lanes.insert(lane) }
    let names = [Entry.metadata("process_name", name: processName, track: 0), .metadata("thread_name", name: "suites", track: 0)]
      + lanes.sorted().map { Entry.metadata("thread_name", name: "lane \($0)", track: $0) }
    json.object { json in
      json.field("displayTimeUnit", "ms")
      json.field("traceEvents") { json in
        json.array(names + entries) { json, entry in json.object { write(entry, to: &$0) } }
      }
    }
  }

  /// Writes the fields of one trace event, keys sorted.
  private func write(_ entry: Entry, to json: inout JSONText) {
    switch entry {
    case .attempt(let test, let lane, let start, let duration, let result):
      json.field("args") { json in
        json.object { args in
          args.field("attempt", test.attempt)
          args.field("id", test.identity.description)
          args.field("repetition", test.repetition)
          args.field("retry", test.attempt - 1)
          if let token = result?.replayToken(of: test) { args.field("schedule", token) }
          args.field("verdict", result.map { $0.willRetry ? "\($0.verdict.rawValue) (retried)" : $0.verdict.rawValue } ?? "unfinished")
          args.field("waiter", test.waiter)
        }
      }
      json.field("cat", "test")
      json.field("dur", Int(duration))
      json.field("name", "\(test.suite)/\(test.name)")
      fields("X", track: lane, at: start, to: &json)
    case .instant(let issue, let test, let lane, let time):
      json.field("args") { json in
        json.object { args in
          args.field("message", CappedText.capped(issue.message, limit: Self.messageLimit))
          args.field("test", "\(test.suite)/\(test.name)")
        }
      }
      json.field("cat", "issue")
      json.field("name", issue.kind.rawValue)
      fields("i", track: lane, at: time, threadScoped: true, to: &json)
    case .suite(let suite, let id, let begins, let time):
      json.field("cat", "suite")
      json.field("id", id)
      json.field("name", suite.description)
      fields(begins ? "b" : "e", track: 0, at: time, to: &json)
    case .metadata(let kind, let name, let track):
      json.field("args") { json in json.object { $0.field("name", name) } }
      json.field("name", String(describing: kind))
      fields("M", track: track, at: 0, to: &json)
    }
  }

  /// The fields every event has, after `name` in key order: `ph`, `pid`, `tid`, `ts`; an
  /// instant event's scope (`"s":"t"`, its track) when `threadScoped`.
  private func fields(_ phase: StaticString, track: Int, at time: Int64, threadScoped: Bool = false, to json: inout JSONText) {
    json.field("ph") { $0.string(String(describing: phase)) }
    json.field("pid", processID)
    if threadScoped { json.field("s", "t") }
    json.field("tid", track)
    json.field("ts", Int(time))
  }
}
