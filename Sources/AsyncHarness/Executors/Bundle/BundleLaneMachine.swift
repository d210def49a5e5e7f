/// What a test bundle's lane decides, as a plain value: which tests a new worker of the bundle
/// is given, when the worker running is stopped for another, what becomes of it once the test
/// asked for ended (``AttemptFollowUp``), which tests run again alone after a crash, and whose
/// crash it was. It holds no process, descriptor, clock or thread: it is told what happened
/// (``Event``) and answers with what to do (``Command``), which its driver, ``BundleRuns``,
/// carries out with the bundle's processes, so that every transition is tried directly
/// (`BundleLaneMachineTests`).
///
/// ```
/// runner asks for a test ─▶ it ended already (the library ran it before it was asked for):
///   deliver what it recorded, review the crashes it ran again alone for, end
///   ─▶ no worker holds it: stop the worker running, start one given it and the tests after
///      it (answered) ─▶ wait for it (answered) ─▶ the worker ended: retire it (answered:
///      report its failures outside every test, its interrupted tests run again alone);
///      a stopped worker, or one that ran a schedule or left a process: retire it (answered)
///      and stop it; one that holds no test: wait for its exit, within the time limit of the
///      test asked for (answered), then retire it ─▶ ask again
/// ```
///
/// A test's end goes with the warnings it kept from a worker it ran in before running again
/// alone (``WorkerSupervision/Attempt/kept``).
struct BundleLaneMachine: LaneMachine {
  /// What the wait for the test asked for found.
  struct Waited {
    /// The worker exited.
    var exited = false
    /// The worker was sent a stop signal (a test's deadline passed as its end came).
    var stopped = false
    /// A test left a process running in it.
    var leftProcesses = false
    /// It ran under a schedule (one schedule, one test).
    var ranSchedule = false
    /// Its library told of a failure.
    var failed = false
    /// Every test given to it ended, or runs again elsewhere.
    var holdsNone = false
    /// It still runs the test asked for.
    var holdsAsked = false
  }

  /// What a worker that ended left.
  struct Retired {
    /// Its failures outside every test.
    var failures: [OutsideFailure] = []
    /// The tests it ran side by side when it crashed, or after other tests ended in it: each
    /// runs again alone, in a worker of its own.
    var runAgainAlone: Set<TestID> = []
    /// The warnings those tests keep from it.
    var kept: [TestID: [Issue]] = [:]
    /// The crash whose interrupted tests run again alone.
    var crash: CrashUnderReview?
  }

  /// What happened in the lane.
  enum Event {
    /// The runner says which tests it hands over next.
    case prepared(Runner.Plan.PlannedTests)
    /// The runner says which entries it hands over after the prepared tests.
    case following(ArraySlice<Runner.Plan.Entry>, Configuration)
    /// The runner asks for an attempt of a test; the worker running, if any, holds it.
    case asked(Runner.PlannedTest, workerHolds: Bool)
    /// The answer to ``Command/spawn(_:oneAtATime:)``: the worker started.
    case spawned
    /// The answer to ``Command/spawn(_:oneAtATime:)``: it could not start, for `reason`.
    case couldNotSpawn(reason: String)
    /// The answer to ``Command/wait(_:)``, with the tests that ended and wait for the runner,
    /// as the wait left them.
    case waited(Waited, ended: [TestID: BundleWorker.Ended])
    /// The answer to ``Command/waitForExit``: the worker exited, the tests that ended as it left them.
    case exited(ended: [TestID: BundleWorker.Ended])
    /// The answer to ``Command/retire``.
    case retired(Retired)
    /// The run ends.
    case finishing
  }

  /// What the lane's driver does.
  enum Command {
    /// Start a worker given these tests, each with the test it stands for, run one at a time
    /// or as their library runs them (answered: ``Event/spawned``, ``Event/couldNotSpawn(reason:)``).
    case spawn([(planned: Runner.PlannedTest, test: ExistingTest)], oneAtATime: Bool)
    /// Read the worker until the test ends or the worker exits (answered: ``Event/waited(_:ended:)``).
    case wait(Runner.PlannedTest)
    /// Read the worker, which holds no test, until it exits, stopping it past `within`, which
    /// is then no failure when `silently` (answered: ``Event/exited(ended:)``).
    case waitForExit(within: Duration, silently: Bool)
    /// Hand over what the worker left (it ended, or runs no other test), and stop it (answered: ``Event/retired(_:)``).
    case retire
    /// Stop the worker's process group at once, and forget it.
    case kill
    /// Send the events the test asked for recorded while the runner waited for another.
    case deliver([AsyncHarness.Event])
    /// Send a failure outside every test.
    case report(OutsideFailure)
    /// Send these warnings as the asked test's issues.
    case tell([Issue])
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
  /// Whether the lane holds a worker.
  private(set) var hasWorker = false
  /// The test asked for, while it has not ended, and whether the worker holds it.
  private var asked: Runner.PlannedTest?
  private var workerHoldsAsked = false
  /// The tests the runner said it hands over next.
  private(set) var prepared: Runner.Plan.PlannedTests?
  /// The entries the runner hands over after the prepared tests, when it knows them.
  private var following: (entries: ArraySlice<Runner.Plan.Entry>, configuration: Configuration)?
  /// The tests that ended before the runner asked for them.
  private(set) var ended: [TestID: BundleWorker.Ended] = [:]
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
    case .asked(let planned, let holds):
      asked = planned
      workerHoldsAsked = holds
      return next()
    case .spawned:
      (hasWorker, workerHoldsAsked) = (true, true)
      return next()
    case .couldNotSpawn(let reason):
      return end(.couldNotStart(reason: reason))
    case .waited(let waited, let ended):
      self.ended = ended
      workerHoldsAsked = waited.holdsAsked
      let followUp = AttemptFollowUp(after: .init(
        workerEnded: waited.exited, workerStopped: waited.stopped, workerLeftWork: waited.leftProcesses,
        workerRanSchedule: waited.ranSchedule))
      switch followUp.worker {
      case .replace:
        return [.retire]
      case .retire where waited.ranSchedule && !waited.failed && !waited.stopped && !waited.leftProcesses && waited.holdsNone:
        // Its end is heard, a moment: a crash or a status after its test fails outside every
        // test. (A schedule that failed is red already, and may leave jobs that never run
        // holding its bundle: it is retired at once.)
        return [.waitForExit(within: Self.scheduleExitLimit, silently: true)]
      case .retire:
        // What the test left running goes with the worker's process group, and a worker
        // whose schedule ran (one schedule, one test) ends with it; what it found outside
        // every test (an issue a detached task recorded under no test) is reported first.
        return [.retire]
      case .keep where waited.holdsNone:
        // Its end is heard: a crash after its last test fails outside every test.
        return [.waitForExit(within: asked?.timeLimit ?? Self.exitLimit, silently: false)]
      case .keep:
        return next()
      }
    case .exited(let ended):
      self.ended = ended
      return [.retire]
    case .retired(let retired):
      (hasWorker, workerHoldsAsked) = (false, false)
      alone.formUnion(retired.runAgainAlone)
      kept.merge(retired.kept, uniquingKeysWith: +)
      if let crash = retired.crash { underReview.append(crash) }
      return retired.failures.map(Command.report) + next()
    case .finishing:
      (hasWorker, workerHoldsAsked, asked) = (false, false, nil)
      (prepared, following, alone) = (nil, nil, [])
      return [.kill]
    }
  }

  /// What follows for the test asked for: its end, when it ended; else a wait for it, in a
  /// new worker when the one running does not hold it.
  private mutating func next() -> [Command] {
    guard let planned = asked else { return [] }
    if let ended = ended.removeValue(forKey: planned.id) {
      alone.remove(planned.id)
      return [.deliver(ended.events)] + review(planned.id, endedAs: ended.end).map(Command.report) + end(ended.end)
    }
    guard !workerHoldsAsked else { return [.wait(planned)] }
    guard planned.existing != nil else {
      return end(.couldNotStart(reason: "\(planned.id.path) is not a test of the test bundle \(bundle)"))
    }
    // A worker running other tests (the runner asked for a retry first) is stopped: the
    // tests it had not ended run again in a new worker.
    let stop: [Command] = hasWorker ? [.kill] : []
    hasWorker = false
    return stop + [.spawn(batch(from: planned), oneAtATime: alone.contains(planned.id))]
  }

  /// The attempt asked for ends as `end`, with the warnings it kept.
  private mutating func end(_ end: AttemptEnd) -> [Command] {
    let issues = asked.flatMap { kept.removeValue(forKey: $0.id) } ?? []
    asked = nil
    return (issues.isEmpty ? [] : [.tell(issues)]) + [.end(end)]
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
