/// The runner's side of one lane of a run: one loop that takes work from the run's owner
/// (``RunLife``) and runs it with the lane's executor, over every attempt the lane holds (the
/// one it runs alone, or those it runs side by side), and the one place that carries out what
/// follows an attempt. The test's owner judges each attempt as it ends and says whether it
/// runs again (``TestLife/end(_:as:)``, asking ``AttemptFollowUp``); the lane starts that
/// retry at once, as the attempt it follows ran (alone, or beside others); a test whose last
/// attempt ended goes back to the run's owner. The executor's side of the lane holds its
/// workers and reruns what their ends cut short (``WorkerLane``, ``BundleLane``).
///
/// Its transitions, from the work it is handed:
///
/// ```
/// entry       each test, in order, each repetition:   begin ─▶ alone ─▶ follow ─▶ (retry: alone)
/// test        not side by side:  prepare, begin ─▶ alone ─▶ follow ─▶ (retry: alone)
///             side by side:      begin ─▶ beside; then, until none runs:
///                                  take the next side-by-side tests while the width allows
///                                  wait ─▶ follow each that ended ─▶ (retry: beside)
/// ```
struct Lane {
  /// The lane's number, from 1 (each test's `testStarted` names it).
  let number: Int
  let executor: any TestExecutor
  let shared: Runner.Shared
  /// The attempts started side by side that have not ended.
  private var beside: [TestID: TestLife.Attempt] = [:]

  init(number: Int, executor: any TestExecutor, shared: Runner.Shared) {
    self.number = number
    self.executor = executor
    self.shared = shared
  }

  /// Runs the work the run's owner hands the lane until none is left or the run stops; then
  /// releases the executor's workers.
  /// - Throws: the error of a reporter that failed.
  mutating func run() throws {
    defer { executor.finish() }
    while let work = shared.run.next(startingWith: shared.tests, lane: number) {
      try shared.channel.checkReporters()
      switch work {
      case .entry(let entry):
        try run(entry)
      case .test(let planned, let started, let prepare):
        if runsBeside(planned) {
          begin(planned, started, beside: true)
          runBesideOthers()
        } else {
          executor.prepare(prepare)
          begin(planned, started, beside: false)
        }
      }
    }
  }

  /// Whether `planned`, handed out alone, runs side by side with others: an `async` test under
  /// a real-time strategy (``Runner/PlannedTest/runsSideBySide``), with an executor that runs
  /// more than one at once.
  private func runsBeside(_ planned: Runner.PlannedTest) -> Bool {
    planned.runsSideBySide && executor.sideBySideWidth > 1
  }

  /// Runs one entry (already announced), repetition by repetition, each test alone and in
  /// order, then has the run's owner end it.
  private mutating func run(_ entry: Runner.Plan.Entry) throws {
    let plan = shared.plan
    repetitions: for repetition in 1...plan.repetitions {
      var failed = false
      let plannedTests = plan.plannedTests(of: entry, repetition: repetition)
      executor.prepare(plannedTests)
      if shared.isAlone && repetition == plan.repetitions {
        executor.prepare(following: shared.run.untakenEntries, of: plan)
      }
      for planned in plannedTests {
        guard shared.stop?.signal == nil else { break repetitions }
        try shared.channel.checkReporters()
        let result = begin(planned, shared.tests.start(planned, lane: number), beside: false)
        failed = failed || result?.verdict.isFailure == true
      }
      if failed && plan.configuration.untilFailure { break }
    }
    shared.run.ended(entry)
  }

  /// Begins a started test: a skipped one ends at once; the first attempt of another runs
  /// alone or `beside` others. Returns the test's result once it ended, `nil` while an attempt
  /// of it runs beside others.
  @discardableResult
  private mutating func begin(_ planned: Runner.PlannedTest, _ started: TestLife.Started, beside: Bool) -> TestResult? {
    switch started {
    case .skipped(let result):
      shared.run.ended(planned, with: result)
      return result
    case .running(let attempt):
      return start(attempt, beside: beside)
    }
  }

  /// Starts `attempt` alone (it runs to its end now) or beside the attempts running so (its
  /// end comes from a wait, unless it could not start); what follows its end follows.
  private mutating func start(_ attempt: TestLife.Attempt, beside: Bool) -> TestResult? {
    guard beside else { return follow(attempt, executor.run(attempt.planned, events: attempt.sink), beside: false) }
    if let end = executor.startSideBySide(attempt.planned, events: attempt.sink) {
      return follow(attempt, end, beside: true)
    }
    self.beside[attempt.planned.id] = attempt
    return nil
  }

  /// What follows `attempt`'s end: the test's owner judges it; a retry starts at once, as the
  /// attempt ran; else the test ended, and its result goes to the run's owner.
  @discardableResult
  private mutating func follow(_ attempt: TestLife.Attempt, _ end: AttemptEnd, beside: Bool) -> TestResult? {
    let (result, retry) = shared.tests.end(attempt, as: end)
    if let retry { return start(retry, beside: beside) }
    shared.run.ended(attempt.planned, with: result)
    return result
  }

  /// Runs the tests that can run side by side while they are next in the plan, as many at
  /// once as the executor takes (``TestExecutor/sideBySideWidth``, ``TestExecutor/takesSideBySide``);
  /// returns once none runs and the next work is something else, or none is left. An attempt
  /// its worker's end cut short, and not for it, is run again by the executor's side of the
  /// lane before it ends: the lane hears of each attempt's end once.
  private mutating func runBesideOthers() {
    while true {
      while beside.count < executor.sideBySideWidth, executor.takesSideBySide,
            let (planned, started) = shared.run.nextSideBySide(startingWith: shared.tests, lane: number,
                                                              holding: beside.count) {
        begin(planned, started, beside: true)
      }
      guard !beside.isEmpty else { return }
      for ended in executor.waitSideBySide() {
        guard let attempt = beside.removeValue(forKey: ended.test) else { continue }
        follow(attempt, ended.end, beside: true)
      }
    }
  }
}

extension Runner.PlannedTest {
  /// Whether the test may run side by side with others in a worker (``WorkerRequest/start(_:)``):
  /// an `async` test under a real-time strategy. A blocking test turns the main run loop
  /// itself, and a scheduled one holds its process's capture of Swift concurrency: each runs
  /// alone in its process.
  var runsSideBySide: Bool { schedule == nil && Self.runsSideBySide(test, under: host) }

  /// Whether `test` may run side by side with others under `host`: an `async` harness test
  /// whose strategy allows it (``Waiter/runsTestsSideBySide``).
  static func runsSideBySide(_ test: Catalog.Item, under host: Catalog.Host) -> Bool {
    test.isAsync && host.runsTestsSideBySide
  }
}
