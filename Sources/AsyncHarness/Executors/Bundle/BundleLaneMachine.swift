/// What a test bundle's lane knows and decides, as a plain value: its worker's state (the
/// attempts it runs and their deadlines, ``WorkerSupervision``; how its channel and output are
/// read, ``BundleWorkerDecoder``), which tests a new worker of the bundle is given, when the
/// worker running is stopped for another, what becomes of it once the test asked for ended
/// (``AttemptFollowUp``), which tests run again alone after a crash, and whose crash it was.
/// It holds no process, descriptor, clock or thread: it is told what happened (``Event``) and
/// answers with what to do (``Command``), which its driver, ``BundleLane``, carries out with
/// the bundle's process; the lane's loop (``LaneWatch``) feeds its worker's state what it
/// reads (``reading(_:)``). So every transition is tried directly, with the records a
/// bundle writes (`BundleLaneMachineTests`).
///
/// ```
/// runner asks for a test ─▶ it ended already (the library ran it before it was asked for):
///   deliver what it recorded, review the crashes it ran again alone for, end
///   ─▶ no worker holds it: stop the worker running, start one given it and the tests after
///      it (answered) ─▶ wait for it (answered) ─▶ the worker exited: retire it (report its
///      failures outside every test, its interrupted tests run again alone, stop it);
///      a stopped worker, or one that ran a schedule or left a process: retire it;
///      one that holds no test: wait for its exit, within the time limit of the test asked
///      for (answered), then retire it ─▶ ask again
/// time passed ─▶ signal the worker for a passed deadline, the grace period's end, the interrupt
/// ```
///
/// A test's end goes with the warnings it kept from a worker it ran in before running again
/// alone (``WorkerSupervision/Attempt/kept``).
struct BundleLaneMachine: LaneMachine {
  /// A test that ended: the events it recorded while the runner waited for another, and how
  /// it ended.
  struct Ended {
    var events: [AsyncHarness.Event] = []
    var end: AttemptEnd
  }

  /// What happened in the lane.
  enum Event {
    /// The runner says which tests it hands over next.
    case prepared(Runner.Plan.PlannedTests)
    /// The runner says which entries it hands over after the prepared tests.
    case following(ArraySlice<Runner.Plan.Entry>, Configuration)
    /// The runner asks for an attempt of a test, whose events go to `sink`.
    case asked(Runner.PlannedTest, sink: EventSink)
    /// The answer to ``Command/spawn(_:oneAtATime:)``: the worker started, read as `state` says.
    case spawned(WorkerState)
    /// The answer to ``Command/spawn(_:oneAtATime:)``: it could not start, for `reason`.
    case couldNotSpawn(reason: String)
    /// The answer to ``Command/wait``: the wait is over; `exit`, how the worker exited when it
    /// did (what it wrote read to its end, a process it left still holding its output when
    /// `outputHeld`), else what the worker's state waits for happened.
    case waited(exit: ProcessEnding?, outputHeld: Bool)
    /// Time passed to `now`, and the run was interrupted by `interrupt` when it was.
    case timePassed(to: ContinuousClock.Instant, interrupt: Int32?)
    /// The run ends.
    case finishing
  }

  /// What the lane's driver does.
  enum Command {
    /// Start a worker given these tests, each with the test it stands for, run one at a time
    /// or as their library runs them (answered: ``Event/spawned(_:)``, ``Event/couldNotSpawn(reason:)``).
    case spawn([(planned: Runner.PlannedTest, test: ExistingTest)], oneAtATime: Bool)
    /// Watch the worker, feeding its state what it says, until what the state waits for
    /// happens (the test asked for ends) or it exits (answered: ``Event/waited(exit:outputHeld:)``).
    case wait
    /// Stop the worker's process group at once, and forget it.
    case kill
    /// Send this signal to the worker's process group.
    case signal(Int32)
    /// Send the events the test asked for recorded while the runner waited for another.
    case deliver([AsyncHarness.Event], to: EventSink)
    /// Send a failure outside every test.
    case report(OutsideFailure, to: EventSink)
    /// Send these warnings as the asked test's issues.
    case tell([Issue], of: TestID, to: EventSink)
    /// The attempt asked for ended so.
    case end(AttemptEnd)
  }

  /// How long a worker whose tests all ended may take to exit when the test asked for last
  /// has no time limit: past it, the worker is stopped and its hang is a failure outside
  /// every test (`swift test` would wait for ever).
  static let exitLimit: Duration = .seconds(30)

  /// How long a worker that ran a schedule (one schedule, one test) that passed has to exit
  /// once its test ended: what runs after the test (a class tear-down, an exit handler) fails
  /// outside every test as in a plain run; one that has not exited by then is stopped, and
  /// that is no failure.
  static let scheduleExitLimit: Duration = .seconds(1)

  /// The test bundle's path, to name it.
  let bundle: String
  /// The worker the lane holds, if any.
  private(set) var worker: WorkerState?
  /// Whether the lane holds a worker.
  var hasWorker: Bool { worker != nil }
  /// The test asked for, while it has not ended, and where its events go.
  private var asked: (planned: Runner.PlannedTest, sink: EventSink)?
  /// The tests the runner said it hands over next.
  private(set) var prepared: Runner.Plan.PlannedTests?
  /// The entries the runner hands over after the prepared tests, when it knows them.
  private var following: (entries: ArraySlice<Runner.Plan.Entry>, configuration: Configuration)?
  /// The tests that ended before the runner asked for them.
  private(set) var ended: [TestID: Ended] = [:]
  /// The tests that were running when their worker crashed (side by side, or after other
  /// tests ended in it): each runs again alone, in a worker of its own.
  private(set) var alone: Set<TestID> = []
  /// The crashes whose interrupted tests run again alone, to tell whose crash it was.
  private var underReview: [CrashUnderReview] = []
  /// The warnings of tests that run again alone, kept from the worker they ran in first.
  private var kept: [TestID: [Issue]] = [:]

  init(bundle: String) {
    self.bundle = bundle
  }

  /// What to do now that `event` happened.
  mutating func handle(_ event: Event) -> [Command] {
    switch event {
    case .prepared(let planned):
      prepared = planned
      following = planned.entry.chain.isEmpty ? nil : (planned.entry.chain[...], planned.configuration)
      return []
    case .following(let entries, let configuration):
      following = (entries, configuration)
      return []
    case .asked(let planned, let sink):
      asked = (planned, sink)
      return next()
    case .spawned(let state):
      worker = state
      return next()
    case .couldNotSpawn(let reason):
      return end(.couldNotStart(reason: reason))
    case .waited(let exit, let outputHeld):
      return waited(exit: exit, outputHeld: outputHeld)
    case .timePassed(let now, let interrupt):
      return worker?.supervision.signals(at: now, interrupt: interrupt).map(Command.signal) ?? []
    case .finishing:
      (worker, asked) = (nil, nil)
      (prepared, following, alone) = (nil, nil, [])
      return [.kill]
    }
  }

  /// Hands its worker's decoder and supervision to `body`, together: how the lane's loop
  /// feeds them what it reads.
  mutating func reading<Result>(_ body: (inout BundleWorkerDecoder, inout WorkerSupervision) -> Result) -> Result {
    worker!.reading(body)
  }

  /// The wait for the worker is over: what its end left is judged, and the tests that ended
  /// go to ``ended``; then the worker is retired (it exited, it was waited for to its exit, or
  /// ``AttemptFollowUp`` says so) or waited for to its exit, or the test asked for ends or is
  /// waited for again.
  private mutating func waited(exit: ProcessEnding?, outputHeld: Bool) -> [Command] {
    guard worker != nil else { return [] }
    let told = exit.map { judge($0, outputHeld: outputHeld) } ?? []
    ended.merge(worker!.decoder.takeEnded()) { $1 }
    guard !worker!.awaitsExit else { return told + retire() }
    switch AttemptFollowUp(after: worker!.facts(exited: exit != nil)).worker {
    case .replace:
      return told + retire()
    case .retire where worker!.ranAPassingSchedule:
      // Its end is heard, a moment: a crash or a status after its test fails outside every
      // test. (A schedule that failed is red already, and may leave jobs that never run
      // holding its bundle: it is retired at once.)
      return told + awaitExit(within: Self.scheduleExitLimit, silently: true)
    case .retire:
      // What the test left running goes with the worker's process group, and a worker
      // whose schedule ran (one schedule, one test) ends with it; what it found outside
      // every test (an issue a detached task recorded under no test) is reported first.
      return told + retire()
    case .keep where worker!.decoder.holdsNone:
      // Its end is heard: a crash after its last test fails outside every test.
      return told + awaitExit(within: asked?.planned.timeLimit ?? Self.exitLimit, silently: false)
    case .keep:
      return told + next()
    }
  }

  /// Judges the worker's end (``BundleWorkerDecoder/exited(_:into:outputHeldBy:)``). Output still
  /// held after it while no test ran (a process the tests started) is a warning of the last
  /// test that ended, unless the runner has that one already: then of the test the worker was
  /// waited for (the message blames no one test).
  private mutating func judge(_ exit: ProcessEnding, outputHeld: Bool) -> [Command] {
    let ranNone = worker!.supervision.running.isEmpty
    worker!.reading { decoder, supervision in
      decoder.exited(exit, into: &supervision, outputHeldBy: outputHeld ? "the test bundle" : nil)
    }
    guard outputHeld && ranNone else { return [] }
    let leak = WorkerSupervision.outputHeld(by: "the test bundle")
    ended.merge(worker!.decoder.takeEnded()) { $1 }
    if let last = worker!.decoder.lastEnded, ended[last] != nil {
      ended[last]!.events.append(AsyncHarness.Event(.issueRecorded(last, leak)))
      return []
    }
    guard let awaited = worker!.decoder.asked else { return [] }
    return [.tell([leak], of: awaited.planned.id, to: awaited.events)]
  }

  /// Retires the worker, which ended or runs no other test: its tests interrupted run again
  /// alone, keeping the warnings they had, its crash goes under review, its process group is
  /// stopped, and its failures outside every test are reported.
  private mutating func retire() -> [Command] {
    guard var retired = worker else { return next() }
    worker = nil
    alone.formUnion(retired.decoder.runAgainAlone)
    kept.merge(retired.decoder.kept, uniquingKeysWith: +)
    if let crash = retired.decoder.crashUnderReview { underReview.append(crash) }
    return [.kill] + reports(retired.decoder.takeOutsideFailures()) + next()
  }

  /// Waits for the worker, which holds no test, to exit within `limit`; a stop past it is no
  /// failure when `silently`.
  private mutating func awaitExit(within limit: Duration, silently: Bool) -> [Command] {
    worker!.awaitExit(within: limit, silently: silently)
    return [.wait]
  }

  /// The commands that send `failures` to the sink of the test asked for.
  private func reports(_ failures: [OutsideFailure]) -> [Command] {
    guard let asked else { return [] }
    return failures.map { .report($0, to: asked.sink) }
  }

  /// What follows for the test asked for: its end, when it ended; else a wait for it, in a
  /// new worker when the one running does not hold it.
  private mutating func next() -> [Command] {
    guard let asked else { return [] }
    let planned = asked.planned
    if let ended = ended.removeValue(forKey: planned.id) {
      alone.remove(planned.id)
      return [.deliver(ended.events, to: asked.sink)] + reports(review(planned.id, endedAs: ended.end)) + end(ended.end)
    }
    if worker?.decoder.holds(planned.id) == true {
      worker!.await(asked)
      return [.wait]
    }
    guard planned.existing != nil else {
      return end(.couldNotStart(reason: "\(planned.id.path) is not a test of the test bundle \(bundle)"))
    }
    // A worker running other tests (the runner asked for a retry first) is stopped: the
    // tests it had not ended run again in a new worker.
    let stop: [Command] = hasWorker ? [.kill] : []
    worker = nil
    return stop + [.spawn(batch(from: planned), oneAtATime: alone.contains(planned.id))]
  }

  /// The attempt asked for ends as `end`, with the warnings it kept.
  private mutating func end(_ end: AttemptEnd) -> [Command] {
    guard let asked else { return [.end(end)] }
    self.asked = nil
    let issues = kept.removeValue(forKey: asked.planned.id) ?? []
    return (issues.isEmpty ? [] : [.tell(issues, of: asked.planned.id, to: asked.sink)]) + [.end(end)]
  }

  /// `test` ended as `end`: a crash it ran again alone for is a failure outside every test
  /// once none of the tests it interrupted crashed again.
  private mutating func review(_ test: TestID, endedAs end: AttemptEnd) -> [OutsideFailure] {
    var failures: [OutsideFailure] = []
    for index in underReview.indices {
      if let failure = underReview[index].ended(test, as: end) { failures.append(failure) }
    }
    underReview.removeAll { $0.isSettled }
    return failures
  }

  /// `test`, then the prepared tests after it and the tests of the following entries, of the
  /// same library (the same waiter), that run and have not ended, each with the test it
  /// stands for: what a new worker runs, as many as its list of tests holds. The tests that
  /// must run alone go in a batch of their own (run one at a time), the others in another.
  func batch(from planned: Runner.PlannedTest) -> [(planned: Runner.PlannedTest, test: ExistingTest)] {
    guard let test = planned.existing else { return [] }
    var batch = [(planned: planned, test: test)]
    // A schedule's executors are installed as the bundle starts: its test runs alone in it.
    guard planned.schedule == nil else { return batch }
    // A test run again alone after a crash runs in a worker of its own.
    guard !alone.contains(planned.id) else { return batch }
    var listBytes = test.id.utf8.count
    var first = planned.id
    first.attempt = 1
    guard let prepared, let index = prepared.firstIndex(where: { $0.id == first }) else { return batch }
    /// Adds the candidates that run; false once the list is full.
    func add(_ candidates: some Sequence<Runner.PlannedTest>) -> Bool {
      for candidate in candidates
      where candidate.test.skipReason == nil && ended[candidate.id] == nil && !alone.contains(candidate.id)
        && candidate.host.name == planned.host.name && candidate.schedule == nil {
        guard let test = candidate.existing else { continue }
        listBytes += 1 + test.id.utf8.count
        guard listBytes <= BundleInvocation.listLimit else { return false }
        batch.append((candidate, test))
      }
      return true
    }
    guard add(prepared[(index + 1)...]), let following else { return batch }
    for entry in following.entries where entry.host.name == planned.host.name {
      guard add(Runner.Plan.PlannedTests.all(of: entry, repetition: 1, configuration: following.configuration)) else { break }
    }
    return batch
  }
}
