import Foundation

/// A run laid out in time: its attempts on the lanes that ran them, its suites' spans and the
/// issues worth a point in time. The one reading of events that both the trace (`--trace`,
/// ``TraceReporter``) and the HTML report's timeline (`--report-html`, ``HTMLReporter``)
/// draw from, so the two always agree.
///
/// Times are microseconds from the run's start (the `runStarted` event's timestamp, or the
/// first event's) and never go back on a track (the lanes, counted from 1, and the suites'
/// track 0): an attempt never starts before the one before it in its lane ended.
struct RunTimeline: EndOfRunContents {
  /// An attempt that ran, on the lane its `testStarted` names.
  struct Attempt {
    /// The attempt's test.
    var test: TestID
    /// Its lane.
    var lane: Int
    /// When it started.
    var start: Int64
    /// How long it ran.
    var duration: Int64
    /// How it ended; nil for an attempt the run's end cut short.
    var result: TestResult?
  }

  /// One thing on the timeline.
  enum Entry {
    /// An attempt.
    case attempt(Attempt)
    /// An issue shown at a point in time: at its attempt's end, on its lane.
    case instant(Issue, of: TestID, lane: Int, at: Int64)
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
  /// The attempts that started and have not ended: their lane and start.
  private var running: [TestID: (lane: Int, start: Int64)] = [:]
  /// The suite spans that began and have not ended, with their IDs.
  private var openSuites: [SuiteRun: Int] = [:]
  private var suiteCount = 0
  /// The last time written on each track.
  private var trackTimes: [Int: Int64] = [:]

  /// Places one event.
  mutating func record(_ event: Event) {
    switch event.kind {
    case .runStarted:
      origin = origin ?? event.timestamp
    case .suiteStarted(let suite):
      suiteCount += 1
      openSuites[suite] = suiteCount
      entries.append(.suite(suite, id: suiteCount, begins: true, at: time(event.timestamp, on: 0)))
    case .testStarted(let test):
      let lane = event.lane ?? 1
      running[test] = (lane, time(event.timestamp, on: lane))
    case .testEnded(let test, let result, _):
      guard let (lane, start) = running.removeValue(forKey: test) else { return }
      let end = time(event.timestamp, on: lane)
      entries.append(.attempt(Attempt(test: test, lane: lane, start: start, duration: end - start, result: result)))
      for issue in result.issues where Self.instantKinds.contains(issue.kind) {
        entries.append(.instant(issue, of: test, lane: lane, at: end))
      }
    case .suiteEnded(let suite, _, _):
      guard let id = openSuites.removeValue(forKey: suite) else { return }
      entries.append(.suite(suite, id: id, begins: false, at: time(event.timestamp, on: 0)))
    case .issueRecorded, .outputCaptured, .testSlow, .runEnded:
      _ = time(event.timestamp, on: 0)
    }
  }

  /// Ends what is still open at the latest time seen: an attempt without a result, a suite's span.
  mutating func close() {
    for (test, (lane, start)) in running.sorted(by: { $0.value.start < $1.value.start }) {
      entries.append(.attempt(Attempt(test: test, lane: lane, start: start, duration: max(0, latest - start), result: nil)))
    }
    running = [:]
    for (suite, id) in openSuites.sorted(by: { $0.value < $1.value }) {
      entries.append(.suite(suite, id: id, begins: false, at: latest))
    }
    openSuites = [:]
  }

  /// The attempts, in the order they ended.
  var attempts: [Attempt] {
    entries.compactMap { if case .attempt(let attempt) = $0 { attempt } else { nil } }
  }

  /// The lanes that ran an attempt, in order.
  var lanes: [Int] { Set(attempts.map(\.lane)).sorted() }

  /// `date` in microseconds from the run's start, never before the last time on `track`.
  private mutating func time(_ date: Date, on track: Int) -> Int64 {
    let origin = origin ?? date
    self.origin = origin
    let micros = max(0, Int64((date.timeIntervalSince(origin) * 1_000_000).rounded()))
    let time = max(micros, trackTimes[track] ?? 0)
    trackTimes[track] = time
    latest = max(latest, time)
    return time
  }
}
