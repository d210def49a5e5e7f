/// What a lane of harness workers knows and decides, as a plain value: which worker runs the
/// test the runner asks for, which tests are sent ahead and which are sent again, what becomes
/// of each worker after an attempt, and which attempts run again, and beside what, after their
/// worker's end cut them short. It holds each worker's state (``WorkerState``: its attempts,
/// their deadlines and the interrupt in its ``WorkerSupervision``, how its channel is read),
/// which the lane's loop feeds what it reads (``reading(_:_:)``), and no process, descriptor or
/// thread: it is told what happened (``Event``) and answers with what to do (``Command``),
/// which its driver, ``WorkerLane``, carries out with the lane's processes, so that every
/// transition is tried directly (`WorkerLaneMachineTests`). It reads the clock only to set a
/// deadline (an attempt's, a retiring worker's); the loop tells it the time as it passes.
///
/// ```
/// runner asks for a test alone ─▶ kill a worker that holds others first; send it to the
///   worker (answered: refused ─▶ kill, start another), else take the spare or start one
///   (answered: started, or the attempt could not start) ─▶ start a spare (answered) ─▶
///   send the prepared tests ahead ─▶ begin (answered: waited, once the reply or the
///   worker's end came) ─▶ deliver its end ─▶ keep (resume after a failure) · retire ·
///   forget, as AttemptFollowUp decides
/// runner asks for a test side by side ─▶ start it, in a worker started for it when there
///   is none (answered: started, or the attempt could not start)
/// awaiting side by side ─▶ wait (answered: waited), or start the next half, or nothing left
/// waited side by side ─▶ forget or retire the worker; deliver each end; tell each attempt
///   that runs again why, once; start it again beside the others, or keep it for a half
/// a worker not waited for ended ─▶ holding work, or before any test: kept, its end heard
///   by the test that runs in it next; else its end is its own: judged, forgotten
/// a worker retiring waited ─▶ what it said dropped; once it exited, its end is its own: judged
/// time passed, or the run interrupted ─▶ signal a worker past its deadline or interrupted
/// the run ends ─▶ kill a worker holding tests never asked for, retire every worker
/// ```
///
/// A command that can fail or waits (``Command/spawn(_:)``, a ``Command/send(_:ref:answered:)``
/// that is `answered`, ``Command/begin(_:ref:)``, ``Command/waitBeside``) is the last of its
/// list, and its driver answers it with the next event.
struct WorkerLaneMachine: LaneMachine {
  /// Whether each test gets a fresh worker (`--isolation test`).
  let freshWorkerPerTest: Bool
  /// How many requests the worker running tests one at a time holds at most.
  let pipelineDepth: Int
  /// How long a stopped worker has between SIGTERM and SIGKILL.
  let gracePeriod: Duration
  /// How long past its time limit a test runs before its worker is stopped.
  let timeLimitMargin: Duration
  /// The line a worker running tests one at a time writes to its output as each test starts.
  let marker: [UInt8]?
  /// The lane's workers, by slot.
  private(set) var workers: [Slot: WorkerState] = [:]
  /// The attempts to start side by side once the worker started for them did.
  private var toStart: [(planned: Runner.PlannedTest, sink: EventSink?)] = []
  /// The requests the worker running tests one at a time holds, in the order it runs them.
  private(set) var sent: [Sent] = []
  /// The tests the runner said it hands over next, and the index of the first not sent yet.
  private var prepared: Runner.Plan.PlannedTests?
  private var nextToSend = 0
  /// The last reference given to a request on any worker's channel.
  private var lastRef = 0
  /// The test asked for alone while an answer is awaited, and where its events go.
  private var asked: (planned: Runner.PlannedTest, sink: EventSink)?
  /// The test begun alone last.
  private var begun: TestID?
  /// The attempts told why they run again: each is told once.
  private var warnedOfRunningAgain: Set<TestID> = []
  /// The attempts side by side waiting to run again in halves after crashes that named none
  /// of them, in order: each group side by side with nothing else.
  private var halves: [[WorkerSupervision.Attempt]] = []
  /// The attempts of the half running again now.
  private var halfRunning: Set<TestID> = []
  /// The attempts side by side that finished while their worker, sent a stop signal, is
  /// watched to its end.
  private var finishedBeside: [WorkerSupervision.Finished] = []

  init(freshWorkerPerTest: Bool, pipelineDepth: Int, gracePeriod: Duration = .seconds(1),
       timeLimitMargin: Duration = .milliseconds(500), marker: String? = nil) {
    self.freshWorkerPerTest = freshWorkerPerTest
    self.pipelineDepth = pipelineDepth
    self.gracePeriod = gracePeriod
    self.timeLimitMargin = timeLimitMargin
    self.marker = marker.map { Array($0.utf8) }
  }

  /// Whether another test may start side by side now: not while halves of tests run again
  /// (each beside nothing else), nor while the side-by-side worker must retire
  /// (``WorkerState/mustRetire``), until the tests it runs ended.
  var takesSideBySide: Bool {
    halves.isEmpty && halfRunning.isEmpty && workers[.sideBySide]?.mustRetire != true
  }

  /// Hands the decoder and supervision of the worker in `slot` to `body`: the lane's loop
  /// feeds them what it reads of that worker (``WorkerWatch``); the time and the interrupt
  /// come as events (``Event/timePassed(_:to:interrupt:)``).
  mutating func reading<Result>(_ slot: Slot, _ body: (inout WorkerMessages, inout WorkerSupervision) -> Result) -> Result {
    workers[slot]!.reading(body)
  }

  /// Whether the lane holds a worker in `slot` that is not being retired.
  private func holds(_ slot: Slot) -> Bool {
    workers[slot].map { !$0.isRetiring } == true
  }

  /// What to do now that `event` happened.
  mutating func handle(_ event: Event) -> [Command] {
    switch event {
    case .prepared(let planned):
      prepared = freshWorkerPerTest ? planned[planned.startIndex..<planned.startIndex] : planned
      nextToSend = planned.startIndex
      return []
    case .asked(let planned, let sink):
      return ask(planned, sink: sink)
    case .spawned(let slot):
      workers[slot] = WorkerState(gracePeriod: gracePeriod, marker: slot == .sideBySide ? nil : marker)
      return started(slot)
    case .couldNotSpawn(.spare, _):
      // One that cannot start now is started (or reported) when the next test needs it.
      return sendAheadAndBegin()
    case .couldNotSpawn(.sideBySide, let reason):
      defer { toStart = [] }
      return toStart.map { couldNotStart($0.planned.id, reason: reason) }
    case .couldNotSpawn(_, let reason):
      let id = asked!.planned.id
      asked = nil
      rewind()
      return [.couldNotStart(id, reason: reason)]
    case .taken:
      return startSpare()
    case .refused:
      rewind()
      return [kill(.worker)] + place(asked!.planned)
    case .waited(let slot, let exit, _) where workers[slot]?.isRetiring == true:
      // What a worker told to stop still says is dropped; once it exited, its end is its own.
      workers[slot]!.dropReplies()
      return exit.map { ownEnd(slot, $0) } ?? []
    case .waited(.sideBySide, let exit, let outputHeld):
      return waitedBeside(exit: exit, outputHeld: outputHeld)
    case .waited(let slot, let exit, let outputHeld):
      return waitedAlone(slot, exit: exit, outputHeld: outputHeld)
    case .askedBeside(let planned, let sink):
      return beside([(planned, sink)])
    case .awaitingBeside:
      if workers[.sideBySide].map({ $0.running > 0 }) == true { return [.waitBeside] }
      guard !halves.isEmpty else { return [] }
      let half = halves.removeFirst()
      halfRunning.formUnion(half.map(\.planned.id))
      return beside(half.map { ($0.planned, $0.sink) })
    case .endedUnawaited(let slot, let exit):
      return endedUnawaited(slot, exit)
    case .timePassed(let slot, let now, let interrupt):
      return workers[slot]?.supervision.signals(at: now, interrupt: interrupt).map { .signal(slot, $0) } ?? []
    case .finishing:
      // A worker holding tests the runner never asked for is stopped at once; the others retire.
      var commands: [Command] = []
      for slot in Slot.allCases where holds(slot) {
        let holdsUnasked = slot == .worker && !sent.isEmpty || slot == .sideBySide && workers[slot]!.running > 0
        commands.append(holdsUnasked ? kill(slot) : retire(slot))
      }
      (sent, prepared, asked, halves, halfRunning, warnedOfRunningAgain, finishedBeside) = ([], nil, nil, [], [], [], [])
      return commands
    }
  }

  /// The worker in `slot` started: it takes what waited for it.
  private mutating func started(_ slot: Slot) -> [Command] {
    switch slot {
    case .worker:
      return [send(asked!.planned, answered: false)] + startSpare()
    case .spare:
      return sendAheadAndBegin()
    case .sideBySide:
      defer { toStart = [] }
      return toStart.map { start($0.planned, sink: $0.sink) }
    }
  }

  /// A worker the lane did not wait for ended. One that holds work (an attempt running, a
  /// request sent ahead to the worker running tests one at a time) or ran no test yet (a
  /// spare) keeps its end for the test that runs in it next, which hears it. One that ran
  /// tests and holds none ended after them: its end is its own, and it is forgotten.
  private mutating func endedUnawaited(_ slot: Slot, _ exit: ProcessEnding) -> [Command] {
    guard let worker = workers[slot], worker.running == 0, !worker.ended.ids.isEmpty, slot != .worker || sent.isEmpty
    else { return [] }
    return ownEnd(slot, exit)
  }

  /// The worker in `slot`, which holds no test, ended with `exit`: it is forgotten, and the
  /// failure of its end reported when it ended by itself, with a failing status, after its
  /// tests (``WorkerState/failureOfItsOwnEnd(_:)``).
  private mutating func ownEnd(_ slot: Slot, _ exit: ProcessEnding) -> [Command] {
    let failure = workers[slot]?.failureOfItsOwnEnd(exit)
    workers[slot] = nil
    return (failure.map { [.report($0.0, to: $0.1)] } ?? []) + [.forget(slot)]
  }

  /// Stops the worker in `slot` at once, and forgets it.
  private mutating func kill(_ slot: Slot) -> Command {
    workers[slot] = nil
    return .kill(slot)
  }

  /// Retires the worker in `slot`: it is told to stop and watched to its exit, within the
  /// grace period, else stopped as at a deadline. One that holds a test left running past its
  /// time limit is stopped at once: it would not stop by itself.
  private mutating func retire(_ slot: Slot) -> Command {
    guard workers[slot]?.supervision.leftRunning.isEmpty == true else { return kill(slot) }
    workers[slot]!.beginRetiring()
    return .retire(slot)
  }

  // MARK: One at a time

  /// The runner asks for `planned`: a worker that holds other tests first is stopped (it
  /// cannot be told to forget what it was sent); one that holds `planned` first runs it.
  private mutating func ask(_ planned: Runner.PlannedTest, sink: EventSink) -> [Command] {
    asked = (planned, sink)
    var commands: [Command] = []
    if let next = sent.first, next.id != planned.id {
      rewind()
      commands.append(kill(.worker))
    }
    guard sent.isEmpty else { return startSpare() }
    // A retry was never prepared; the test asked for is almost always the next one.
    if planned.id.attempt == 1, let prepared,
       let index = prepared[nextToSend...].firstIndex(where: { $0.id == planned.id }) {
      nextToSend = index + 1
    }
    return commands + (holds(.worker) ? [send(planned, answered: true)] : place(planned))
  }

  /// `planned` goes to a new worker: the spare, else one started now.
  private mutating func place(_ planned: Runner.PlannedTest) -> [Command] {
    guard holds(.spare) else { return [.spawn(.worker)] }
    workers[.worker] = workers.removeValue(forKey: .spare)
    // A worker that dies before reading it is reported by the wait.
    return [.takeSpare, send(planned, answered: false)] + startSpare()
  }

  /// Under `--isolation test`, the next test's worker starts while this one runs.
  private mutating func startSpare() -> [Command] {
    freshWorkerPerTest && !holds(.spare) ? [.spawn(.spare)] : sendAheadAndBegin()
  }

  /// Sends prepared tests until the worker holds ``pipelineDepth`` of them (a skipped test is
  /// reported by the runner and never runs), and begins the attempt asked for, in the worker
  /// running tests one at a time; its driver waits for it.
  private mutating func sendAheadAndBegin() -> [Command] {
    var commands: [Command] = []
    while let prepared, holds(.worker), sent.count < pipelineDepth, nextToSend < prepared.endIndex {
      let planned = prepared[nextToSend]
      if planned.test.skipReason == nil { commands.append(send(planned, planIndex: nextToSend, answered: false)) }
      nextToSend += 1
    }
    let (planned, sink) = asked!
    (asked, begun) = (nil, planned.id)
    workers[.worker]!.begin(planned, ref: sent.first?.ref, sink: sink, alone: true, deadline: deadline(of: planned))
    return commands + [.begin(planned, ref: sent.first?.ref)]
  }

  /// When the worker running `planned` is stopped: its time limit and the margin, from now.
  private func deadline(of planned: Runner.PlannedTest) -> ContinuousClock.Instant? {
    planned.timeLimit.map { ContinuousClock().now + $0 + timeLimitMargin }
  }

  /// A request for `planned`, recorded as sent.
  private mutating func send(_ planned: Runner.PlannedTest, planIndex: Int? = nil, answered: Bool) -> Command {
    lastRef += 1
    sent.append(Sent(id: planned.id, planIndex: planIndex, ref: lastRef))
    return .send(planned, ref: lastRef, answered: answered)
  }

  /// Forgets the requests the worker holds and has not run (it died, drops them after a
  /// failure, or holds tests the runner did not ask for): they are sent again when the runner
  /// asks for them.
  private mutating func rewind() {
    if let first = sent.lazy.compactMap(\.planIndex).first { nextToSend = first }
    sent = []
  }

  /// The wait for the attempt begun alone is over: its end, for the runner, as the worker's
  /// reply said (a reply read as the worker ended still says it), else as the worker's end
  /// ended it, else (nothing said how) that it could not run; then what follows for the
  /// worker (``AttemptFollowUp``).
  private mutating func waitedAlone(_ slot: Slot, exit: ProcessEnding?, outputHeld: Bool) -> [Command] {
    guard slot == .worker, workers[.worker] != nil else { return [] }
    let (replies, finished) = workers[.worker]!.waited(exited: exit, outputHeld: outputHeld)
    let reply = replies.first
    var commands: [Command]
    if case .ended(let attempt, let end, let note) = reply?.finished ?? finished.first {
      commands = [.deliver(attempt, end, note: note)]
    } else {
      commands = [.couldNotStart(begun!, reason: "the worker ended without saying how the test ended")]
    }
    if !sent.isEmpty { sent.removeFirst() }
    let followUp = AttemptFollowUp(after: .init(
      workerEnded: reply == nil || exit != nil, workerStopped: workers[.worker]!.stopped,
      workerLeftWork: reply?.retire != nil, freshWorkerPerTest: freshWorkerPerTest))
    switch followUp.worker {
    case .replace:
      rewind()
      workers[.worker] = nil
      commands.append(.forget(.worker))
    case .retire:
      // One worker per test, the worker said it must not run another test, or it was sent a
      // stop signal at the test's deadline as its reply came: the next test gets a fresh one.
      rewind()
      commands.append(retire(.worker))
    case .keep:
      // The worker drops what it was sent until it reads this: the runner may run another
      // test next (a retry).
      guard reply?.paused == true else { break }
      rewind()
      commands.append(.resume)
    }
    return commands
  }

  // MARK: Side by side

  /// Starts these attempts side by side: at once in the side-by-side worker, or once one
  /// started for them did.
  private mutating func beside(_ starts: [(planned: Runner.PlannedTest, sink: EventSink?)]) -> [Command] {
    guard !holds(.sideBySide), !starts.isEmpty else { return starts.map { start($0.planned, sink: $0.sink) } }
    toStart = starts
    return [.spawn(.sideBySide)]
  }

  /// A start of `planned` side by side, under a reference of its own; an attempt with nowhere
  /// to send its events cannot start (one side by side is always begun with the runner's).
  private mutating func start(_ planned: Runner.PlannedTest, sink: EventSink?) -> Command {
    guard let sink else { return couldNotStart(planned.id, reason: "\(planned.id.path) has no sink") }
    lastRef += 1
    workers[.sideBySide]!.begin(planned, ref: lastRef, sink: sink, alone: false, deadline: deadline(of: planned))
    return .start(planned, ref: lastRef)
  }

  /// The attempt side by side of `id` could not start: the lane does not wait for it.
  private mutating func couldNotStart(_ id: TestID, reason: String) -> Command {
    halfRunning.remove(id)
    return .couldNotStart(id, reason: reason)
  }

  /// What follows a wait for the side-by-side worker: the worker is forgotten when it ended,
  /// retired once it runs nothing when it must not run another test; each attempt that ended
  /// is delivered; each its worker's end cut short, and not for it, runs again as
  /// ``AttemptFollowUp`` decided, told why once: at once, beside the others, when the test
  /// that ended the worker is known; else in halves of the attempts that crash named none
  /// of, each half side by side with nothing else, and a half in which the worker crashes
  /// again halved again, until the test that crashes it runs alone. A crash among 256 then
  /// costs about 2 × 8 rounds, not 255 tests one after another.
  private mutating func waitedBeside(exit: ProcessEnding?, outputHeld: Bool) -> [Command] {
    guard workers[.sideBySide] != nil else { return [] }
    let (replies, finished) = workers[.sideBySide]!.waited(exited: exit, outputHeld: outputHeld)
    finishedBeside += replies.map(\.finished) + finished
    let worker = workers[.sideBySide]!
    // A worker sent a stop signal (a test's deadline, its reply in the same read) starts no
    // other test: it is watched to its end (the grace period at most), and its tests still
    // running end with it.
    if worker.stopped && exit == nil { return [.waitBeside] }
    defer { finishedBeside = [] }
    var commands: [Command] = []
    switch AttemptFollowUp(after: .init(workerEnded: exit != nil, workerLeftWork: worker.mustRetire)).worker {
    case .replace:
      workers[.sideBySide] = nil
      commands.append(.forget(.sideBySide))
    case .retire where worker.running == 0:
      commands.append(retire(.sideBySide))
    case .retire, .keep: break
    }
    var unnamed: [WorkerSupervision.Attempt] = []
    var again: [(planned: Runner.PlannedTest, sink: EventSink?)] = []
    for finished in finishedBeside {
      switch finished {
      case .ended(let attempt, let end, let note):
        halfRunning.remove(attempt.planned.id)
        commands.append(.deliver(attempt, end, note: note))
      case .runAgain(let attempt, let note, let company):
        let id = attempt.planned.id
        halfRunning.remove(id)
        // Said once: a test run again in halves after crashes that named no test would be
        // warned at each crash of its half. What it kept of its run in this worker (output
        // held past the worker's exit) stays its own.
        let issues = (note.flatMap { warnedOfRunningAgain.insert(id).inserted ? [$0] : nil } ?? []) + attempt.kept
        if !issues.isEmpty { commands.append(.tell(attempt, issues)) }
        if company == .besideOthers { again.append((attempt.planned, attempt.sink)) } else { unnamed.append(attempt) }
      }
    }
    let half = (unnamed.count + 1) / 2
    halves.insert(contentsOf: [Array(unnamed[..<half]), Array(unnamed[half...])].filter { !$0.isEmpty }, at: 0)
    // Last: a start in a worker started for it is answered.
    return commands + beside(again)
  }
}
