/// What the parent asks a worker process to run: one step of the plan, by name. A worker
/// is the same executable with the same suites, so names find the step again.
///
/// The parent writes one request a line (a JSON object: `suite`, `test`, `waiter`,
/// `repetition`, `attempt`, `defaultTimeout` and, when set, `timeLimit` in seconds and
/// `schedule`, the step's replay token, and `jitterSeed`, `--jitter`'s seed) on the worker's standard input; the worker answers
/// with the step's events, as JSON Lines (``Event/jsonLine``), on file descriptor 3.
/// Standard output and standard error of the worker are the running test's output; the
/// worker writes a marker line there as each test starts (``WorkerMain/markerVariable``), so
/// the parent can send requests ahead and still tell one test's output from the next's.
/// After a failing test the worker drops the requests it reads until ``resumeLine`` (the
/// parent may not want what it sent ahead: a retry comes first). The end of standard input
/// tells the worker to exit.
struct WorkerRequest: Sendable, Equatable {
  /// The line that ends the requests a worker drops after a failing test.
  static let resumeLine = Array(#"{"resume":true}"#.utf8) + [0x0A]

  var suite: String
  var test: String
  var waiter: String
  var repetition: Int
  var attempt: Int
  /// Seconds.
  var defaultTimeout: Double
  /// Seconds, when the test has a limit.
  var timeLimit: Double?
  /// The replay token of the step's schedule, under a strategy that orders work itself.
  var schedule: String?
  /// The seed of the delays of the test's real queues (`--jitter`).
  var jitterSeed: UInt64?

  init(_ step: Runner.Step) {
    suite = step.id.suite
    test = step.id.name
    waiter = step.id.waiter
    repetition = step.id.repetition
    attempt = step.id.attempt
    defaultTimeout = step.defaultTimeout.timeInterval
    timeLimit = step.timeLimit?.timeInterval
    schedule = step.id.schedule
    jitterSeed = step.jitter?.seed
  }

  /// Reads a request line.
  /// - Throws: ``EventDecodingError`` when the line is not a request.
  init(line: some Collection<UInt8>) throws {
    guard let value = JSONValue.parse(line) else { throw EventDecodingError(reason: "not JSON") }
    let json = try JSONFields(value)
    suite = try json.string("suite")
    test = try json.string("test")
    waiter = try json.string("waiter")
    repetition = try json.number("repetition")
    attempt = try json.number("attempt")
    defaultTimeout = try json.number("defaultTimeout")
    timeLimit = try json.optionalNumber("timeLimit")
    schedule = try json.optionalString("schedule")
    jitterSeed = try json.optionalNumber("jitterSeed")
  }

  /// The request as one line, newline included.
  var line: [UInt8] {
    var json = JSONText()
    json.object { json in
      json.field("attempt", attempt)
      json.field("defaultTimeout", defaultTimeout)
      if let jitterSeed { json.field("jitterSeed", jitterSeed) }
      json.field("repetition", repetition)
      if let schedule { json.field("schedule", schedule) }
      json.field("suite", suite)
      json.field("test", test)
      if let timeLimit { json.field("timeLimit", timeLimit) }
      json.field("waiter", waiter)
    }
    json.newline()
    return json.array
  }
}

/// The steps a worker can run, found by name: built once, so that finding a request's test
/// costs the same in a suite of ten thousand tests as in one of ten.
struct WorkerCatalog {
  private let suites: [String: (suite: Suite, tests: [String: Test])]
  private let registry: WaiterRegistry

  init(_ suites: [Suite], registry: WaiterRegistry) {
    var index: [String: (suite: Suite, tests: [String: Test])] = [:]
    for suite in suites where index[suite.name] == nil {
      index[suite.name] = (suite, Dictionary(suite.tests.map { ($0.name, $0) }) { first, _ in first })
    }
    self.suites = index
    self.registry = registry
  }

  /// The step `request` names, or why there is none.
  func step(for request: WorkerRequest) -> Result<Runner.Step, WorkerError> {
    guard let entry = suites[request.suite], let test = entry.tests[request.test] else {
      return .failure(WorkerError("the worker has no test \(request.suite)/\(request.test)"))
    }
    guard let waiter = registry.waiter(named: request.waiter) else {
      return .failure(WorkerError("the worker has no waiter strategy \(request.waiter)"))
    }
    let schedule = request.schedule.flatMap { ScheduleToken($0)?.schedule }
    return .success(Runner.Step(
      suite: entry.suite, test: test, waiter: waiter,
      id: TestID(suite: entry.suite.name, name: test.name, waiter: waiter.name, repetition: request.repetition,
                 attempt: request.attempt, schedule: request.schedule),
      defaultTimeout: .seconds(request.defaultTimeout), timeLimit: request.timeLimit.map { .seconds($0) },
      schedule: schedule, jitter: request.jitterSeed.map(Jitter.init(seed:)),
      retries: 0)) // The parent's runner decides retries.
  }
}

/// A worker process that cannot be started or cannot do what it was asked.
struct WorkerError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}
