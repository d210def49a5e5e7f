import Foundation

/// Something that happened during a run, delivered to every ``Reporter`` as it happens.
///
/// An event is a timestamp and a ``Kind`` that carries its payload: a `testEnded` always
/// has its test, result and duration, and nothing else. Events are versioned
/// (``Event/schemaVersion``): the JSON Lines reporter writes one a line
/// (``Event/jsonLine``), and tools and the parent of a worker process read them back
/// (``Event/init(jsonLine:)``). `docs/EVENTS.md` documents every event and field.
public struct Event: Sendable, Hashable {
  /// The version of the event schema this build writes: 3. Within a version, event kinds
  /// and fields are only added, never changed; a reader skips kinds and ignores fields it
  /// does not know. Streams of versions 1 and 2 (whose `testEnded` ended each attempt and
  /// repeated its issues) are still read, through ``EventStream``.
  public static let schemaVersion = 3

  /// The most `scheduleStep` events one attempt sends: its first 10,000 steps. Its result's
  /// ``TestResult/scheduleTrace`` counts every step, so a longer schedule left out
  /// `steps - 10,000`.
  public static let scheduleStepLimit = 10_000

  /// What happened, with what it carries.
  public enum Kind: Sendable, Hashable {
    /// The run began.
    case runStarted(RunInfo)
    /// A suite began under one waiter strategy.
    case suiteStarted(SuiteRun)
    /// A test began.
    case testStarted(TestID)
    /// A test recorded an issue, when it recorded it. Issues recorded after the test ended
    /// (late signals) arrive later, with kind ``Issue/Kind/lateSignal``.
    case issueRecorded(TestID, Issue)
    /// A test produced output, when it produced it.
    case outputCaptured(TestID, String)
    /// What a test printed while it ran beside other tests in a worker, sent as it ends:
    /// stored once for all of them, and shared (``SharedOutput``). The event stream writes it
    /// as `outputCaptured`.
    case outputShared(TestID, SharedOutput)
    /// A test is still running after `elapsed` seconds: a multiple of the run's slow
    /// threshold (`--slow`). A warning, never a failure.
    case testSlow(TestID, elapsed: Double)
    /// A wait a test made ended: `awaited` names what it waited for (`the wait for "loaded"`),
    /// `outcome` how it ended (`completed`, `timedOut`, `incorrectOrder`,
    /// `invertedFulfillment`, `interrupted`, `timeLimitExceeded`, `waiterReturnedEarly`), after
    /// `duration` seconds. Sent only when the run asks for waits
    /// (``Configuration/reportsWaits``, `--trace`).
    case waitEnded(TestID, awaited: String, outcome: String, duration: Double)
    /// A step the schedule of a test under the `scheduled` strategy took: `step` counts it
    /// from 1 (as the replay token's `STEPS` does), `ran` names what it ran (its queue's label:
    /// `main`, `background`, `io`, `clock`; or a Swift concurrency job's: `task #2`,
    /// `an actor's job`), at `virtualTime` seconds on the test's virtual clock. Sent when the
    /// step is taken, only when the run asks for waits (``Configuration/reportsWaits``,
    /// `--trace`), and only for an attempt's first ``scheduleStepLimit`` steps.
    case scheduleStep(TestID, step: Int, ran: String, virtualTime: Double)
    /// A test ended, after its last attempt (`test` is that attempt's): its verdict and each
    /// of its attempts. Sent once a test, however many attempts it took; each issue came
    /// before it, once, as an `issueRecorded` of its attempt, which the attempt counts.
    case testEnded(TestID, TestEnd)
    /// A suite ended under one waiter strategy, with its counts.
    case suiteEnded(SuiteRun, Summary, duration: Double)
    /// The run ended, with its counts.
    case runEnded(Summary, duration: Double)
    /// The worker process that ran `test` ended or was retired for it, so the lane's next
    /// test runs in a fresh one. `reason` is `crashed` (it ended while the test ran),
    /// `stoppedAtTimeLimit` (it was stopped: the test ran past its time limit outside any
    /// wait), `exceededTimeLimit` or `leakedWork` (it was retired after the test, which
    /// exceeded its time limit or left work running that holds the worker's threads). Sent
    /// just before that attempt's `testEnded`, with the attempt's ``Event/lane``; not for the
    /// fresh process of every test of `--isolation test`, nor when the run stops.
    case workerReplaced(TestID, reason: String)
    /// A failure that belongs to no single test's body (``OutsideFailure``): sent when it is
    /// found, which may be after the tests of its suite ended. It fails the run, and
    /// ``Summary/outsideFailures`` counts it.
    case outsideFailure(OutsideFailure)

    /// The name of the kind, as the `kind` field of a JSON line.
    public var name: String {
      switch self {
      case .runStarted: "runStarted"
      case .suiteStarted: "suiteStarted"
      case .testStarted: "testStarted"
      case .issueRecorded: "issueRecorded"
      case .outputCaptured, .outputShared: "outputCaptured"
      case .testSlow: "testSlow"
      case .waitEnded: "waitEnded"
      case .scheduleStep: "scheduleStep"
      case .testEnded: "testEnded"
      case .suiteEnded: "suiteEnded"
      case .runEnded: "runEnded"
      case .workerReplaced: "workerReplaced"
      case .outsideFailure: "outsideFailure"
      }
    }
  }

  /// When it happened (wall clock).
  public var timestamp: Date
  /// What happened.
  public var kind: Kind
  /// On `testStarted`: the runner's lane that runs the attempt, counted from 1 (each lane has
  /// an executor of its own: with `--workers N`, a worker process at a time); on
  /// `workerReplaced`, the lane whose worker was replaced. `nil` on every other event, and
  /// when not known (events written before lanes were reported).
  public var lane: Int?

  /// Creates an event that happens now, or at `timestamp`; `lane` only on `testStarted` and
  /// `workerReplaced`.
  public init(_ kind: Kind, timestamp: Date = Date(), lane: Int? = nil) {
    self.kind = kind
    self.timestamp = timestamp
    self.lane = lane
  }

  /// The test a test event is about (`testStarted`, `issueRecorded`, `outputCaptured`,
  /// `testSlow`, `waitEnded`, `scheduleStep`, `workerReplaced`, `testEnded`); `nil` for run
  /// and suite events, and for a failure outside every test.
  public var test: TestID? {
    switch kind {
    case .testStarted(let test), .issueRecorded(let test, _), .outputCaptured(let test, _), .outputShared(let test, _),
         .testSlow(let test, _), .waitEnded(let test, _, _, _), .scheduleStep(let test, _, _, _),
         .workerReplaced(let test, _), .testEnded(let test, _):
      test
    case .runStarted, .suiteStarted, .suiteEnded, .runEnded, .outsideFailure:
      nil
    }
  }
}

/// A suite run under one host (a waiter strategy, or the testing library that runs another
/// package's tests): the unit of the summary table and of a JUnit `<testsuite>`.
public struct SuiteRun: Sendable, Hashable, Codable, CustomStringConvertible {
  /// The suite's name.
  public var suite: String
  /// What the suite ran under: the name of the waiter strategy a harness test ran under
  /// (`expectation`, `semaphore`, …), or of the testing library that runs another package's
  /// test under `harness test` (`xctest`, `swift-testing`). The event stream, and `Codable`,
  /// keep the field's name, `"waiter"`, for schema compatibility.
  public var host: String

  /// Creates a suite run.
  public init(suite: String, host: String) {
    self.suite = suite
    self.host = host
  }

  /// `Suite [host]`.
  public var description: String { "\(suite) [\(host)]" }

  // The field keeps its name in JSON: schema compatibility.
  private enum CodingKeys: String, CodingKey {
    case suite
    case host = "waiter"
  }
}

extension SuiteRun {
  /// What the suite ran under: renamed ``host``, as it is not always a waiter strategy.
  @available(*, deprecated, renamed: "host")
  public var waiter: String {
    get { host }
    set { host = newValue }
  }

  /// Creates a suite run: renamed ``init(suite:host:)``.
  @available(*, deprecated, renamed: "init(suite:host:)")
  public init(suite: String, waiter: String) {
    self.init(suite: suite, host: waiter)
  }
}

/// How one attempt of a test ended, judged from every issue it recorded: what a run's API
/// gives for a test (``EventRecorder/results``), and what the test's owner judges each
/// attempt by. The event stream says it otherwise: each issue once, as it happens, and the
/// verdict with each attempt's outcome in `testEnded` (``TestEnd``).
public struct TestResult: Sendable, Hashable {
  /// The verdict.
  public var verdict: Verdict
  /// Why the test was skipped, or the known issue it carries.
  public var reason: String?
  /// Every issue recorded while the attempt ran, in order.
  public var issues: [Issue]
  /// Under a schedule, the steps the attempt took: a replay token printed for it carries
  /// them (``replayToken(of:)``).
  public var scheduleTrace: ScheduleTrace?

  /// Creates a result.
  public init(verdict: Verdict, reason: String? = nil, issues: [Issue] = [], scheduleTrace: ScheduleTrace? = nil) {
    self.verdict = verdict
    self.reason = reason
    self.issues = issues
    self.scheduleTrace = scheduleTrace
  }

  /// The token that replays `test` as it ran (`--schedule`): its schedule's token and, when
  /// known, the steps it took; `nil` for a test that ran under no schedule.
  public func replayToken(of test: TestID) -> String? {
    test.replayToken(steps: scheduleTrace)
  }
}

/// How a test ended, as its `testEnded` event says: the verdict, and each attempt it took
/// (`--retries`), first attempt first. Reporters read a test's attempts here; none has to
/// put them together from earlier events.
public struct TestEnd: Sendable, Hashable {
  /// The test's verdict: its last attempt's, or ``Verdict/flaky`` when it passed after
  /// failing attempts.
  public var verdict: Verdict
  /// Why the test was skipped, or the known issue it carries.
  public var reason: String?
  /// Every attempt, first first; never empty.
  public var attempts: [TestAttempt]

  /// Creates the end of a test.
  public init(verdict: Verdict, reason: String? = nil, attempts: [TestAttempt]) {
    self.verdict = verdict
    self.reason = reason
    self.attempts = attempts
  }

  /// The end of a test that ran once, as `result` says, for `duration` seconds: its attempt
  /// (numbered `number`) carries the result's issues, which must each have been sent as an
  /// `issueRecorded` before the `testEnded`.
  public init(once result: TestResult, number: Int = 1, duration: Double, lane: Int? = nil) {
    self.init(verdict: result.verdict, reason: result.reason, attempts: [TestAttempt(
      number: number, outcome: result.verdict, duration: duration, issues: result.issues, lane: lane,
      scheduleTrace: result.scheduleTrace)])
  }

  /// The attempt the verdict rests on.
  public var lastAttempt: TestAttempt { attempts[attempts.count - 1] }

  /// The attempts that failed and ran again: all but the last.
  public var retriedAttempts: ArraySlice<TestAttempt> { attempts.dropLast() }

  /// Seconds the attempts ran, together.
  public var duration: Double { attempts.reduce(0) { $0 + $1.duration } }

  /// The token that replays the last attempt of `test` as it ran (`--schedule`).
  public func replayToken(of test: TestID) -> String? {
    test.replayToken(steps: lastAttempt.scheduleTrace)
  }
}

/// One attempt of a test, as the test's `testEnded` tells it.
public struct TestAttempt: Sendable, Hashable {
  /// The attempt's number, from 1: the `attempt` of its events' ``TestID``.
  public var number: Int
  /// How the attempt ended: never ``Verdict/flaky``, which only a test is.
  public var outcome: Verdict
  /// Seconds it ran.
  public var duration: Double
  /// How many issues it recorded while it ran: its `issueRecorded` events before its test's
  /// `testEnded` (late signals come after, and are not counted).
  public var issueCount: Int
  /// The issues it recorded while it ran, in order: what its `issueRecorded` events said, so
  /// that a reporter renders a test's end from its `testEnded` alone. The event stream says
  /// each issue once, in its `issueRecorded` line, and counts them here (``issueCount``);
  /// ``EventStream`` puts them back as it reads a stream. Empty in a `testEnded` read from
  /// its line alone.
  public var issues: [Issue]
  /// The runner's lane that ran it, from 1, as its `testStarted` said; `nil` when unknown.
  public var lane: Int?
  /// Under a schedule, the steps it took.
  public var scheduleTrace: ScheduleTrace?
  /// When it started, as whoever ran it saw it: the test bundle's own record of the start
  /// for another package's test (which may have run before the runner announced it), else
  /// the moment its `testStarted` was sent. `nil` when unknown: in a `testEnded` line written
  /// before it was recorded.
  public var started: Date?

  /// Creates an attempt that recorded `issueCount` issues, not given.
  public init(number: Int, outcome: Verdict, duration: Double, issueCount: Int, lane: Int? = nil,
              scheduleTrace: ScheduleTrace? = nil, started: Date? = nil) {
    self.number = number
    self.outcome = outcome
    self.duration = duration
    self.issueCount = issueCount
    self.issues = []
    self.lane = lane
    self.scheduleTrace = scheduleTrace
    self.started = started
  }

  /// Creates an attempt that recorded `issues`.
  public init(number: Int, outcome: Verdict, duration: Double, issues: [Issue], lane: Int? = nil,
              scheduleTrace: ScheduleTrace? = nil, started: Date? = nil) {
    self.init(number: number, outcome: outcome, duration: duration, issueCount: issues.count, lane: lane,
              scheduleTrace: scheduleTrace, started: started)
    self.issues = issues
  }
}

/// Facts about a run that reports record, carried by `runStarted`.
public struct RunInfo: Sendable, Hashable, Codable {
  /// The version of AsyncHarness that ran.
  public var harnessVersion: String
  /// The seed tests were shuffled with, when they were.
  public var seed: UInt64?
  /// The seed of the delays real queues added to each item (`--jitter`), when they did.
  public var jitterSeed: UInt64?
  /// How many times each test runs.
  public var repetitions: Int
  /// The waiter strategies the run uses.
  public var waiters: [String]
  /// The shard this run is, when it is one.
  public var shard: Shard?

  /// Creates run facts.
  /// - Parameters:
  ///   - harnessVersion: the version of AsyncHarness that ran.
  ///   - seed: the seed tests were shuffled with, when they were.
  ///   - jitterSeed: the seed of the real queues' delays, when they had some.
  ///   - repetitions: how many times each test runs.
  ///   - waiters: the waiter strategies the run uses.
  ///   - shard: the shard this run is, when it is one.
  public init(harnessVersion: String = AsyncHarnessVersion.current, seed: UInt64? = nil, jitterSeed: UInt64? = nil,
              repetitions: Int = 1, waiters: [String] = [], shard: Shard? = nil) {
    self.harnessVersion = harnessVersion
    self.seed = seed
    self.jitterSeed = jitterSeed
    self.repetitions = repetitions
    self.waiters = waiters
    self.shard = shard
  }

  /// Reads the facts as the event stream writes them.
  /// - Throws: ``EventDecodingError`` when a field is missing or has the wrong type.
  public init(from decoder: any Decoder) throws { try self.init(mappedFrom: decoder) }

  /// Writes the facts as the event stream does: `seed`, `jitterSeed` and `shard` only when set.
  public func encode(to encoder: any Encoder) throws { try encodeMapped(to: encoder) }
}

/// Counts of verdicts.
public struct Summary: Sendable, Hashable, Codable {
  /// Tests that passed.
  public var passed = 0
  /// Tests that failed.
  public var failed = 0
  /// Tests that errored.
  public var errored = 0
  /// Tests that were skipped.
  public var skipped = 0
  /// Tests whose known issue was caught.
  public var knownIssues = 0
  /// Tests that failed and then passed on a retry (``Verdict/flaky``); not in ``passed``.
  public var flaky = 0
  /// Failures that belong to no single test's body (``OutsideFailure``): no test, but each
  /// fails the run. Counted in the run's summary only (`runEnded`), not in a suite's.
  public var outsideFailures = 0

  /// Creates an empty summary.
  public init() {}

  /// Reads a summary as the event stream writes it; `flaky` is 0 when absent (before
  /// retries existed), and `outsideFailures` too (before they were reported).
  /// - Throws: ``EventDecodingError`` when a field is missing or has the wrong type.
  public init(from decoder: any Decoder) throws { try self.init(mappedFrom: decoder) }

  /// Writes the summary as the event stream does.
  public func encode(to encoder: any Encoder) throws { try encodeMapped(to: encoder) }

  /// Every test counted, each once whatever its attempts (failures outside tests are no test).
  public var total: Int { passed + failed + errored + skipped + knownIssues + flaky }
  /// Whether nothing failed or errored, in a test or outside every test.
  public var succeeded: Bool { failed == 0 && errored == 0 && outsideFailures == 0 }

  /// Counts one more verdict.
  public mutating func count(_ verdict: Verdict) {
    switch verdict {
    case .passed: passed += 1
    case .failed: failed += 1
    case .errored: errored += 1
    case .skipped: skipped += 1
    case .knownIssue: knownIssues += 1
    case .flaky: flaky += 1
    }
  }

  /// Adds another summary's counts to this one.
  public mutating func add(_ other: Summary) {
    passed += other.passed
    failed += other.failed
    errored += other.errored
    skipped += other.skipped
    knownIssues += other.knownIssues
    flaky += other.flaky
    outsideFailures += other.outsideFailures
  }
}

/// The version of this build of AsyncHarness.
public enum AsyncHarnessVersion {
  /// The version string written into reports.
  public static let current = "0.1.0"
}
