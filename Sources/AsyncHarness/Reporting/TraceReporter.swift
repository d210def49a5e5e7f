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
/// suite still open then ends there, an attempt with the verdict `unfinished`. Its events are
/// written in memory as the run goes (`TraceDocument`), so finishing is mostly a copy. Every text is
/// written through the event stream's JSON writer, so whatever a test's name or message
/// holds, the file is valid JSON.
public final class TraceReporter: Reporter, EndOfRunReporter {
  /// Where the trace is written.
  public let path: String
  private let processName: String
  private let file: EndOfRunFile<TraceDocument>

  /// The most UTF-8 bytes of an issue's message an instant event keeps.
  static let messageLimit = 4096

  /// Creates a reporter that writes the trace to `path` when the run ends (an existing file is
  /// replaced then, atomically).
  /// - Parameters:
  ///   - path: the file.
  ///   - processName: the name of the run's process in the trace.
  /// - Throws: ``ReportFileError`` when the file could not be written (the path names a
  ///   directory, the directory is missing or cannot hold a file, the name is too long),
  ///   before any test runs.
  public init(path: String, processName: String = ProcessInfo.processInfo.processName) throws {
    file = try EndOfRunFile(path: path, report: "the trace", contents: TraceDocument(processID: Int(getpid())))
    self.path = path
    self.processName = processName
  }

  /// Creates a reporter that writes the trace of `timeline`, the run's one, which it places
  /// each event on (before the HTML page reads it); as ``init(path:processName:)``.
  init(path: String, processName: String, timeline: SharedTimeline) throws {
    file = try EndOfRunFile(path: path, report: "the trace",
                            contents: TraceDocument(processID: Int(getpid()), timeline: timeline, feeds: true))
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
    guard let document = file.take() else { return }
    var json = JSONText()
    document.write(processName: processName, to: &json)
    try json.withUnsafeBytes { try file.replace(with: $0) }
  }
}
