import Foundation

/// How a lane's harness workers start and when each attempt in them is stopped: the kind
/// of worker a ``WorkerExecutor`` runs tests in.
struct HarnessWorkerKind: Sendable {
  /// The suites executable, started again as a worker.
  let executable: String
  /// The line a worker running tests one at a time writes to its output as each test starts
  /// (``WorkerMain/markerVariable``), unique to the executor so that no test prints it by chance.
  let marker: String
  let gracePeriod: Duration
  let timeLimitMargin: Duration
  let stop: StopRequest?
  /// Whether each test gets a fresh worker (`--isolation test`), started while the test
  /// before it runs (the spare).
  let freshWorkerPerTest: Bool

  /// A new worker: one that runs tests one at a time, or side by side.
  func connection(sideBySide: Bool = false) throws -> WorkerConnection {
    try WorkerConnection(executable: executable, marker: sideBySide ? nil : marker, gracePeriod: gracePeriod, stop: stop)
  }

  /// When a worker is stopped for `planned`: its time limit and the margin, from now.
  func deadline(of planned: Runner.PlannedTest) -> ContinuousClock.Instant? {
    planned.timeLimit.map { ContinuousClock().now + $0 + timeLimitMargin }
  }
}

/// A lane of harness workers, and what it knows of the tests it was handed: its workers, the
/// tests sent to them ahead, and the attempts side by side that run again after their worker
/// ended while they ran. One loop (``LaneWatch``) watches every worker, whichever the lane
/// waits for, and the lane carries out what ``AttemptFollowUp`` decides for each attempt its
/// worker's end cut short: the runner hears of each attempt's end once.
struct WorkerLane: WatchedLane {
  let kind: HarnessWorkerKind
  /// The worker running tests one at a time.
  var worker: WorkerConnection?
  /// Under `--isolation test`, the worker started for the next test while this one runs.
  var spare: WorkerConnection?
  /// The worker running `async` tests side by side, when one was started.
  var sideBySide: WorkerConnection?
  /// The attempts told why they run again: each is told once.
  var warnedOfRunningAgain: Set<TestID> = []
  /// The attempts side by side waiting to run again in halves after crashes that named none
  /// of them, in order: each group side by side with nothing else.
  private var halves: [[WorkerSupervision.Attempt]] = []
  /// The attempts of the half running again now.
  private var halfRunning: Set<TestID> = []
  /// The tests the runner said it hands over next, and the index of the first not sent yet.
  var prepared: Runner.Plan.PlannedTests?
  var nextToSend = 0

  init(kind: HarnessWorkerKind) {
    self.kind = kind
  }

  /// Runs one attempt of `planned` in the worker running tests one at a time (started now
  /// when there is none, or taken from the spare), streaming its issues and output to
  /// `events` as they happen; the tests prepared after it are sent ahead. What follows for
  /// the worker is as ``AttemptFollowUp`` decides: kept (told to resume after a failure),
  /// retired or replaced.
  mutating func run(_ planned: Runner.PlannedTest, events: EventSink) -> AttemptEnd {
    if let next = worker?.inFlight.first, next.id != planned.id {
      // The runner asked for a test other than the one the worker runs next: that worker
      // cannot be told to forget what it was sent.
      rewind()
      worker!.kill()
      worker = nil
    }
    if worker?.inFlight.isEmpty ?? true {
      // A retry was never prepared; the test asked for is almost always the next one.
      if planned.id.attempt == 1, let prepared,
         let index = prepared[nextToSend...].firstIndex(where: { $0.id == planned.id }) {
        nextToSend = index + 1
      }
      if worker != nil, !send(planned) {
        worker!.kill()
        worker = nil
      }
      if worker == nil {
        do {
          worker = try takeSpare() ?? kind.connection()
        } catch {
          return .couldNotStart(reason: "\(error)")
        }
        // A worker that dies before reading it is reported by the wait.
        _ = send(planned)
      }
    }
    if kind.freshWorkerPerTest && spare == nil {
      // The next test's worker starts while this one runs; one that cannot start now is
      // started (or reported) when the next test needs it.
      spare = try? kind.connection()
    }
    topUp()
    worker!.begin(planned, ref: worker!.inFlight.first?.ref, events: events, alone: true,
                  deadline: kind.deadline(of: planned))
    let (replies, finished, ended) = wait(\.worker)
    if !worker!.inFlight.isEmpty { worker!.inFlight.removeFirst() }
    // A reply read as the worker ended still says how the attempt ended.
    let end = Self.deliver(replies.first?.finished ?? finished.first)
    let reply = replies.first
    let followUp = AttemptFollowUp(after: .init(
      workerEnded: reply == nil || ended, workerStopped: worker!.stopped, workerLeftWork: reply?.retire != nil,
      freshWorkerPerTest: kind.freshWorkerPerTest))
    switch followUp.worker {
    case .replace:
      rewind()
      worker = nil
    case .retire:
      // One worker per test (`--isolation test`), the worker said it must not run another
      // test (`WorkerRetirement`), or it was sent a stop signal at the test's deadline as its
      // reply came: the next test gets a fresh one.
      rewind()
      retire(\.worker)
    case .keep:
      // The worker drops what it was sent until it reads this: the runner may run another
      // test next (a retry).
      guard reply?.paused == true else { break }
      rewind()
      _ = worker!.process.send(.resume)
    }
    return end
  }

  /// Remembers the tests the runner hands over next, to send them ahead (none with a fresh
  /// worker per test).
  mutating func prepare(_ planned: Runner.Plan.PlannedTests) {
    prepared = kind.freshWorkerPerTest ? planned[planned.startIndex..<planned.startIndex] : planned
    nextToSend = planned.startIndex
  }

  /// Retires every worker, and stops at once one still holding tests the runner never asked
  /// for (the run stopped).
  mutating func finish() {
    if worker?.inFlight.isEmpty == false {
      worker!.kill()
      worker = nil
    }
    if (sideBySide?.count ?? 0) > 0 {
      sideBySide!.kill()
      sideBySide = nil
    }
    for slot in Self.workerSlots { retire(slot) }
    forgetReruns()
    prepared = nil
  }

  static var workerSlots: [WritableKeyPath<WorkerLane, WorkerConnection?>] { [\.worker, \.spare, \.sideBySide] }

  /// Watches the lane's workers until an attempt the worker in `slot` replied for ended, one
  /// ended at its deadline and was left running, or that worker ended (how its attempts
  /// finish, and `ended` set).
  mutating func wait(_ slot: WritableKeyPath<WorkerLane, WorkerConnection?>)
    -> (replies: [WorkerMessages.Reply], finished: [WorkerSupervision.Finished], ended: Bool) {
    let exit = LaneWatch.watch(&self, until: slot)
    return self[keyPath: slot]!.waited(exited: exit)
  }

  /// Retires the worker in `slot`, if any, and forgets it: it is told to stop and watched
  /// to its exit, within the grace period, else stopped as at a deadline (SIGTERM, then
  /// SIGKILL); what it still says is dropped, and a failing end of its own is a failure
  /// outside every test (``WorkerConnection/endedAfterItsTests(_:telling:)``). One that holds a
  /// test left running past its time limit is stopped at once: it would not stop by itself.
  mutating func retire(_ slot: WritableKeyPath<WorkerLane, WorkerConnection?>) {
    guard self[keyPath: slot] != nil else { return }
    defer { self[keyPath: slot] = nil }
    guard self[keyPath: slot]!.beginRetiring() else { return self[keyPath: slot]!.kill() }
    let sink = self[keyPath: slot]!.messages.others
    self[keyPath: slot]!.messages.others = nil
    while true {
      if let exit = LaneWatch.watch(&self, until: slot) {
        return self[keyPath: slot]!.endedAfterItsTests(exit, telling: sink)
      }
      _ = self[keyPath: slot]!.messages.takeReplies()
    }
  }

  /// The spare worker, which becomes the caller's.
  mutating func takeSpare() -> WorkerConnection? {
    defer { spare = nil }
    return spare
  }

  /// Sends `test` to the worker; `false` when it no longer reads (it died).
  mutating func send(_ planned: Runner.PlannedTest, planIndex: Int? = nil) -> Bool {
    guard let ref = worker!.process.send(planned) else { return false }
    worker!.inFlight.append((planned.id, planIndex, ref))
    return true
  }

  /// Sends prepared tests until the worker holds ``WorkerExecutor/pipelineDepth`` of them.
  /// A worker that died stops taking them; its session reports the death.
  mutating func topUp() {
    guard let prepared else { return }
    while let worker, worker.inFlight.count < WorkerExecutor.pipelineDepth, nextToSend < prepared.endIndex {
      let planned = prepared[nextToSend]
      // A skipped test is reported by the runner and never runs.
      guard planned.test.skipReason != nil || send(planned, planIndex: nextToSend) else { return }
      nextToSend += 1
    }
  }

  /// Forgets the tests the worker was sent and has not run (it died, drops them after a
  /// failure, or holds tests the runner did not ask for): they are sent again when the
  /// runner asks for them.
  mutating func rewind() {
    guard let waiting = worker?.inFlight else { return }
    if let first = waiting.lazy.compactMap(\.planIndex).first { nextToSend = first }
    worker!.inFlight = []
  }

  /// Sends what an attempt held, and the note of how it ended, to its events; returns how it ended.
  static func deliver(_ finished: WorkerSupervision.Finished?) -> AttemptEnd {
    switch finished {
    case .ended(let attempt, let end, let note):
      for event in attempt.held { attempt.sink?.send(event) }
      if let note { attempt.sink?(.issueRecorded(attempt.planned.id, note)) }
      return end
    case .runAgain, nil:
      return .couldNotStart(reason: "the worker ended without saying how the test ended")
    }
  }

  // MARK: Side by side

  /// Whether another test may start side by side now: not while halves of tests run again
  /// (each beside nothing else), nor while the worker running them retires
  /// (``WorkerRetirement``), until the tests it runs ended.
  var takesSideBySide: Bool {
    halves.isEmpty && halfRunning.isEmpty && !(sideBySide?.retiring ?? false)
  }

  /// Starts `planned` side by side with the tests running so (``WorkerRequest/start(_:)``), in
  /// the side-by-side worker, started now when there is none; returns how the attempt ended
  /// when it could not start.
  mutating func startSideBySide(_ planned: Runner.PlannedTest, events: EventSink) -> AttemptEnd? {
    if sideBySide == nil {
      do {
        sideBySide = try kind.connection(sideBySide: true)
      } catch {
        return .couldNotStart(reason: "\(error)")
      }
    }
    // A worker that dies before reading it is reported by the wait.
    let ref = sideBySide!.process.send(planned, sideBySide: true)
    sideBySide!.begin(planned, ref: ref, events: events, alone: false, deadline: kind.deadline(of: planned))
    return nil
  }

  /// Waits until at least one attempt side by side ended, and says how each that did ended;
  /// none once none runs or waits to run again. A worker that ended is forgotten (the next
  /// test starts a fresh one); a retiring one is retired once its last test ended.
  ///
  /// An attempt the worker's end cut short, and not for it, runs again as ``AttemptFollowUp``
  /// decided, told why once: at once, beside the others, when the test that ended the worker
  /// is known; else in halves of the attempts that crash named none of, each half side by side
  /// with nothing else, and a half in which the worker crashes again halved again, until the
  /// test that crashes it runs alone. A crash among 256 then costs about 2 × 8 rounds, not
  /// 255 tests one after another.
  mutating func waitSideBySide() -> [SideBySideEnd] {
    var ends: [SideBySideEnd] = []
    while ends.isEmpty {
      guard (sideBySide?.count ?? 0) > 0 else {
        guard !halves.isEmpty else { return ends }
        for attempt in halves.removeFirst() {
          halfRunning.insert(attempt.planned.id)
          ends += runAgain(attempt)
        }
        continue
      }
      var (replies, finished, ended) = wait(\.sideBySide)
      // A worker sent a stop signal (a test's deadline, its reply in the same read) starts no
      // other test: it is watched to its end (the grace period at most), and its tests still
      // running end with it.
      while !ended && sideBySide!.stopped {
        let more = wait(\.sideBySide)
        replies += more.replies
        finished += more.finished
        ended = more.ended
      }
      switch AttemptFollowUp(after: .init(workerEnded: ended, workerLeftWork: sideBySide!.retiring)).worker {
      case .replace:
        sideBySide = nil
      case .retire where sideBySide!.count == 0:
        retire(\.sideBySide)
      case .retire, .keep:
        break
      }
      var unnamed: [WorkerSupervision.Attempt] = []
      for finished in replies.map(\.finished) + finished {
        switch finished {
        case .ended(let attempt, _, _):
          halfRunning.remove(attempt.planned.id)
          ends.append(SideBySideEnd(test: attempt.planned.id, end: Self.deliver(finished)))
        case .runAgain(let attempt, let note, let company):
          let id = attempt.planned.id
          halfRunning.remove(id)
          // Said once: a test run again in halves after crashes that named no test would be
          // warned at each crash of its half.
          if let note, warnedOfRunningAgain.insert(id).inserted { attempt.sink?(.issueRecorded(id, note)) }
          // What it kept of its run in this worker (output held past the worker's exit) stays its own.
          for issue in attempt.kept { attempt.sink?(.issueRecorded(id, issue)) }
          if company == .besideOthers { ends += runAgain(attempt) } else { unnamed.append(attempt) }
        }
      }
      let half = (unnamed.count + 1) / 2
      halves.insert(contentsOf: [Array(unnamed[..<half]), Array(unnamed[half...])].filter { !$0.isEmpty }, at: 0)
    }
    return ends
  }

  /// Starts `attempt`'s test again side by side; its end when it could not start.
  private mutating func runAgain(_ attempt: WorkerSupervision.Attempt) -> [SideBySideEnd] {
    let id = attempt.planned.id
    // An attempt side by side always has its sink: it was begun with the runner's.
    guard let sink = attempt.sink else { return [SideBySideEnd(test: id, end: .couldNotStart(reason: "\(id.path) has no sink"))] }
    guard let end = startSideBySide(attempt.planned, events: sink) else { return [] }
    halfRunning.remove(id)
    return [SideBySideEnd(test: id, end: end)]
  }

  /// Forgets the attempts waiting to run again: the run ends.
  private mutating func forgetReruns() {
    halves = []
    halfRunning = []
    warnedOfRunningAgain = []
  }
}
