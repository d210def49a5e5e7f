extension Runner.Step {
  /// Whether the step may run side by side with others in a worker (``WorkerRequest/start(_:)``):
  /// an `async` test under a real-time strategy. A blocking test turns the main run loop
  /// itself, and a scheduled one holds its process's capture of Swift concurrency: each runs
  /// alone in its process.
  var runsSideBySide: Bool { schedule == nil && Self.runsSideBySide(test, under: waiter) }

  /// Whether `test` may run side by side with others under `waiter`.
  static func runsSideBySide(_ test: Test, under waiter: any Waiter) -> Bool {
    guard case .async = test.body else { return false }
    return !(waiter is ScheduledWaiter)
  }
}

extension TestExecutor {
  /// The executor, when it runs `async` tests side by side in its workers (a
  /// ``WorkerExecutor`` of a width above 1).
  var sideBySide: WorkerExecutor? {
    guard let worker = self as? WorkerExecutor, worker.asyncWidth > 1 else { return nil }
    return worker
  }
}

extension Runner {
  /// Runs `first`, and the tests that can run side by side after it while they are next in
  /// the plan, side by side in the lane's side-by-side worker, up to the executor's width at
  /// once; returns once none runs and the next work is something else (or none is left).
  ///
  /// Each attempt is judged as it ends, and a failing one runs again while retries are left,
  /// side by side too. A test that the worker ended in while it ran beside others, and not for
  /// it, runs again alone in the lane's other worker, with the warning that says why.
  func runSideBySide(from first: (Step, TestLife.Started), in lane: Lane, number: Int, executor: WorkerExecutor) {
    var running: [TestID: TestLife.Attempt] = [:]
    func begin(_ step: Step, _ started: TestLife.Started) {
      switch started {
      case .skipped(let result): lane.run.ended(step, with: result)
      case .running(let attempt): start(attempt)
      }
    }
    func start(_ attempt: TestLife.Attempt) {
      if let end = executor.startSideBySide(attempt.step, events: attempt.sink) {
        finish(attempt, end)
      } else {
        running[attempt.step.id] = attempt
      }
    }
    func finish(_ attempt: TestLife.Attempt, _ end: AttemptEnd) {
      let (result, retry) = lane.tests.end(attempt, as: end)
      if let retry { start(retry) } else { lane.run.ended(attempt.step, with: result) }
    }
    begin(first.0, first.1)
    while true {
      while running.count < executor.asyncWidth, executor.takesSideBySide,
            let (step, started) = lane.run.nextSideBySide(startingWith: lane.tests, lane: number) {
        begin(step, started)
      }
      guard !running.isEmpty else { return }
      for ending in executor.waitSideBySide() {
        switch ending {
        case .ended(let id, let end, let note):
          guard let attempt = running.removeValue(forKey: id) else { continue }
          if let note { attempt.sink(.issueRecorded(id, note)) }
          finish(attempt, end)
        case .runAgain(let id, let note):
          guard let attempt = running.removeValue(forKey: id) else { continue }
          attempt.sink(.issueRecorded(id, note))
          finish(attempt, executor.run(attempt.step, events: attempt.sink))
        }
      }
    }
  }
}
