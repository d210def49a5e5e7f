/// The trace (``TraceReporter``) as the run goes: each thing on the run's timeline is written
/// as soon as it is placed, on the thread that sends the events (in a worker run, one that
/// mostly waits for its worker), so writing the file when the run ends, which the run waits
/// for, is little more than a copy. Each event is written whole but for its track's `tid`,
/// its last member, known only then: a lane's sub-tracks take the `tid`s after the last
/// lane's, and the last lane may start its first test late.
struct TraceDocument: EndOfRunContents, ~Copyable {
  /// The trace's pid, this process's.
  let processID: Int
  /// The run's timeline, and whether this trace places the events on it (else another reader
  /// does, before this one reads them).
  private let timeline: SharedTimeline
  private let feeds: Bool
  /// The timeline's entries taken to be written, kept to reuse its storage.
  private var taken: [RunTimeline.Entry] = []
  /// The events written so far, one after another, each open before its `tid`
  /// (``JSONText/openObject(_:)``).
  private var events = JSONText()
  /// Where each event of `events` ends, and its track.
  private var pieces: [(end: Int, track: RunTimeline.Track)] = []
  /// The tracks that hold an attempt.
  private var tracks: Set<RunTimeline.Track> = []

  init(processID: Int, timeline: SharedTimeline = SharedTimeline(), feeds: Bool = true) {
    self.processID = processID
    self.timeline = timeline
    self.feeds = feeds
  }

  mutating func record(_ event: Event) {
    if feeds { timeline.record(event) }
    writeTakenEntries()
  }

  mutating func close() {
    timeline.close()
    writeTakenEntries()
  }

  /// Writes the trace's one JSON object: the metadata naming the process (`processName`) and
  /// its tracks and ordering the tracks, then the timeline's events.
  func write(processName: String, to json: inout JSONText) {
    let ordered = tracks.sorted()
    let ids = Self.trackIDs(ordered)
    json.object { json in
      json.field("displayTimeUnit", "ms")
      json.field("traceEvents") { json in
        json.array { json in
          json.object { metadata("process_name", name: processName, track: 0, to: &$0) }
          json.object { metadata("thread_name", name: "suites", track: 0, to: &$0) }
          json.object { sortIndex(0, track: 0, to: &$0) }
          for (index, track) in ordered.enumerated() {
            let id = ids[track] ?? 0
            json.object { metadata("thread_name", name: track.name, track: id, to: &$0) }
            json.object { sortIndex(index + 1, track: id, to: &$0) }
          }
          events.withUnsafeBytes { text in
            var start = 0
            for (end, track) in pieces {
              json.object(continuing: UnsafeBufferPointer(rebasing: text[start..<end])) { $0.field("tid", ids[track] ?? 0) }
              start = end
            }
          }
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

  private mutating func writeTakenEntries() {
    timeline.takeEntries(into: &taken)
    for entry in taken {
      let track = write(entry)
      pieces.append((events.count, track))
    }
  }

  /// Writes the members of `entry`'s event, keys sorted but `tid`, which comes last, and is
  /// left out; returns its track (the suites' for a suite's span).
  private mutating func write(_ entry: RunTimeline.Entry) -> RunTimeline.Track {
    let processID = processID
    var track = RunTimeline.Track(lane: 0)
    events.openObject { json in
      switch entry {
      case .attempt(let attempt):
        let test = attempt.test
        json.field("args") { json in
          json.object { args in
            args.field("attempt", test.attempt)
            args.field("id") { $0.string(test.testPath.escapedSuite, "/", test.testPath.escapedName) }  // the ID, unjoined
            args.field("repetition", test.repetition)
            args.field("retry", test.attempt - 1)
            if let token = test.replayToken(steps: attempt.scheduleTrace) { args.field("schedule", token) }
            let verdict = attempt.verdict?.rawValue ?? "unfinished"
            args.field("verdict", attempt.retried ? "\(verdict) (retried)" : verdict)
            args.field("waiter", test.host)
          }
        }
        json.field("cat", "test")
        json.field("dur", Int(attempt.duration))
        json.field("name") { $0.path(of: test) }
        Self.fields("X", processID: processID, at: attempt.start, to: &json)
        track = attempt.track
      case .wait(let wait, let waitTrack):
        json.field("args") { json in
          json.object { args in
            args.field("outcome", wait.outcome)
            args.field("test") { $0.path(of: wait.test) }
            args.field("waiter", wait.test.host)
          }
        }
        json.field("cat", "wait")
        json.field("dur", Int(wait.duration))
        json.field("name", wait.awaited)
        Self.fields("X", processID: processID, at: wait.start, to: &json)
        track = waitTrack
      case .step(let step, let stepTrack):
        json.field("args") { json in
          json.object { args in
            args.field("step", step.number)
            args.field("test") { $0.path(of: step.test) }
            args.field("virtualTime", step.virtualTime)
          }
        }
        json.field("cat", "step")
        json.field("name", step.ran)
        Self.fields("i", processID: processID, at: step.time, threadScoped: true, to: &json)
        track = stepTrack
      case .instant(let issue, let test, let instantTrack, let time):
        json.field("args") { json in
          json.object { args in
            args.field("message", CappedText.capped(issue.message, limit: TraceReporter.messageLimit))
            args.field("test") { $0.path(of: test) }
          }
        }
        json.field("cat", "issue")
        json.field("name", issue.kind.rawValue)
        Self.fields("i", processID: processID, at: time, threadScoped: true, to: &json)
        track = instantTrack
      case .workerReplaced(let reason, let test, let replacedTrack, let time):
        json.field("args") { json in
          json.object { args in
            args.field("reason", reason)
            args.field("test") { $0.path(of: test) }
          }
        }
        json.field("cat", "worker")
        json.field("name", "workerReplaced")
        Self.fields("i", processID: processID, at: time, threadScoped: true, to: &json)
        track = replacedTrack
      case .suite(let suite, let id, let begins, let time):
        json.field("cat", "suite")
        json.field("id", id)
        json.field("name", suite.description)
        Self.fields(begins ? "b" : "e", processID: processID, at: time, to: &json)
      }
    }
    if case .attempt(let attempt) = entry { tracks.insert(attempt.track) }
    return track
  }

  /// A metadata event naming the process or a track.
  private func metadata(_ kind: StaticString, name: String, track: Int, to json: inout JSONText) {
    json.field("args") { json in json.object { $0.field("name", name) } }
    json.field("name") { $0.string(kind) }
    Self.fields("M", processID: processID, at: 0, to: &json)
    json.field("tid", track)
  }

  /// A metadata event placing a track among the others.
  private func sortIndex(_ index: Int, track: Int, to json: inout JSONText) {
    json.field("args") { json in json.object { $0.field("sort_index", index) } }
    json.field("name", "thread_sort_index")
    Self.fields("M", processID: processID, at: 0, to: &json)
    json.field("tid", track)
  }

  /// The members every event has, after `name` in key order but `tid`: `ph`, `pid`, the
  /// instant's scope (`"s":"t"`, its track) when `threadScoped`, `ts`.
  private static func fields(_ phase: StaticString, processID: Int, at time: Int64, threadScoped: Bool = false,
                             to json: inout JSONText) {
    json.field("ph") { $0.string(phase) }
    json.field("pid", processID)
    if threadScoped { json.field("s", "t") }
    json.field("ts", Int(time))
  }
}

extension JSONText {
  /// A test's `Suite/test`, as the trace names its attempts.
  fileprivate mutating func path(of test: TestID) { string(test.suite, "/", test.name) }
}
