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

extension Runner {
  /// Runs `first`, and the tests that can run side by side after it while they are next in
  /// the plan, side by side with `executor` (``TestExecutor/sideBySideWidth`` at once, while
  /// it takes them: ``TestExecutor/takesSideBySide``); returns once none runs and the next
  /// work is something else (or none is left).
  ///
  /// Each attempt is judged as it ends, and a failing one runs again while retries are left,
  /// side by side too. A test that its worker ended in while it ran beside others, and not for
  /// it, is run again by the executor's lane before it ends (``WorkerLane``): the runner hears
  /// of each attempt's end once.
  func runSideBySide(from first: (PlannedTest, TestLife.Started), in shared: Shared, number: Int, executor: any TestExecutor) {
    var running: [TestID: TestLife.Attempt] = [:]
    func begin(_ planned: PlannedTest, _ started: TestLife.Started) {
      switch started {
      case .skipped(let result): shared.run.ended(planned, with: result)
      case .running(let attempt): start(attempt)
      }
    }
    func start(_ attempt: TestLife.Attempt) {
      if let end = executor.startSideBySide(attempt.planned, events: attempt.sink) {
        finish(attempt, end)
      } else {
        running[attempt.planned.id] = attempt
      }
    }
    func finish(_ attempt: TestLife.Attempt, _ end: AttemptEnd) {
      let (result, retry) = shared.tests.end(attempt, as: end)
      if let retry { start(retry) } else { shared.run.ended(attempt.planned, with: result) }
    }
    begin(first.0, first.1)
    while true {
      while running.count < executor.sideBySideWidth, executor.takesSideBySide,
            let (planned, started) = shared.run.nextSideBySide(startingWith: shared.tests, lane: number, holding: running.count) {
        begin(planned, started)
      }
      guard !running.isEmpty else { return }
      for ended in executor.waitSideBySide() {
        guard let attempt = running.removeValue(forKey: ended.test) else { continue }
        finish(attempt, ended.end)
      }
    }
  }
}
