import Foundation
import Synchronization

/// A run laid out in time: its attempts on the lanes that ran them, the waits and schedule
/// steps inside them (when the run reports waits), its suites' spans, and the issues and
/// worker replacements worth a point in time. The one reading of events that both the trace
/// (`--trace`, ``TraceReporter``) and the HTML report's timeline (`--report-html`,
/// ``HTMLReporter``) draw from, so the two always agree; a run with both has one
/// (``SharedTimeline``), which the trace places each event on once.
///
/// Each lane, counted from 1, has a track; an attempt that starts while others run on its lane
/// (`async` tests side by side in a worker, `--async-width`) goes on a sub-track of that lane,
/// the first one free, so the attempts on every track follow one another. Times are
/// microseconds from the run's start (the `runStarted` event's timestamp, or the first
/// event's) and never go back on a track (nor on the suites' track): an attempt never starts
/// before the one before it on its track ended.
struct RunTimeline {
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
    /// How it ended: its own outcome when it ran again, else its test's verdict; nil for an
    /// attempt the run's end cut short.
    var verdict: Verdict?
    /// Whether it failed and its test ran again.
    var retried = false
    /// Under a schedule, the steps it took.
    var scheduleTrace: ScheduleTrace?
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

  /// A step an attempt's schedule took (`scheduleStep`), at a point inside the attempt on its
  /// track.
  struct Step {
    /// The attempt's test.
    var test: TestID
    /// The step's number, from 1.
    var number: Int
    /// What it ran: `main`, `io`, `task #2`…
    var ran: String
    /// The test's virtual time then, in seconds.
    var virtualTime: Double
    /// When it was taken.
    var time: Int64
  }

  /// One thing on the timeline.
  enum Entry {
    /// An attempt.
    case attempt(Attempt)
    /// A wait, on its attempt's track, within the attempt and after the waits before it.
    case wait(Wait, track: Track)
    /// A schedule step, on its attempt's track, within the attempt and after the steps before it.
    case step(Step, track: Track)
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
  /// Whether every attempt is also kept apart from the entries (``attempts``), which a
  /// reader taking the entries as the run goes (the trace) would otherwise take away.
  var keepsAttempts = false
  /// The attempts kept apart, in the order they ended.
  private var keptAttempts: [Attempt] = []
  /// The latest time seen: where ``close()`` ends what is still open.
  private(set) var latest: Int64 = 0
  /// The run's start.
  private var origin: Date?
  /// An attempt that started and has not been placed.
  private struct Running {
    /// The track it was announced on: its lane's first one free then. It is drawn there
    /// unless that track is taken at its real start (a test bundle ran it earlier, beside
    /// the attempts before it), then on its lane's first track free from its start.
    var track: Track
    /// When its `testStarted` was sent: its start, unless its end says when it really started.
    var announced: Int64
    /// Its waits and schedule steps, placed when it ends.
    var waits: [Wait] = []
    var steps: [Step] = []
    /// Why the workers running it were replaced, shown when it ends.
    var replaced: [String] = []
    /// Its issues shown as instants, shown when it ends.
    var instants: [Issue] = []
  }

  /// The attempts that started and have not ended, in the order they started: a few at a time
  /// (one a lane, or those side by side), so found by a scan rather than a hash of their IDs.
  private var running: [(test: TestID, attempt: Running)] = []
  /// The attempts whose test ran again, until their test ends and says how they ran.
  private var retried: [TestID: Running] = [:]
  /// The tracks of the attempts that run.
  private var busy: Set<Track> = []
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
      // Two attempts of one ID at once: only the last one started is drawn.
      if let twin = index(of: test) { busy.remove(running.remove(at: twin).attempt.track) }
      // The attempt before this one ended: it is placed when its test ends and says how it ran.
      var previous = test
      previous.attempt -= 1
      if previous.attempt > 0, let index = index(of: previous) {
        let ended = running.remove(at: index).attempt
        busy.remove(ended.track)
        retried[previous] = ended
      }
      // The first track of the lane that no running attempt holds.
      var track = Track(lane: event.lane ?? 1)
      while busy.contains(track) { track.slot += 1 }
      busy.insert(track)
      let announced = offset(event.timestamp)
      latest = max(latest, announced)
      running.append((test, Running(track: track, announced: announced)))
    case .testEnded(let test, let ended):
      for attempt in ended.attempts {
        var id = test
        id.attempt = attempt.number
        let last = attempt.number == test.attempt
        if last, let index = index(of: id) {
          let running = running.remove(at: index).attempt
          busy.remove(running.track)
          close(running, of: id, as: attempt, verdict: ended.verdict, retried: false)
        } else if !last, let running = retried.removeValue(forKey: id) {
          close(running, of: id, as: attempt, verdict: attempt.outcome, retried: true)
        }
      }
    case .suiteEnded(let suite, _, _):
      guard let id = openSuites.removeValue(forKey: suite) else { return }
      entries.append(.suite(suite, id: id, begins: false, at: time(event.timestamp, on: Self.suites)))
    case .waitEnded(let test, let awaited, let outcome, let duration):
      let end = offset(event.timestamp)
      let length = Int64((duration * 1_000_000).rounded())
      latest = max(latest, end)
      if let index = index(of: test) {
        running[index].attempt.waits.append(Wait(test: test, awaited: awaited, outcome: outcome, start: end - length, duration: length))
      }
    case .scheduleStep(let test, let number, let ran, let virtualTime):
      let time = offset(event.timestamp)
      latest = max(latest, time)
      if let index = index(of: test) {
        running[index].attempt.steps.append(Step(test: test, number: number, ran: ran, virtualTime: virtualTime, time: time))
      }
    case .workerReplaced(let test, let reason):
      if let index = index(of: test) { running[index].attempt.replaced.append(reason) }
      _ = time(event.timestamp, on: Self.suites)
    case .issueRecorded(let test, let issue):
      if Self.instantKinds.contains(issue.kind), let index = index(of: test) { running[index].attempt.instants.append(issue) }
      _ = time(event.timestamp, on: Self.suites)
    case .outputCaptured, .outputShared, .testSlow, .runEnded, .outsideFailure:
      _ = time(event.timestamp, on: Self.suites)
    }
  }

  /// Places the attempt of `test` that ran as `ran` says (when it started, how long it ran)
  /// and ended as `verdict`, with its waits, steps and instants.
  private mutating func close(_ attempt: Running, of test: TestID, as ran: TestAttempt, verdict: Verdict, retried: Bool) {
    let start = ran.started.map { offset($0) } ?? attempt.announced
    let end = start + Int64((ran.duration * 1_000_000).rounded())
    place(attempt, of: test, from: start, to: end, verdict: verdict, retried: retried, trace: ran.scheduleTrace)
  }

  /// Places `attempt` of `test`, which ran from `start` to `end` (ended as `verdict`, `nil`
  /// when the run's end cut it short), on a track of its lane free from `start`, with its
  /// waits, steps and instants.
  private mutating func place(_ attempt: Running, of test: TestID, from start: Int64, to end: Int64, verdict: Verdict?,
                              retried: Bool, trace: ScheduleTrace? = nil) {
    var track = attempt.track
    if trackTimes[track, default: 0] > start {
      track.slot = 1
      while trackTimes[track, default: 0] > start { track.slot += 1 }
    }
    trackTimes[track] = end
    latest = max(latest, end)
    add(Attempt(test: test, track: track, start: start, duration: end - start, verdict: verdict, retried: retried,
                scheduleTrace: trace))
    guard verdict != nil else { return }
    placeWaitsAndSteps(of: attempt, on: track, from: start, to: end)
    for issue in attempt.instants { entries.append(.instant(issue, of: test, track: track, at: end)) }
    for reason in attempt.replaced { entries.append(.workerReplaced(reason: reason, of: test, track: track, at: end)) }
  }

  /// Ends what is still open at the latest time seen: an attempt without a result, a suite's span.
  mutating func close() {
    let open = running.map { ($0.test, $0.attempt, false) }
      + retried.sorted { $0.value.announced < $1.value.announced }.map { ($0.key, $0.value, true) }
    let end = latest
    for (test, attempt, retried) in open {
      place(attempt, of: test, from: attempt.announced, to: max(attempt.announced, end), verdict: nil, retried: retried)
    }
    running = []
    retried = [:]
    busy = []
    for (suite, id) in openSuites.sorted(by: { $0.value < $1.value }) {
      entries.append(.suite(suite, id: id, begins: false, at: latest))
    }
    openSuites = [:]
  }

  /// Places the waits and schedule steps of `attempt`, which ran on `track` from `start` to
  /// `end`: each inside the attempt, after the one before it of its kind (so the slices nest),
  /// and all in time order (so times never go back on the track).
  private mutating func placeWaitsAndSteps(of attempt: Running, on track: Track, from start: Int64, to end: Int64) {
    var waits = attempt.waits
    var floor = start
    for index in waits.indices {
      let from = min(max(waits[index].start, floor), end)
      let to = min(max(waits[index].start + waits[index].duration, from), end)
      (waits[index].start, waits[index].duration) = (from, to - from)
      floor = to
    }
    var steps = attempt.steps
    floor = start
    for index in steps.indices {
      steps[index].time = min(max(steps[index].time, floor), end)
      floor = steps[index].time
    }
    // Each kind is in time order already: merged, a wait before a step at the same time.
    var (wait, step) = (waits.startIndex, steps.startIndex)
    while wait < waits.endIndex || step < steps.endIndex {
      if step == steps.endIndex || (wait < waits.endIndex && waits[wait].start <= steps[step].time) {
        entries.append(.wait(waits[wait], track: track))
        wait += 1
      } else {
        entries.append(.step(steps[step], track: track))
        step += 1
      }
    }
  }

  /// Hands over the entries placed so far, in order, into `taken` (emptied first), and keeps
  /// none: for a reader that writes them as the run goes (the trace).
  mutating func takeEntries(into taken: inout [Entry]) {
    taken.removeAll(keepingCapacity: true)
    swap(&taken, &entries)
  }

  /// Places an attempt that ended (or that the run's end cut short).
  private mutating func add(_ attempt: Attempt) {
    entries.append(.attempt(attempt))
    if keepsAttempts { keptAttempts.append(attempt) }
  }

  /// The attempts, in the order they ended: those kept apart, or those of the entries.
  var attempts: [Attempt] {
    keepsAttempts ? keptAttempts : entries.compactMap { if case .attempt(let attempt) = $0 { attempt } else { nil } }
  }

  /// Where the running attempt of `test` is in `running`.
  private func index(of test: TestID) -> Int? { running.lastIndex { $0.test == test } }

  /// `date` in microseconds from the run's start.
  private mutating func offset(_ date: Date) -> Int64 {
    let origin = origin ?? date
    self.origin = origin
    return max(0, Int64((date.timeIntervalSince(origin) * 1_000_000).rounded()))
  }

  /// `date` in microseconds from the run's start, never before the last time on `track`.
  private mutating func time(_ date: Date, on track: Track) -> Int64 {
    let offset = offset(date)
    func raise(_ last: inout Int64) -> Int64 {
      last = max(offset, last)
      return last
    }
    let time = raise(&trackTimes[track, default: 0])  // one lookup of the track
    latest = max(latest, time)
    return time
  }
}

/// The one timeline of a run, shared by the reporters that draw it (the trace and the HTML
/// page): the first of them in the run's reporters places each event on it, once
/// (``record(_:)``), and each reads what it needs: the trace takes the entries as they are
/// placed, the page reads the attempts when the run ends.
final class SharedTimeline: Sendable {
  private let timeline: Mutex<(timeline: RunTimeline, closed: Bool, recorded: Int)>

  /// A timeline; with `keepingAttempts`, its attempts stay readable after the entries are taken.
  init(keepingAttempts: Bool = false) {
    var timeline = RunTimeline()
    timeline.keepsAttempts = keepingAttempts
    self.timeline = Mutex((timeline, false, 0))
  }

  /// Places one event.
  func record(_ event: Event) {
    timeline.withLock { state in
      guard !state.closed else { return }
      state.timeline.record(event)
      state.recorded += 1
    }
  }

  /// How many events were placed: one for each event of the run, however many reporters read it.
  var recorded: Int { timeline.withLock { $0.recorded } }

  /// Ends what is still open (``RunTimeline/close()``), once: later events are not placed.
  func close() {
    timeline.withLock { state in
      guard !state.closed else { return }
      state.closed = true
      state.timeline.close()
    }
  }

  /// Hands over the entries placed so far (``RunTimeline/takeEntries(into:)``).
  func takeEntries(into taken: inout [RunTimeline.Entry]) {
    timeline.withLock { $0.timeline.takeEntries(into: &taken) }
  }

  /// The attempts and the latest time seen.
  var attemptsAndLatest: (attempts: [RunTimeline.Attempt], latest: Int64) {
    timeline.withLock { ($0.timeline.attempts, $0.timeline.latest) }
  }
}
