import Foundation
import Synchronization

/// Runs suites under waiter strategies and sends every ``Event`` to the reporters.
///
/// The runner walks the plan (suite × waiter × repetition × test) on the calling thread.
/// Call it on the main thread (a suites executable's top-level code, or a synchronous
/// XCTest method) so blocking waits can turn the main run loop; `async` test bodies run in
/// tasks while the runner turns it.
public final class Runner {
  /// The suites to run.
  public let suites: [Suite]
  /// How to run them.
  public let configuration: Configuration
  /// The strategies `--waiter` can name.
  public let registry: WaiterRegistry
  private let reporters: [any Reporter]
  private let lateIssues = LateIssueQueue()

  /// Creates a runner.
  public init(suites: [Suite], configuration: Configuration = Configuration(),
              registry: WaiterRegistry = .builtIn, reporters: [any Reporter]) {
    self.suites = suites
    self.configuration = configuration
    self.registry = registry
    self.reporters = reporters
  }

  /// The waiter strategies a suite runs under with this configuration.
  /// - Throws: ``RunnerError/unknownWaiter(_:known:)`` for a name not in the registry.
  public func waiters(for suite: Suite) throws -> [any Waiter] {
    switch configuration.waiters {
    case .suiteDefault: return [suite.defaultWaiter]
    case .all: return registry.waiters
    case .named(let name):
      guard let waiter = registry.waiter(named: name) else {
        throw RunnerError.unknownWaiter(name, known: registry.names)
      }
      return [waiter]
    }
  }

  /// Runs every selected test and returns the counts.
  /// - Throws: ``RunnerError`` for a bad configuration or a selection with no test (before
  ///   any test runs), or the error of a reporter that failed.
  @discardableResult
  public func run() throws -> Summary {
    let plan = try suites.map { suite in (suite, try waiters(for: suite)) }
    try configuration.checkSelection(in: suites)
    do {
      return try run(plan)
    } catch {
      // Reporters still write what they have, so a failing reporter loses no other report.
      for reporter in reporters { try? reporter.finish() }
      throw error
    }
  }

  private func run(_ plan: [(Suite, [any Waiter])]) throws -> Summary {
    let start = ContinuousClock().now
    var waiterNames: [String] = []
    for name in plan.flatMap({ $0.1.map(\.name) }) where !waiterNames.contains(name) { waiterNames.append(name) }
    try emit(Event(kind: .runStarted, run: RunInfo(seed: configuration.shuffleSeed,
                                                    repetitions: configuration.repetitions, waiters: waiterNames)))
    var total = Summary()
    for (suite, waiters) in plan {
      let tests = ordered(suite.tests.filter { configuration.includes($0, in: suite) })
      guard !tests.isEmpty else { continue }
      for waiter in waiters {
        total.add(try run(suite, tests: tests, under: waiter))
      }
    }
    try emitLateIssues()
    try emit(Event(kind: .runEnded, summary: total, duration: start.duration(to: .now).timeInterval))
    for reporter in reporters { try reporter.finish() }
    return total
  }

  private func run(_ suite: Suite, tests: [Test], under waiter: any Waiter) throws -> Summary {
    let start = ContinuousClock().now
    try emit(Event(kind: .suiteStarted, suite: suite.name, waiter: waiter.name))
    var summary = Summary()
    for repetition in 1...max(1, configuration.repetitions) {
      var failed = false
      for test in tests {
        let step = TestID(suite: suite.name, name: test.name, waiter: waiter.name, repetition: repetition)
        // Issue 13: one run per schedule under a scheduling waiter (--explore N, --schedule TOKEN).
        for (id, schedule) in configuration.scheduledSteps(step, under: waiter) {
          let verdict = try run(test, in: suite, as: id, under: waiter, schedule: schedule)
          summary.count(verdict)
          failed = failed || verdict.isFailure
        }
      }
      if failed && configuration.untilFailure { break }
    }
    try emitLateIssues()
    try emit(Event(kind: .suiteEnded, suite: suite.name, waiter: waiter.name, summary: summary,
                   duration: start.duration(to: .now).timeInterval))
    return summary
  }

  private func run(_ test: Test, in suite: Suite, as id: TestID, under waiter: any Waiter,
                   schedule: Schedule?) throws -> Verdict {
    let start = ContinuousClock().now
    try emit(Event(kind: .testStarted, suite: suite.name, waiter: waiter.name, test: id))
    let result: TestResult
    var output: [String] = []
    if let reason = test.skipReason {
      result = TestResult(verdict: .skipped, reason: reason)
    } else {
      let record = TestRecord(id: id, lateIssues: lateIssues)
      let context = TestContext(record: record, waiter: waiter, defaultTimeout: configuration.defaultTimeout,
                                timeLimit: configuration.timeLimit, schedule: schedule)
      TestRecord.$current.withValue(record) {
        TestRecord.$body.withValue(record) { execute(test, in: suite, with: context) }
      }
      let recorded = record.end()
      output = recorded.output
      result = Self.result(issues: recorded.issues, knownIssue: test.knownIssue, at: test.sourceLocation)
    }
    for issue in result.issues {
      try emit(Event(kind: .issueRecorded, suite: suite.name, waiter: waiter.name, test: id, issue: issue))
    }
    for text in output {
      try emit(Event(kind: .outputCaptured, suite: suite.name, waiter: waiter.name, test: id, output: text))
    }
    try emit(Event(kind: .testEnded, suite: suite.name, waiter: waiter.name, test: id, result: result,
                   duration: start.duration(to: .now).timeInterval))
    try emitLateIssues()
    return result.verdict
  }

  /// Decides a test's result from what it recorded.
  ///
  /// A test with a known issue that recorded a failure ends as `.knownIssue`; one that
  /// recorded none fails, because the known issue did not occur.
  static func result(issues: [Issue], knownIssue: String?, at location: SourceLocation) -> TestResult {
    let failing = issues.filter(\.isFailure)
    if let knownIssue {
      if !failing.isEmpty { return TestResult(verdict: .knownIssue, reason: knownIssue, issues: issues) }
      let missing = Issue(kind: .expectationFailed, message: "Known issue did not occur: \(knownIssue)",
                          sourceLocation: location)
      return TestResult(verdict: .failed, reason: knownIssue, issues: issues + [missing])
    }
    if failing.contains(where: \.isError) { return TestResult(verdict: .errored, issues: issues) }
    return TestResult(verdict: failing.isEmpty ? .passed : .failed, issues: issues)
  }

  /// Runs the set-up, the body, the teardown blocks (last registered first) and the tear-down;
  /// then, when the body ran to its end, fails the test for expectations it never waited for.
  private func execute(_ test: Test, in suite: Suite, with context: TestContext) {
    let completed = capture(at: test.sourceLocation, in: context) {
      try suite.setUp?(context)
      switch test.body {
      case .blocking(let body):
        try body(context)
      case .async(let body):
        try runToCompletion(at: test.sourceLocation, in: context) { try await body(context) }
      }
    }
    for teardown in context.takeTeardowns() {
      switch teardown {
      case .blocking(let block, let location):
        capture(at: location, in: context, block)
      case .async(let block, let location):
        capture(at: location, in: context) { try runToCompletion(at: location, in: context, block) }
      }
    }
    capture(at: test.sourceLocation, in: context) { try suite.tearDown?(context) }
    if completed { context.recordUnwaitedExpectations() }
  }

  /// Runs an `async` body in a task, turning the main run loop (or parking this thread)
  /// until it finishes, and rethrows what it threw. At the test's time limit it records the
  /// limit, cancels the task and throws ``TestStopped``.
  private func runToCompletion(at location: SourceLocation, in context: TestContext,
                               _ body: @escaping @Sendable () async throws -> Void) throws {
    let outcome = Mutex<Result<Void, any Error>?>(nil)
    let finished = WaitCondition(summary: "the async test body", sourceLocation: location) {
      outcome.withLock { $0 != nil }
    }
    let record = context.record
    let task = Task {
      record.markBodyTask()
      let result: Result<Void, any Error>
      do { try await body(); result = .success(()) } catch { result = .failure(error) }
      outcome.withLock { $0 = result }
      finished.wake()
    }
    let noLimit = ContinuousClock().now.advanced(by: .seconds(365 * 24 * 3600))
    ExpectationWaiter().block(on: finished, until: context.timeLimit?.deadline ?? noLimit)
    guard outcome.withLock({ $0 != nil }) else {
      task.cancel()
      context.recordTimeLimitExceeded("in its async body, which was cancelled and left running", at: location)
      throw TestStopped()
    }
    try outcome.withLock { $0! }.get()
  }

  /// Runs `work`, recording what it throws; returns whether it ran to its end.
  @discardableResult
  private func capture(at location: SourceLocation, in context: TestContext, _ work: () throws -> Void) -> Bool {
    do {
      try work()
      return true
    } catch {
      context.recordThrown(error, at: location)
      return false
    }
  }

  private func ordered(_ tests: [Test]) -> [Test] {
    guard let seed = configuration.shuffleSeed else { return tests }
    var generator = SeededRandomGenerator(seed: seed)
    return tests.shuffled(using: &generator)
  }

  private func emitLateIssues() throws {
    for late in lateIssues.drain() {
      try emit(Event(kind: .issueRecorded, suite: late.test.suite, waiter: late.test.waiter,
                     test: late.test, issue: late.issue))
    }
  }

  private func emit(_ event: Event) throws {
    for reporter in reporters { try reporter.handle(event) }
  }
}

/// Why a run could not start.
public enum RunnerError: Error, Equatable, CustomStringConvertible {
  /// `--waiter` named a strategy that is not registered.
  case unknownWaiter(String, known: [String])
  /// The suites and filters select no test, and ``Configuration/allowsEmptySelection`` is
  /// off: a run that tests nothing must not look green.
  case emptySelection(filters: [String])
  /// `--schedule` replays a schedule made for a test that none of the selected tests is.
  case noTestForSchedule(String)

  public var description: String {
    switch self {
    case .unknownWaiter(let name, let known):
      "unknown waiter \"\(name)\"; known strategies: \(known.joined(separator: ", ")), or all"
    case .noTestForSchedule(let token):
      "no selected test matches --schedule \(token): a replay token reruns the test it was printed for"
    case .emptySelection(let filters) where filters.isEmpty:
      "no test to run: the suites contain no test (--allow-empty allows an empty run)"
    case .emptySelection(let filters):
      "no test matches "
        + filters.map { "--filter \"\($0)\"" }.joined(separator: ", ")
        + " (--list shows the tests; --allow-empty allows an empty run)"
    }
  }
}

/// A small seeded random number generator (SplitMix64): the one `--shuffle SEED` uses, so an
/// order can be replayed from its printed seed on every platform. Tests can use it for
/// reproducible generated inputs.
public struct SeededRandomGenerator: RandomNumberGenerator, Sendable {
  private var state: UInt64

  /// Creates a generator whose sequence is fixed by `seed`.
  public init(seed: UInt64) { state = seed }

  /// The next number of the sequence.
  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
