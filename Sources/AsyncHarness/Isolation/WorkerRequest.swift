/// What the parent asks a worker process to run: one step of the plan, by name. A worker
/// is the same executable with the same suites, so names find the step again.
///
/// The parent writes one request a line (JSON) on the worker's standard input; the worker
/// answers with the step's events, as JSON Lines (``Event/jsonLine``), on file descriptor 3.
/// Standard output and standard error of the worker are the running test's output. The end
/// of standard input tells the worker to exit.
struct WorkerRequest: Codable, Sendable {
  var suite: String
  var test: String
  var waiter: String
  var repetition: Int
  var attempt: Int
  /// Seconds.
  var defaultTimeout: Double
  /// Seconds, when the test has a limit.
  var timeLimit: Double?
  /// The schedule, under a strategy that orders work itself.
  var schedule: Schedule?
  /// The delays of the test's real queues (`--jitter`).
  var jitter: Jitter?

  init(_ step: Runner.Step) {
    suite = step.id.suite
    test = step.id.name
    waiter = step.id.waiter
    repetition = step.id.repetition
    attempt = step.id.attempt
    defaultTimeout = step.defaultTimeout.timeInterval
    timeLimit = step.timeLimit?.timeInterval
    schedule = step.schedule
    jitter = step.jitter
  }

  /// The step this request names among `suites`, or why there is none.
  func step(in suites: [Suite], registry: WaiterRegistry) -> Result<Runner.Step, WorkerError> {
    guard let suite = suites.first(where: { $0.name == self.suite }),
          let test = suite.tests.first(where: { $0.name == self.test }) else {
      return .failure(WorkerError("the worker has no test \(self.suite)/\(self.test)"))
    }
    guard let waiter = registry.waiter(named: waiter) else {
      return .failure(WorkerError("the worker has no waiter strategy \(waiter)"))
    }
    return .success(Runner.Step(
      suite: suite, test: test, waiter: waiter,
      id: TestID(suite: suite.name, name: test.name, waiter: waiter.name, repetition: repetition, attempt: attempt,
                 schedule: schedule?.token(forTestAt: "\(suite.name)/\(test.name)").description),
      defaultTimeout: .seconds(defaultTimeout), timeLimit: timeLimit.map { .seconds($0) }, schedule: schedule,
      jitter: jitter, retries: 0)) // The parent's runner decides retries.
  }
}

/// A worker process that cannot be started or cannot do what it was asked.
struct WorkerError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}
