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
    try WorkerConnection(executable: executable, marker: sideBySide ? nil : marker, stop: stop)
  }
}

/// A lane of harness workers: the driver of its ``WorkerLaneMachine``, which knows and
/// decides, while the lane holds the processes and carries out what the machine asks (start,
/// send, wait, kill, retire, report). One loop (``LaneWatch``) watches every worker, whichever
/// the lane waits for, feeding what it reads to the machine's state of that worker; the
/// machine reruns what ``AttemptFollowUp`` decides for each attempt its worker's end cut short:
/// the runner hears of each attempt's end once.
struct WorkerLane: WatchedLane, LaneDriver {
  typealias Slot = WorkerLaneMachine.Slot

  let kind: HarnessWorkerKind
  /// What the lane knows and decides.
  var machine: WorkerLaneMachine
  /// The lane's worker processes, by slot: the worker running tests one at a time
  /// (``WorkerLaneMachine/Slot/worker``), under `--isolation test` the spare started for the
  /// next test while one runs, and the worker running `async` tests side by side.
  private var processes: [Slot: WorkerConnection] = [:]
  /// The attempts that ended while the machine's commands were carried out, for the runner.
  private var ends: [SideBySideEnd] = []

  init(kind: HarnessWorkerKind) {
    self.kind = kind
    machine = WorkerLaneMachine(freshWorkerPerTest: kind.freshWorkerPerTest, pipelineDepth: WorkerExecutor.pipelineDepth,
                                gracePeriod: kind.gracePeriod, timeLimitMargin: kind.timeLimitMargin, marker: kind.marker)
  }

  /// Runs one attempt of `planned` in the worker running tests one at a time (started now
  /// when there is none, or taken from the spare), streaming its issues and output to
  /// `events` as they happen; the tests prepared after it are sent ahead. What follows for
  /// the worker is as the machine decides: kept (told to resume after a failure), retired or
  /// replaced.
  mutating func run(_ planned: Runner.PlannedTest, events: EventSink) -> AttemptEnd {
    driven(.asked(planned, sink: events)).first?.end ?? .couldNotStart(reason: "the lane ended \(planned.id.path) without an end")
  }

  /// Remembers the tests the runner hands over next, to send them ahead (none with a fresh
  /// worker per test).
  mutating func prepare(_ planned: Runner.Plan.PlannedTests) {
    drive(.prepared(planned))
  }

  /// Retires every worker, and stops at once one still holding tests the runner never asked
  /// for (the run stopped).
  mutating func finish() {
    drive(.finishing)
  }

  // MARK: The lane's loop

  var slotsOfRunningWorkers: [Slot] {
    Slot.allCases.filter { processes[$0].map { $0.watch.exit == nil } == true }
  }

  mutating func withWatch<Result>(_ slot: Slot, _ body: (inout WorkerWatch, inout WorkerMessages, inout WorkerSupervision) -> Result)
    -> Result {
    Self.withWatch(of: slot, &processes, &machine, body)
  }

  /// The watch of the worker in `slot`, with its decoder and supervision, which are its
  /// lane's machine's.
  private static func withWatch<Result>(of slot: Slot, _ processes: inout [Slot: WorkerConnection],
                                        _ machine: inout WorkerLaneMachine,
                                        _ body: (inout WorkerWatch, inout WorkerMessages, inout WorkerSupervision) -> Result)
    -> Result {
    machine.reading(slot) { messages, supervision in body(&processes[slot]!.watch, &messages, &supervision) }
  }

  /// The worker in `slot` exited while the lane waited for another: the machine decides
  /// what its end means (``WorkerLaneMachine/Event/endedUnawaited(_:_:)``).
  mutating func endedUnawaited(_ slot: Slot, _ exit: ProcessEnding) {
    drive(.endedUnawaited(slot, exit))
  }

  mutating func timePassed(_ slot: Slot, to now: ContinuousClock.Instant, interrupt: Int32?) {
    drive(.timePassed(slot, to: now, interrupt: interrupt))
  }

  // MARK: Commands

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
        processes[slot] = try kind.connection(sideBySide: slot == .sideBySide)
        return .spawned(slot)
      } catch {
        return .couldNotSpawn(slot, reason: "\(error)")
      }
    case .takeSpare:
      processes[.worker] = processes.removeValue(forKey: .spare)
    case .send(let planned, let ref, let answered):
      let taken = processes[.worker]?.process.send(planned, ref: ref) == true
      if answered { return taken ? .taken : .refused }
    case .begin:
      return waited(.worker)
    case .resume:
      _ = processes[.worker]!.process.send(.resume)
    case .start(let planned, let ref):
      // A worker that dies before reading it is reported by the wait.
      _ = processes[.sideBySide]!.process.send(planned, ref: ref, sideBySide: true)
    case .waitBeside:
      return waited(.sideBySide)
    case .deliver(let attempt, let end, let note):
      for event in attempt.held { attempt.sink?.send(event) }
      if let note { attempt.sink?(.issueRecorded(attempt.planned.id, note)) }
      ends.append(SideBySideEnd(test: attempt.planned.id, end: end))
    case .tell(let attempt, let issues):
      for issue in issues { attempt.sink?(.issueRecorded(attempt.planned.id, issue)) }
    case .couldNotStart(let id, let reason):
      ends.append(SideBySideEnd(test: id, end: .couldNotStart(reason: reason)))
    case .kill(let slot):
      processes[slot]?.kill()
      processes[slot] = nil
    case .retire(let slot):
      retire(slot)
    case .forget(let slot):
      processes[slot] = nil
    case .report(let failure, let sink):
      sink(.outsideFailure(failure))
    case .signal(let slot, let signal):
      processes[slot]?.process.signal(signal)
    }
    return nil
  }

  /// Watches the lane's workers until the wait for the one in `slot` is over: an attempt it
  /// replied for ended, one ended at its deadline and was left running, or it exited.
  private mutating func waited(_ slot: Slot) -> WorkerLaneMachine.Event {
    let exit = LaneWatch.watch(&self, until: slot)
    return .waited(slot, exit: exit, outputHeld: processes[slot]!.watch.outputHeld)
  }

  /// Retires the worker in `slot`: it is told to stop and watched to its exit (its machine
  /// stops it as at a deadline past the grace period), the machine told of each wait's end
  /// until it forgets the worker.
  private mutating func retire(_ slot: Slot) {
    processes[slot]?.tellToStop()
    while processes[slot] != nil { drive(waited(slot)) }
  }

  // MARK: Side by side

  /// Whether another test may start side by side now (``WorkerLaneMachine/takesSideBySide``).
  var takesSideBySide: Bool { machine.takesSideBySide }

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
    while ends.isEmpty, drive(.awaitingBeside) {}
    return ends
  }
}
