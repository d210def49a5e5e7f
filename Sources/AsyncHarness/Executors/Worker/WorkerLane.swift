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

/// A lane of harness workers: the driver of its ``WorkerLaneMachine``, which decides, while
/// the lane holds the processes and carries out what the machine asks (start, send, begin,
/// wait, kill, retire). One loop (``LaneWatch``) watches every worker, whichever the lane
/// waits for, and the lane reruns what ``AttemptFollowUp`` decides for each attempt its
/// worker's end cut short: the runner hears of each attempt's end once.
struct WorkerLane: WatchedLane, LaneDriver {
  let kind: HarnessWorkerKind
  /// What the lane decides.
  var machine: WorkerLaneMachine
  /// The worker running tests one at a time.
  var worker: WorkerConnection?
  /// Under `--isolation test`, the worker started for the next test while this one runs.
  var spare: WorkerConnection?
  /// The worker running `async` tests side by side, when one was started.
  var sideBySide: WorkerConnection?
  /// Where the attempt the runner asked for alone streams its events, while it is begun.
  private var askedEvents: EventSink?
  /// The attempts that ended while the machine's commands were carried out (delivered side
  /// by side, or that could not start), for the runner.
  private var ends: [SideBySideEnd] = []

  init(kind: HarnessWorkerKind) {
    self.kind = kind
    machine = WorkerLaneMachine(freshWorkerPerTest: kind.freshWorkerPerTest, pipelineDepth: WorkerExecutor.pipelineDepth)
  }

  /// Runs one attempt of `planned` in the worker running tests one at a time (started now
  /// when there is none, or taken from the spare), streaming its issues and output to
  /// `events` as they happen; the tests prepared after it are sent ahead. What follows for
  /// the worker is as the machine decides: kept (told to resume after a failure), retired or
  /// replaced.
  mutating func run(_ planned: Runner.PlannedTest, events: EventSink) -> AttemptEnd {
    askedEvents = events
    defer { askedEvents = nil }
    if let end = driven(.asked(planned)).first { return end.end }
    let (replies, finished, ended) = wait(\.worker)
    let reply = replies.first
    // A reply read as the worker ended still says how the attempt ended.
    let end = driven(.endedAlone(reply?.finished ?? finished.first,
                                 .init(workerEnded: reply == nil || ended, workerStopped: worker!.stopped,
                                       workerLeftWork: reply?.retire != nil, paused: reply?.paused == true))).first
    return end?.end ?? .couldNotStart(reason: "the lane ended \(planned.id.path) without an end")
  }

  /// Remembers the tests the runner hands over next, to send them ahead (none with a fresh
  /// worker per test).
  mutating func prepare(_ planned: Runner.Plan.PlannedTests) {
    drive(.prepared(planned))
  }

  /// Retires every worker, and stops at once one still holding tests the runner never asked
  /// for (the run stopped).
  mutating func finish() {
    drive(.finishing(besideRunning: (sideBySide?.count ?? 0) > 0))
  }

  static var workerSlots: [WritableKeyPath<WorkerLane, WorkerConnection?>] { [\.worker, \.spare, \.sideBySide] }

  /// Where the lane holds the worker of `slot`.
  private static func path(_ slot: WorkerLaneMachine.Slot) -> WritableKeyPath<WorkerLane, WorkerConnection?> {
    switch slot {
    case .worker: \.worker
    case .spare: \.spare
    case .sideBySide: \.sideBySide
    }
  }

  /// The worker in `path` exited while the lane waited for another: the machine decides
  /// what its end means (``WorkerLaneMachine/Event/endedUnawaited(_:_:)``).
  mutating func endedUnawaited(_ path: WritableKeyPath<WorkerLane, WorkerConnection?>, _ exit: ProcessEnding) {
    drive(.endedUnawaited(Self.slot(path), self[keyPath: path]!.workerEnded(exit)))
  }

  /// The slot of the lane's worker at `path`.
  private static func slot(_ path: WritableKeyPath<WorkerLane, WorkerConnection?>) -> WorkerLaneMachine.Slot {
    WorkerLaneMachine.Slot.allCases.first { Self.path($0) == path }!
  }

  /// Drives the machine from `event` (``LaneDriver/drive(_:)``) and takes the ends of the
  /// attempts that ended meanwhile.
  private mutating func driven(_ event: WorkerLaneMachine.Event) -> [SideBySideEnd] {
    drive(event)
    defer { ends = [] }
    return ends
  }

  /// Carries out one of the machine's commands; returns its answer when it has one.
  mutating func carryOut(_ command: WorkerLaneMachine.Command) -> WorkerLaneMachine.Event? {
    switch command {
    case .spawn(let slot):
      do {
        self[keyPath: Self.path(slot)] = try kind.connection(sideBySide: slot == .sideBySide)
        return .spawned(slot)
      } catch {
        return .couldNotSpawn(slot, reason: "\(error)")
      }
    case .takeSpare:
      worker = spare
      spare = nil
    case .send(let planned, let ref, let answered):
      let taken = worker?.process.send(planned, ref: ref) == true
      if answered { return taken ? .taken : .refused }
    case .begin(let planned, let ref):
      worker!.begin(planned, ref: ref, events: askedEvents!, alone: true, deadline: kind.deadline(of: planned))
    case .resume:
      _ = worker!.process.send(.resume)
    case .start(let planned, let ref, let sink):
      // A worker that dies before reading it is reported by the wait.
      _ = sideBySide!.process.send(planned, ref: ref, sideBySide: true)
      sideBySide!.begin(planned, ref: ref, events: sink, alone: false, deadline: kind.deadline(of: planned))
    case .waitBeside:
      waitedSideBySide()
    case .deliver(let attempt, let end, let note):
      for event in attempt.held { attempt.sink?.send(event) }
      if let note { attempt.sink?(.issueRecorded(attempt.planned.id, note)) }
      ends.append(SideBySideEnd(test: attempt.planned.id, end: end))
    case .tell(let attempt, let issues):
      for issue in issues { attempt.sink?(.issueRecorded(attempt.planned.id, issue)) }
    case .couldNotStart(let id, let reason):
      ends.append(SideBySideEnd(test: id, end: .couldNotStart(reason: reason)))
    case .kill(let slot):
      self[keyPath: Self.path(slot)]?.kill()
      self[keyPath: Self.path(slot)] = nil
    case .retire(let slot):
      retire(Self.path(slot))
    case .forget(let slot):
      self[keyPath: Self.path(slot)] = nil
    case .reportEnd(let slot, let exit):
      self[keyPath: Self.path(slot)]!.endedAfterItsTests(exit)
    }
    return nil
  }

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
  /// SIGKILL); what it still says is dropped, and the machine judges its end
  /// (``WorkerLaneMachine/Event/retired(_:_:)``). One that holds a test left running past its
  /// time limit is stopped at once: it would not stop by itself.
  mutating func retire(_ slot: WritableKeyPath<WorkerLane, WorkerConnection?>) {
    guard self[keyPath: slot] != nil else { return }
    defer { self[keyPath: slot] = nil }
    guard self[keyPath: slot]!.beginRetiring() else { return self[keyPath: slot]!.kill() }
    let sink = self[keyPath: slot]!.messages.others
    self[keyPath: slot]!.messages.others = nil
    while true {
      if let exit = LaneWatch.watch(&self, until: slot) {
        self[keyPath: slot]!.messages.others = sink
        drive(.retired(Self.slot(slot), self[keyPath: slot]!.workerEnded(exit)))
        return
      }
      _ = self[keyPath: slot]!.messages.takeReplies()
    }
  }

  // MARK: Side by side

  /// Whether another test may start side by side now (``WorkerLaneMachine/takesSideBySide(workerRetiring:)``).
  var takesSideBySide: Bool {
    machine.takesSideBySide(workerRetiring: sideBySide?.retiring ?? false)
  }

  /// Starts `planned` side by side with the tests running so (``WorkerRequest/start(_:)``), in
  /// the side-by-side worker, started now when there is none, as the machine decides; returns
  /// how the attempt ended when it could not start.
  mutating func startSideBySide(_ planned: Runner.PlannedTest, events: EventSink) -> AttemptEnd? {
    driven(.askedBeside(planned, sink: events)).first?.end
  }

  /// Waits until at least one attempt side by side ended, and says how each that did ended;
  /// none once none runs or waits to run again. A worker that ended is forgotten (the next
  /// test starts a fresh one); a retiring one is retired once its last test ended. An attempt
  /// the worker's end cut short, and not for it, runs again as the machine decides
  /// (``WorkerLaneMachine``: beside the others, or in halves).
  mutating func waitSideBySide() -> [SideBySideEnd] {
    defer { ends = [] }
    // Until an attempt ended; or none runs, and none waits to run again.
    while ends.isEmpty, drive(.awaitingBeside(running: sideBySide?.count ?? 0)) {}
    return ends
  }

  /// Waits for the side-by-side worker and carries out what follows.
  private mutating func waitedSideBySide() {
    let (replies, finished, ended) = wait(\.sideBySide)
    drive(.waitedBeside(finished: replies.map(\.finished) + finished, workerEnded: ended,
                                  workerStopped: sideBySide!.stopped, workerLeftWork: sideBySide!.retiring,
                                  running: sideBySide!.count))
  }
}
