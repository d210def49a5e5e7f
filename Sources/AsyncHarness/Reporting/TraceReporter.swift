import Foundation

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
/// own; its track's `tid` is N); track 0 holds the suites. Attempts that run side by side in a
/// lane (`async` tests of parallel suites, `--async-width`) would overlap on its track: an
/// attempt that starts while others run in its lane goes on a sub-track of the lane, the first
/// one free, named `lane N · 2`, `lane N · 3`… (`tid`s after the last lane's), so slices on
/// every track follow one another. What the trace holds:
///
/// - a complete slice (`"ph":"X"`) for each attempt that ran, retries included, named
///   `Suite/test`, on the track (or sub-track) of the lane its `testStarted` names, with the waiter, the
///   verdict, the attempt, the retry number (0 for a first attempt), the repetition, the
///   test's ID (as `--only` reads it) and, under a schedule, its replay token as args;
/// - a complete slice inside the attempt's for each wait it made (`waitEnded`,
///   ``Configuration/reportsWaits``, which `--trace` turns on), named by what it awaited
///   (`the wait for "loaded"`), with the strategy and how it ended (`completed`, `timedOut`,
///   `interrupted`, `timeLimitExceeded`…) as args;
/// - under the `scheduled` strategy, an instant event (`"ph":"i"`, on the attempt's track,
///   inside it) for each step its schedule took (`scheduleStep`, with the waits), named by
///   what ran (its queue's label, `main`, or `task #2`), with the step's number and the
///   virtual time in seconds as args, in the order they ran: a failing schedule's order reads
///   from left to right (an attempt's first ``Event/scheduleStepLimit`` steps; its `schedule`
///   arg counts them all);
/// - an instant event (`"ph":"i"`, on the attempt's track, at its end) for each crash, time
///   limit, interrupt and leak (issue kinds `crashed`, `timeLimitExceeded`, `interrupted`,
///   `leaked`), named by the kind, with the test and the message (at most 4 KiB) as args;
/// - an instant event named `workerReplaced` (on the attempt's track, at its end) where the
///   lane's worker process ended or was retired and the next test got a fresh one, with the
///   test and the reason (`crashed`, `stoppedAtTimeLimit`, `exceededTimeLimit`, `leakedWork`)
///   as args;
/// - a span for each suite under a waiter, as async begin and end events (`"ph":"b"`/`"e"`),
///   which may overlap when suites run in several lanes;
/// - metadata events (`"ph":"M"`) naming the process and the tracks, and ordering the tracks
///   (`thread_sort_index`): the suites', then each lane's followed by its sub-tracks, whatever
///   their `tid`s.
///
/// Timestamps are microseconds from the run's start, and never go back on a track: an
/// attempt never starts before the one before it in its lane ended. The file is written
/// atomically when the run ends (``finish()``), also when it was interrupted: an attempt or
/// suite still open then ends there, an attempt with the verdict `unfinished`. Every text is
/// written through the event stream's JSON writer, so whatever a test's name or message
/// holds, the file is valid JSON.
public final class TraceReporter: Reporter, EndOfRunReporter {
  /// Where the trace is written.
  public let path: String
  private let processName: String
  private let processID = Int(getpid())
  private let file: EndOfRunFile<RunTimeline>

  /// The most UTF-8 bytes of an issue's message an instant event keeps.
  static let messageLimit = 4096

  /// One trace event: a metadata event naming the process (`process_name`) or a track
  /// (`thread_name`), one placing a track among the others (`thread_sort_index`), or a thing
  /// on the run's timeline.
  private enum TraceEvent {
    case metadata(StaticString, name: String, track: Int)
    case sortIndex(Int, track: Int)
    case timeline(RunTimeline.Entry)
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
    file = try EndOfRunFile(path: path, report: "the trace", contents: RunTimeline())
    self.path = path
    self.processName = processName
  }

  /// Keeps what the trace shows of one event.
  /// - Parameter event: The event.
  public func handle(_ event: Event) {
    file.record(event)
  }

  /// Ends what is still open and writes the trace, atomically.
  /// - Throws: ``ReportFileError`` when the file cannot be written.
  public func finish() throws {
    guard let timeline = file.take() else { return }
    var json = JSONText()
    write(timeline, to: &json)
    try json.withUnsafeBytes { try file.replace(with: $0) }
  }

  /// Writes the trace's one JSON object: the metadata naming the process and its tracks,
  /// then the timeline's entries.
  private func write(_ timeline: RunTimeline, to json: inout JSONText) {
    let tracks = timeline.tracks
    let ids = Self.trackIDs(tracks)
    let names = [TraceEvent.metadata("process_name", name: processName, track: 0), .metadata("thread_name", name: "suites", track: 0),
                 .sortIndex(0, track: 0)]
      + tracks.enumerated().flatMap { index, track in
        [TraceEvent.metadata("thread_name", name: track.name, track: ids[track] ?? 0), .sortIndex(index + 1, track: ids[track] ?? 0)]
      }
    json.object { json in
      json.field("displayTimeUnit", "ms")
      json.field("traceEvents") { json in
        json.array { json in
          for event in names { json.object { write(event, ids: ids, to: &$0) } }
          for entry in timeline.entries { json.object { write(.timeline(entry), ids: ids, to: &$0) } }
        }
      }
    }
  }

  /// Each track's `tid`: a lane's own track has its lane's number, its sub-tracks come after
  /// the last lane's, in order.
  private static func trackIDs(_ tracks: [RunTimeline.Track]) -> [RunTimeline.Track: Int] {
    var ids: [RunTimeline.Track: Int] = [:]
    var next = (tracks.map(\.lane).max() ?? 0) + 1
    for track in tracks {
      if track.slot == 1 {
        ids[track] = track.lane
      } else {
        ids[track] = next
        next += 1
      }
    }
    return ids
  }

  /// Writes the fields of one trace event, keys sorted; `ids` gives each track's `tid`.
  private func write(_ event: TraceEvent, ids: [RunTimeline.Track: Int], to json: inout JSONText) {
    switch event {
    case .timeline(.attempt(let attempt)):
      let (test, result) = (attempt.test, attempt.result)
      json.field("args") { json in
        json.object { args in
          args.field("attempt", test.attempt)
          args.field("id") { $0.string(test.identity.escapedSuite, "/", test.identity.escapedName) }  // the ID, unjoined
          args.field("repetition", test.repetition)
          args.field("retry", test.attempt - 1)
          if let token = result?.replayToken(of: test) { args.field("schedule", token) }
          args.field("verdict", result.map { $0.willRetry ? "\($0.verdict.rawValue) (retried)" : $0.verdict.rawValue } ?? "unfinished")
          args.field("waiter", test.waiter)
        }
      }
      json.field("cat", "test")
      json.field("dur", Int(attempt.duration))
      json.field("name") { $0.path(of: test) }
      fields("X", track: ids[attempt.track] ?? 0, at: attempt.start, to: &json)
    case .timeline(.wait(let wait, let track)):
      json.field("args") { json in
        json.object { args in
          args.field("outcome", wait.outcome)
          args.field("test") { $0.path(of: wait.test) }
          args.field("waiter", wait.test.waiter)
        }
      }
      json.field("cat", "wait")
      json.field("dur", Int(wait.duration))
      json.field("name", wait.awaited)
      fields("X", track: ids[track] ?? 0, at: wait.start, to: &json)
    case .timeline(.step(let step, let track)):
      json.field("args") { json in
        json.object { args in
          args.field("step", step.number)
          args.field("test") { $0.path(of: step.test) }
          args.field("virtualTime", step.virtualTime)
        }
      }
      json.field("cat", "step")
      json.field("name", step.ran)
      fields("i", track: ids[track] ?? 0, at: step.time, threadScoped: true, to: &json)
    case .timeline(.instant(let issue, let test, let track, let time)):
      json.field("args") { json in
        json.object { args in
          args.field("message", CappedText.capped(issue.message, limit: Self.messageLimit))
          args.field("test") { $0.path(of: test) }
        }
      }
      json.field("cat", "issue")
      json.field("name", issue.kind.rawValue)
      fields("i", track: ids[track] ?? 0, at: time, threadScoped: true, to: &json)
    case .timeline(.workerReplaced(let reason, let test, let track, let time)):
      json.field("args") { json in
        json.object { args in
          args.field("reason", reason)
          args.field("test") { $0.path(of: test) }
        }
      }
      json.field("cat", "worker")
      json.field("name", "workerReplaced")
      fields("i", track: ids[track] ?? 0, at: time, threadScoped: true, to: &json)
    case .timeline(.suite(let suite, let id, let begins, let time)):
      json.field("cat", "suite")
      json.field("id", id)
      json.field("name", suite.description)
      fields(begins ? "b" : "e", track: 0, at: time, to: &json)
    case .sortIndex(let index, let track):
      json.field("args") { json in json.object { $0.field("sort_index", index) } }
      json.field("name", "thread_sort_index")
      fields("M", track: track, at: 0, to: &json)
    case .metadata(let kind, let name, let track):
      json.field("args") { json in json.object { $0.field("name", name) } }
      json.field("name") { $0.string(kind) }
      fields("M", track: track, at: 0, to: &json)
    }
  }

  /// The fields every event has, after `name` in key order: `ph`, `pid`, `tid`, `ts`; an
  /// instant event's scope (`"s":"t"`, its track) when `threadScoped`.
  private func fields(_ phase: StaticString, track: Int, at time: Int64, threadScoped: Bool = false, to json: inout JSONText) {
    json.field("ph") { $0.string(phase) }
    json.field("pid", processID)
    if threadScoped { json.field("s", "t") }
    json.field("tid", track)
    json.field("ts", Int(time))
  }
}

extension JSONText {
  /// A test's `Suite/test`, as the trace names its attempts.
  fileprivate mutating func path(of test: TestID) { string(test.suite, "/", test.name) }
}
