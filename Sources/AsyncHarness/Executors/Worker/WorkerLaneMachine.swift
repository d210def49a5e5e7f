/// What a lane of harness workers decides, as a plain value: which worker runs the test the
/// runner asks for, which tests are sent ahead and which are sent again, what becomes of each
/// worker after an attempt, and which attempts run again, and beside what, after their
/// worker's end cut them short. It holds no process, descriptor, clock or thread: it is told
/// what happened (``Event``) and answers with what to do (``Command``), which its driver,
/// ``WorkerLane``, carries out with the lane's processes, so that every transition is tried
/// directly (`WorkerLaneMachineTests`).
///
/// ```
/// runner asks for a test alone ─▶ kill a worker that holds others first; send it to the
///   worker (answered: refused ─▶ kill, start another), else take the spare or start one
///   (answered: started, or the attempt could not start) ─▶ start a spare (answered) ─▶
///   send the prepared tests ahead ─▶ begin ─▶ (the driver waits) ─▶ ended alone ─▶
///   deliver its end ─▶ keep (resume after a failure) · retire · forget, as AttemptFollowUp decides
/// runner asks for a test side by side ─▶ start it, in a worker started for it when there
///   is none (answered: started, or the attempt could not start)
/// awaiting side by side ─▶ wait, or start the next half, or nothing left
/// waited side by side ─▶ forget or retire the worker; deliver each end; tell each attempt
///   that runs again why, once; start it again beside the others, or keep it for a half
/// a worker not waited for ended ─▶ holding work, or before any test: kept, its end heard
///   by the test that runs in it next; else its end is its own: judged, forgotten
/// a worker retired ended ─▶ its end is its own: judged
/// the run ends ─▶ kill a worker holding tests never asked for, retire every worker
/// ```
///
/// A command that can fail (``Command/spawn(_:)``, a ``Command/send(_:ref:answered:)`` that
/// is `answered`) is the last of its list, and its driver answers it with the next event.
struct WorkerLaneMachine: LaneMachine {
  /// Whether each test gets a fresh worker (`--isolation test`).
  let freshWorkerPerTest: Bool
  /// How many requests the worker running tests one at a time holds at most.
  let pipelineDepth: Int
  /// Whether the lane holds a worker running tests one at a time, a spare, and a worker
  /// running tests side by side.
  private var hasWorker = false
  private var hasSpare = false
  private var hasSideBySide = false
  /// The attempts to start side by side once the worker started for them did.
  private var toStart: [(planned: Runner.PlannedTest, sink: EventSink?)] = []
  /// The requests the worker running tests one at a time holds, in the order it runs them.
  private(set) var sent: [Sent] = []
  /// The tests the runner said it hands over next, and the index of the first not sent yet.
  private var prepared: Runner.Plan.PlannedTests?
  private var nextToSend = 0
  /// The last reference given to a request on any worker's channel.
  private var lastRef = 0
  /// The test asked for alone while an answer is awaited.
  private var asked: Runner.PlannedTest?
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

  init(freshWorkerPerTest: Bool, pipelineDepth: Int) {
    self.freshWorkerPerTest = freshWorkerPerTest
    self.pipelineDepth = pipelineDepth
  }

  /// Whether another test may start side by side now: not while halves of tests run again
  /// (each beside nothing else), nor while the side-by-side worker retires (`workerRetiring`,
  /// ``WorkerRetirement``), until the tests it runs ended.
  func takesSideBySide(workerRetiring: Bool) -> Bool {
    halves.isEmpty && halfRunning.isEmpty && !workerRetiring
  }

  /// What to do now that `event` happened.
  mutating func handle(_ event: Event) -> [Command] {
    switch event {
    case .prepared(let planned):
      prepared = freshWorkerPerTest ? planned[planned.startIndex..<planned.startIndex] : planned
      nextToSend = planned.startIndex
      return []
    case .asked(let planned):
      return ask(planned)
    case .spawned(.spare), .couldNotSpawn(.spare, _):
      // One that cannot start now is started (or reported) when the next test needs it.
      if case .spawned = event { hasSpare = true }
      return sendAheadAndBegin()
    case .spawned(.sideBySide):
      hasSideBySide = true
      defer { toStart = [] }
      return toStart.map { start($0.planned, sink: $0.sink) }
    case .couldNotSpawn(.sideBySide, let reason):
      defer { toStart = [] }
      return toStart.map { couldNotStart($0.planned.id, reason: reason) }
    case .spawned:
      hasWorker = true
      return [send(asked!, answered: false)] + startSpare()
    case .couldNotSpawn(_, let reason):
      let id = asked!.id
      asked = nil
      rewind()
      return [.couldNotStart(id, reason: reason)]
    case .taken:
      return startSpare()
    case .refused:
      rewind()
      hasWorker = false
      return [.kill(.worker)] + place(asked!)
    case .endedAlone(let finished, let ended):
      return delivered(finished) + endedAlone(ended)
    case .askedBeside(let planned, let sink):
      return beside([(planned, sink)])
    case .awaitingBeside(let running):
      if running > 0 { return [.waitBeside] }
      guard !halves.isEmpty else { return [] }
      let half = halves.removeFirst()
      halfRunning.formUnion(half.map(\.planned.id))
      return beside(half.map { ($0.planned, $0.sink) })
    case .waitedBeside(let finished, let ended, let stopped, let leftWork, let running):
      finishedBeside += finished
      // A worker sent a stop signal (a test's deadline, its reply in the same read) starts no
      // other test: it is watched to its end (the grace period at most), and its tests still
      // running end with it.
      if stopped && !ended { return [.waitBeside] }
      defer { finishedBeside = [] }
      return waitedBeside(finishedBeside, workerEnded: ended, workerLeftWork: leftWork, running: running)
    case .endedUnawaited(let slot, let ended):
      return endedUnawaited(slot, ended)
    case .retired(let slot, let ended):
      return ownEnd(slot, ended)
    case .finishing(let besideRunning):
      var commands: [Command] = sent.isEmpty ? [] : [.kill(.worker)]
      if besideRunning { commands.append(.kill(.sideBySide)) }
      commands += Slot.allCases.map(Command.retire)
      (hasWorker, hasSpare, hasSideBySide, sent, prepared, asked) = (false, false, false, [], nil, nil)
      (halves, halfRunning, warnedOfRunningAgain, finishedBeside) = ([], [], [], [])
      return commands
    }
  }

  /// A worker the lane did not wait for ended. One that holds work (an attempt running, a
  /// request sent ahead to the worker running tests one at a time) or ran no test yet (a
  /// spare) keeps its end for the test that runs in it next, which hears it. One that ran
  /// tests and holds none ended after them: its end is its own, and it is forgotten.
  private mutating func endedUnawaited(_ slot: Slot, _ ended: WorkerEnded) -> [Command] {
    guard ended.running == 0, ended.ranTests, slot != .worker || sent.isEmpty else { return [] }
    switch slot {
    case .worker: hasWorker = false
    case .spare: hasSpare = false
    case .sideBySide: hasSideBySide = false
    }
    return ownEnd(slot, ended) + [.forget(slot)]
  }

  /// What the end of a worker that holds no test means: one that ended by itself (no signal
  /// was sent to it) with a failing status after tests ran in it ended for work a test left
  /// behind, a failure outside every test, as `swift test` is red when such work crashes its
  /// process.
  private func ownEnd(_ slot: Slot, _ ended: WorkerEnded) -> [Command] {
    ended.exit != .exited(0) && !ended.stopped && ended.ranTests ? [.reportEnd(slot, ended.exit)] : []
  }

  // MARK: One at a time

  /// The runner asks for `planned`: a worker that holds other tests first is stopped (it
  /// cannot be told to forget what it was sent); one that holds `planned` first runs it.
  private mutating func ask(_ planned: Runner.PlannedTest) -> [Command] {
    asked = planned
    var commands: [Command] = []
    if let next = sent.first, next.id != planned.id {
      rewind()
      hasWorker = false
      commands.append(.kill(.worker))
    }
    guard sent.isEmpty else { return startSpare() }
    // A retry was never prepared; the test asked for is almost always the next one.
    if planned.id.attempt == 1, let prepared,
       let index = prepared[nextToSend...].firstIndex(where: { $0.id == planned.id }) {
      nextToSend = index + 1
    }
    return commands + (hasWorker ? [send(planned, answered: true)] : place(planned))
  }

  /// `planned` goes to a new worker: the spare, else one started now.
  private mutating func place(_ planned: Runner.PlannedTest) -> [Command] {
    guard hasSpare else { return [.spawn(.worker)] }
    (hasSpare, hasWorker) = (false, true)
    // A worker that dies before reading it is reported by the wait.
    return [.takeSpare, send(planned, answered: false)] + startSpare()
  }

  /// Under `--isolation test`, the next test's worker starts while this one runs.
  private mutating func startSpare() -> [Command] {
    freshWorkerPerTest && !hasSpare ? [.spawn(.spare)] : sendAheadAndBegin()
  }

  /// Sends prepared tests until the worker holds ``pipelineDepth`` of them (a skipped test is
  /// reported by the runner and never runs), and begins the attempt asked for.
  private mutating func sendAheadAndBegin() -> [Command] {
    var commands: [Command] = []
    while let prepared, hasWorker, sent.count < pipelineDepth, nextToSend < prepared.endIndex {
      let planned = prepared[nextToSend]
      if planned.test.skipReason == nil { commands.append(send(planned, planIndex: nextToSend, answered: false)) }
      nextToSend += 1
    }
    defer { (asked, begun) = (nil, asked!.id) }
    return commands + [.begin(asked!, ref: sent.first?.ref)]
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

  /// The end of the attempt begun alone, for the runner: as it finished, or, when nothing
  /// said how (no reply, and not run again), that it could not run.
  private func delivered(_ finished: WorkerSupervision.Finished?) -> [Command] {
    if case .ended(let attempt, let end, let note) = finished { return [.deliver(attempt, end, note: note)] }
    return [.couldNotStart(begun!, reason: "the worker ended without saying how the test ended")]
  }

  /// What follows for the worker once the attempt begun alone `ended` (``AttemptFollowUp``).
  private mutating func endedAlone(_ ended: EndedAlone) -> [Command] {
    if !sent.isEmpty { sent.removeFirst() }
    let followUp = AttemptFollowUp(after: .init(
      workerEnded: ended.workerEnded, workerStopped: ended.workerStopped, workerLeftWork: ended.workerLeftWork,
      freshWorkerPerTest: freshWorkerPerTest))
    switch followUp.worker {
    case .replace:
      rewind()
      hasWorker = false
      return [.forget(.worker)]
    case .retire:
      // One worker per test, the worker said it must not run another test, or it was sent a
      // stop signal at the test's deadline as its reply came: the next test gets a fresh one.
      rewind()
      hasWorker = false
      return [.retire(.worker)]
    case .keep:
      // The worker drops what it was sent until it reads this: the runner may run another
      // test next (a retry).
      guard ended.paused else { return [] }
      rewind()
      return [.resume]
    }
  }

  // MARK: Side by side

  /// Starts these attempts side by side: at once in the side-by-side worker, or once one
  /// started for them did.
  private mutating func beside(_ starts: [(planned: Runner.PlannedTest, sink: EventSink?)]) -> [Command] {
    guard !hasSideBySide, !starts.isEmpty else { return starts.map { start($0.planned, sink: $0.sink) } }
    toStart = starts
    return [.spawn(.sideBySide)]
  }

  /// A start of `planned` side by side, under a reference of its own; an attempt with nowhere
  /// to send its events cannot start (one side by side is always begun with the runner's).
  private mutating func start(_ planned: Runner.PlannedTest, sink: EventSink?) -> Command {
    guard let sink else { return couldNotStart(planned.id, reason: "\(planned.id.path) has no sink") }
    lastRef += 1
    return .start(planned, ref: lastRef, sink: sink)
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
  private mutating func waitedBeside(_ finished: [WorkerSupervision.Finished], workerEnded: Bool,
                                     workerLeftWork: Bool, running: Int) -> [Command] {
    var commands: [Command] = []
    switch AttemptFollowUp(after: .init(workerEnded: workerEnded, workerLeftWork: workerLeftWork)).worker {
    case .replace:
      hasSideBySide = false
      commands.append(.forget(.sideBySide))
    case .retire where running == 0:
      hasSideBySide = false
      commands.append(.retire(.sideBySide))
    case .retire, .keep: break
    }
    var unnamed: [WorkerSupervision.Attempt] = []
    var again: [(planned: Runner.PlannedTest, sink: EventSink?)] = []
    for finished in finished {
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
