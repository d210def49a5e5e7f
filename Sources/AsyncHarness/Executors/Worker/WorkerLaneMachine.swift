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
///   keep (resume after a failure) · retire · forget, as AttemptFollowUp decides
/// runner asks for a test side by side ─▶ start it (the driver starts the worker if none)
/// awaiting side by side ─▶ wait, or start the next half, or nothing left
/// waited side by side ─▶ forget or retire the worker; deliver each end; tell each attempt
///   that runs again why, once; start it again beside the others, or keep it for a half
/// a worker not waited for ended ─▶ holding work, or before any test: kept, its end heard
///   by the test that runs in it next; else its end is its own: judged, forgotten
/// the run ends ─▶ kill a worker holding tests never asked for, retire every worker
/// ```
///
/// A command that can fail (``Command/spawn(_:)``, a ``Command/send(_:ref:answered:)`` that
/// is `answered`) is the last of its list, and its driver answers it with the next event.
struct WorkerLaneMachine: LaneMachine {
  /// Where a lane holds a worker.
  enum Slot: Equatable, CaseIterable {
    /// The worker running tests one at a time.
    case worker
    /// Under `--isolation test`, the worker started for the next test while one runs.
    case spare
    /// The worker running `async` tests side by side.
    case sideBySide
  }

  /// A `run` request sent to the worker running tests one at a time, not answered yet.
  struct Sent: Equatable {
    let id: TestID
    /// Its place among the prepared tests, when it was sent ahead.
    let planIndex: Int?
    /// Its reference on the worker's channel.
    let ref: Int
  }

  /// How an attempt that ran alone ended, for its worker.
  struct EndedAlone: Equatable {
    /// The worker ended (or no reply came).
    var workerEnded = false
    /// The worker was sent a stop signal.
    var workerStopped = false
    /// The reply said the worker must not run another test (``WorkerRetirement``).
    var workerLeftWork = false
    /// The reply said the worker drops what it was sent until told to resume.
    var paused = false
  }

  /// What happened in the lane.
  enum Event {
    /// The runner says which tests it hands over next.
    case prepared(Runner.Plan.PlannedTests)
    /// The runner asks for an attempt of a test, run alone.
    case asked(Runner.PlannedTest)
    /// The answer to ``Command/spawn(_:)``: the worker started.
    case spawned(Slot)
    /// The answer to ``Command/spawn(_:)``: the worker could not start, for `reason`.
    case couldNotSpawn(Slot, reason: String)
    /// The answer to an `answered` ``Command/send(_:ref:answered:)``: the worker took it.
    case taken
    /// The answer to an `answered` ``Command/send(_:ref:answered:)``: the worker no longer
    /// reads (it died).
    case refused
    /// The attempt begun alone ended so.
    case endedAlone(EndedAlone)
    /// The runner asks for an attempt of a test, run side by side, its events going to `sink`.
    case askedBeside(Runner.PlannedTest, sink: EventSink)
    /// An attempt could not start side by side (its end is ``AttemptEnd/couldNotStart(reason:)``).
    case notStarted(TestID)
    /// The lane waits for attempts side by side, `running` of them running.
    case awaitingBeside(running: Int)
    /// The wait for the side-by-side worker found these attempts finished; the worker ended,
    /// was sent a stop signal, must not run another test (`workerLeftWork`), and runs
    /// `running` attempts still.
    case waitedBeside(finished: [WorkerSupervision.Finished], workerEnded: Bool, workerStopped: Bool, workerLeftWork: Bool,
                      running: Int)
    /// The worker in the slot exited while the lane waited for another, with `running`
    /// attempts in it, after tests ran in it or before any (`ranTests`).
    case endedUnawaited(Slot, ProcessEnding, running: Int, ranTests: Bool)
    /// The run ends; attempts still run side by side when `besideRunning`.
    case finishing(besideRunning: Bool)
  }

  /// What the lane's driver does.
  enum Command {
    /// Start a worker in the slot, ``Slot/worker`` or ``Slot/spare`` (answered:
    /// ``Event/spawned(_:)`` or ``Event/couldNotSpawn(_:reason:)``).
    case spawn(Slot)
    /// The spare becomes the worker running tests one at a time.
    case takeSpare
    /// Send the test to the worker running tests one at a time, under `ref`; when `answered`,
    /// say whether it took it (``Event/taken``, ``Event/refused``).
    case send(Runner.PlannedTest, ref: Int, answered: Bool)
    /// Begin the attempt of the test the worker runs next, under `ref` when it was sent; the
    /// driver waits for its end (``Event/endedAlone(_:)``).
    case begin(Runner.PlannedTest, ref: Int?)
    /// Tell the worker running tests one at a time to resume after a failure.
    case resume
    /// Start the test side by side under `ref`, in the side-by-side worker (started first
    /// when there is none), its events going to `sink`.
    case start(Runner.PlannedTest, ref: Int, sink: EventSink?)
    /// Wait for the side-by-side worker (``Event/waitedBeside(finished:workerEnded:workerLeftWork:running:)``).
    case waitBeside
    /// Send what the attempt held to its sink; its end is the runner's.
    case deliver(WorkerSupervision.Finished)
    /// Send these issues to the attempt's sink: it runs again.
    case tell(WorkerSupervision.Attempt, [Issue])
    /// The attempt of the test could not start.
    case couldNotStart(TestID, reason: String)
    /// Stop the worker in the slot at once, and forget it.
    case kill(Slot)
    /// Retire the worker in the slot: tell it to stop and watch it to its exit.
    case retire(Slot)
    /// Forget the worker in the slot: it ended.
    case forget(Slot)
    /// The worker in the slot ended so by itself, after its tests and holding none: a failing
    /// end is work a test left behind, a failure outside every test
    /// (``WorkerConnection/endedAfterItsTests(_:telling:)``).
    case endedAfterItsTests(Slot, ProcessEnding)
  }

  /// Whether each test gets a fresh worker (`--isolation test`).
  let freshWorkerPerTest: Bool
  /// How many requests the worker running tests one at a time holds at most.
  let pipelineDepth: Int
  /// Whether the lane holds a worker running tests one at a time, and a spare.
  private var hasWorker = false
  private var hasSpare = false
  /// The requests the worker running tests one at a time holds, in the order it runs them.
  private(set) var sent: [Sent] = []
  /// The tests the runner said it hands over next, and the index of the first not sent yet.
  private var prepared: Runner.Plan.PlannedTests?
  private var nextToSend = 0
  /// The last reference given to a request on any worker's channel.
  private var lastRef = 0
  /// The test asked for alone while an answer is awaited.
  private var asked: Runner.PlannedTest?
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
    case .endedAlone(let ended):
      return endedAlone(ended)
    case .askedBeside(let planned, let sink):
      return [start(planned, sink: sink)]
    case .notStarted(let id):
      halfRunning.remove(id)
      return []
    case .awaitingBeside(let running):
      if running > 0 { return [.waitBeside] }
      guard !halves.isEmpty else { return [] }
      let half = halves.removeFirst()
      halfRunning.formUnion(half.map(\.planned.id))
      return half.map { start($0.planned, sink: $0.sink) }
    case .waitedBeside(let finished, let ended, let stopped, let leftWork, let running):
      finishedBeside += finished
      // A worker sent a stop signal (a test's deadline, its reply in the same read) starts no
      // other test: it is watched to its end (the grace period at most), and its tests still
      // running end with it.
      if stopped && !ended { return [.waitBeside] }
      defer { finishedBeside = [] }
      return waitedBeside(finishedBeside, workerEnded: ended, workerLeftWork: leftWork, running: running)
    case .endedUnawaited(let slot, let exit, let running, let ranTests):
      return endedUnawaited(slot, exit, running: running, ranTests: ranTests)
    case .finishing(let besideRunning):
      var commands: [Command] = sent.isEmpty ? [] : [.kill(.worker)]
      if besideRunning { commands.append(.kill(.sideBySide)) }
      commands += Slot.allCases.map(Command.retire)
      (hasWorker, hasSpare, sent, prepared, asked) = (false, false, [], nil, nil)
      (halves, halfRunning, warnedOfRunningAgain, finishedBeside) = ([], [], [], [])
      return commands
    }
  }

  /// A worker the lane did not wait for ended. One that holds work (an attempt running, a
  /// request sent ahead to the worker running tests one at a time) or ran no test yet (a
  /// spare) keeps its end for the test that runs in it next, which hears it. One that ran
  /// tests and holds none ended after them: its end is its own, and it is forgotten.
  private mutating func endedUnawaited(_ slot: Slot, _ exit: ProcessEnding, running: Int, ranTests: Bool) -> [Command] {
    guard running == 0, ranTests, slot != .worker || sent.isEmpty else { return [] }
    switch slot {
    case .worker: hasWorker = false
    case .spare: hasSpare = false
    case .sideBySide: break
    }
    return [.endedAfterItsTests(slot, exit), .forget(slot)]
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
    defer { asked = nil }
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

  /// A start of `planned` side by side, under a reference of its own.
  private mutating func start(_ planned: Runner.PlannedTest, sink: EventSink?) -> Command {
    lastRef += 1
    return .start(planned, ref: lastRef, sink: sink)
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
    case .replace: commands.append(.forget(.sideBySide))
    case .retire where running == 0: commands.append(.retire(.sideBySide))
    case .retire, .keep: break
    }
    var unnamed: [WorkerSupervision.Attempt] = []
    for finished in finished {
      switch finished {
      case .ended(let attempt, _, _):
        halfRunning.remove(attempt.planned.id)
        commands.append(.deliver(finished))
      case .runAgain(let attempt, let note, let company):
        let id = attempt.planned.id
        halfRunning.remove(id)
        // Said once: a test run again in halves after crashes that named no test would be
        // warned at each crash of its half. What it kept of its run in this worker (output
        // held past the worker's exit) stays its own.
        let issues = (note.flatMap { warnedOfRunningAgain.insert(id).inserted ? [$0] : nil } ?? []) + attempt.kept
        if !issues.isEmpty { commands.append(.tell(attempt, issues)) }
        if company == .besideOthers { commands.append(start(attempt.planned, sink: attempt.sink)) } else { unnamed.append(attempt) }
      }
    }
    let half = (unnamed.count + 1) / 2
    halves.insert(contentsOf: [Array(unnamed[..<half]), Array(unnamed[half...])].filter { !$0.isEmpty }, at: 0)
    return commands
  }
}
