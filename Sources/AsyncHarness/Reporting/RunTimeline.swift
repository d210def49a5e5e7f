import Foundation

/// A run laid out in time: its attempts on the lanes that ran them, the waits inside them
/// (when the run reports waits), its suites' spans, and the issues and worker replacements
/// worth a point in time. The one reading of events that both the trace (`--trace`,
/// ``TraceReporter``) and the HTML report's timeline (`--report-html`, ``HTMLReporter``)
/// draw from, so the two always agree.
///
/// Each lane, counted from 1, has a track; an attempt that starts while others run on its lane
/// (`async` tests side by side in a worker, `--async-width`) goes on a sub-track of that lane,
/// the first one free, so the attempts on every track follow one another. Times are
/// microseconds from the run's start (the `runStarted` event's timestamp, or the first
/// event's) and never go back on a track (nor on the suites' track): an attempt never starts
/// before the one before it on its track ended.
struct RunTimeline: EndOfRunContents {
  /// Where attempts are drawn: a lane's track (slot 1) or one of its sub-tracks (slot 2 and
  /// up), for attempts that ran beside others in that lane.
  struct Track: Hashable, Comparable {
    /// The lane, from 1; 0 for the suites' track.
    var lane: Int
    /// The slot in the lane, from 1.
    var slot = 1

    /// The name a person reads: `lane 1`, and `lane 1 · 2` for its second slot.
    var name: String { slot == 1 ? "lane \(lane)" : "lane \(lane) · \(slot)" }

    static func < (a: Track, b: Track) -> Bool { (a.lane, a.slot) < (b.lane, b.slot) }
  }

  /// An attempt that ran, on the lane its `testStarted` names.
  struct Attempt {
    /// The attempt's test.
    var test: TestID
    /// Its track: its lane's, or a sub-track of its lane when it started beside others.
    var track: Track
    /// When it started.
    var start: Int64
    /// How long it ran.
    var duration: Int64
    /// How it ended; nil for an attempt the run's end cut short.
    var result: TestResult?
  }

  /// A wait an attempt made (`waitEnded`), inside the attempt on its track.
  struct Wait {
    /// The attempt's test.
    var test: TestID
    /// What it waited for: `the wait for "loaded"`.
    var awaited: String
    /// How it ended: `completed`, `timedOut`…
    var outcome: String
    /// When it started.
    var start: Int64
    /// How long it waited.
    var duration: Int64
  }

  /// One thing on the timeline.
  enum Entry {
    /// An attempt.
    case attempt(Attempt)
    /// A wait, on its attempt's track, within the attempt and after the waits before it.
    case wait(Wait, track: Track)
    /// An issue shown at a point in time: at its attempt's end, on its track.
    case instant(Issue, of: TestID, track: Track, at: Int64)
    /// The worker process that ran an attempt was replaced (`workerReplaced`), for `reason`:
    /// shown at the attempt's end, on its track.
    case workerReplaced(reason: String, of: TestID, track: Track, at: Int64)
    /// A suite's span begins or ends.
    case suite(SuiteRun, id: Int, begins: Bool, at: Int64)
  }

  /// The issue kinds shown as instants: crashes, time limits, interrupts and leaks.
  static let instantKinds: Set<Issue.Kind> = [.crashed, .timeLimitExceeded, .interrupted, .leaked]

  /// What happened, in the order it ended.
  private(set) var entries: [Entry] = []
  /// The latest time seen: where ``close()`` ends what is still open.
  private(set) var latest: Int64 = 0
  /// The run's start.
  private var origin: Date?
  /// The attempts that started and have not ended: their track and start.
  private var running: [TestID: (track: Track, start: Int64)] = [:]
  /// Why the workers of a running attempt were replaced, shown when the attempt ends.
  private var replaced: [TestID: [String]] = [:]
  /// The waits of running attempts, placed when the attempt ends.
  private var waits: [TestID: [Wait]] = [:]
  /// The suite spans that began and have not ended, with their IDs.
  private var openSuites: [SuiteRun: Int] = [:]
  private var suiteCount = 0
  /// The last time written on each track.
  private var trackTimes: [Track: Int64] = [:]
  /// The suites' track.
  private static let suites = Track(lane: 0)

  /// Places one event.
  mutating func record(_ event: Event) {
    switch event.kind {
    case .runStarted:
      origin = origin ?? event.timestamp
    case .suiteStarted(let suite):
      suiteCount += 1
      openSuites[suite] = suiteCount
      entries.append(.suite(suite, id: suiteCount, begins: true, at: time(event.timestamp, on: Self.suites)))
    case .testStarted(let test):
      let track = freeTrack(in: event.lane ?? 1)
      running[test] = (track, time(event.timestamp, on: track))
    case .testEnded(let test, let result, _):
      guard let (track, start) = running.removeValue(forKey: test) else { return }
      let end = time(event.timestamp, on: track)
      entries.append(.attempt(Attempt(test: test, track: track, start: start, duration: end - start, result: result)))
      var floor = start
      for var wait in waits.removeValue(forKey: test) ?? [] {
        // Inside the attempt, after the wait before it: the slices nest.
        let from = min(max(wait.start, floor), end)
        let to = min(max(wait.start + wait.duration, from), end)
        (wait.start, wait.duration) = (from, to - from)
        entries.append(.wait(wait, track: track))
        floor = to
      }
      for issue in result.issues where Self.instantKinds.contains(issue.kind) {
        entries.append(.instant(issue, of: test, track: track, at: end))
      }
      for reason in replaced.removeValue(forKey: test) ?? [] {
        entries.append(.workerReplaced(reason: reason, of: test, track: track, at: end))
      }
    case .suiteEnded(let suite, _, _):
      guard let id = openSuites.removeValue(forKey: suite) else { return }
      entries.append(.suite(suite, id: id, begins: false, at: time(event.timestamp, on: Self.suites)))
    case .waitEnded(let test, let awaited, let outcome, let duration):
      let end = offset(event.timestamp)
      let length = Int64((duration * 1_000_000).rounded())
      latest = max(latest, end)
      if running[test] != nil {
        waits[test, default: []].append(Wait(test: test, awaited: awaited, outcome: outcome, start: end - length, duration: length))
      }
    case .workerReplaced(let test, let reason):
      if running[test] != nil { replaced[test, default: []].append(reason) }
      _ = time(event.timestamp, on: Self.suites)
    case .issueRecorded, .outputCaptured, .testSlow, .runEnded:
      _ = time(event.timestamp, on: Self.suites)
    }
  }

  /// Ends what is still open at the latest time seen: an attempt without a result, a suite's span.
  mutating func close() {
    for (test, (track, start)) in running.sorted(by: { $0.value.start < $1.value.start }) {
      entries.append(.attempt(Attempt(test: test, track: track, start: start, duration: max(0, latest - start), result: nil)))
    }
    running = [:]
    replaced = [:]
    waits = [:]
    for (suite, id) in openSuites.sorted(by: { $0.value < $1.value }) {
      entries.append(.suite(suite, id: id, begins: false, at: latest))
    }
    openSuites = [:]
  }

  /// The attempts, in the order they ended.
  var attempts: [Attempt] {
    entries.compactMap { if case .attempt(let attempt) = $0 { attempt } else { nil } }
  }

  /// The tracks that hold an attempt, in order: each lane's, then its sub-tracks.
  var tracks: [Track] { Set(attempts.map(\.track)).sorted() }

  /// The first track of `lane` that no running attempt holds.
  private func freeTrack(in lane: Int) -> Track {
    let taken = Set(running.values.lazy.filter { $0.track.lane == lane }.map(\.track.slot))
    var track = Track(lane: lane)
    while taken.contains(track.slot) { track.slot += 1 }
    return track
  }

  /// `date` in microseconds from the run's start.
  private mutating func offset(_ date: Date) -> Int64 {
    let origin = origin ?? date
    self.origin = origin
    return max(0, Int64((date.timeIntervalSince(origin) * 1_000_000).rounded()))
  }

  /// `date` in microseconds from the run's start, never before the last time on `track`.
  private mutating func time(_ date: Date, on track: Track) -> Int64 {
    let time = max(offset(date), trackTimes[track] ?? 0)
    trackTimes[track] = time
    latest = max(latest, time)
    return time
  }
}
