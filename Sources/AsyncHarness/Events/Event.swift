import Foundation

/// Something that happened during a run, delivered to every ``Reporter`` as it happens.
///
/// An event is a timestamp and a ``Kind`` that carries its payload: a `testEnded` always
/// has its test, result and duration, and nothing else. Events are versioned
/// (``Event/schemaVersion``): the JSON Lines reporter writes one a line
/// (``Event/jsonLine``), and tools and the parent of a worker process read them back
/// (``Event/init(jsonLine:)``). `docs/EVENTS.md` documents every event and field.
public struct Event: Sendable, Hashable {
  /// The version of the event schema this build writes: 2. Within a version, event kinds
  /// and fields are only added, never changed; a reader skips kinds and ignores fields it
  /// does not know. Version 1 lines (which repeated `suite` and `waiter` on test events)
  /// are still read.
  public static let schemaVersion = 2

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
    /// A test ended; the result holds every issue recorded while it ran.
    case testEnded(TestID, TestResult, duration: Double)
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

    /// The name of the kind, as the `kind` field of a JSON line.
    public var name: String {
      switch self {
      case .runStarted: "runStarted"
      case .suiteStarted: "suiteStarted"
      case .testStarted: "testStarted"
      case .issueRecorded: "issueRecorded"
      case .outputCaptured: "outputCaptured"
      case .testSlow: "testSlow"
      case .waitEnded: "waitEnded"
      case .scheduleStep: "scheduleStep"
      case .testEnded: "testEnded"
      case .suiteEnded: "suiteEnded"
      case .runEnded: "runEnded"
      case .workerReplaced: "workerReplaced"
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
  /// and suite events.
  public var test: TestID? {
    switch kind {
    case .testStarted(let test), .issueRecorded(let test, _), .outputCaptured(let test, _),
         .testSlow(let test, _), .waitEnded(let test, _, _, _), .scheduleStep(let test, _, _, _),
         .workerReplaced(let test, _), .testEnded(let test, _, _):
      test
    case .runStarted, .suiteStarted, .suiteEnded, .runEnded:
      nil
    }
  }
}

/// A suite run under one waiter strategy: the unit of the summary table and of a JUnit
/// `<testsuite>`.
public struct SuiteRun: Sendable, Hashable, Codable, CustomStringConvertible {
  /// The suite's name.
  public var suite: String
  /// The waiter strategy's name.
  public var waiter: String

  /// Creates a suite run.
  public init(suite: String, waiter: String) {
    self.suite = suite
    self.waiter = waiter
  }

  /// `Suite [waiter]`.
  public var description: String { "\(suite) [\(waiter)]" }
}

/// How one test ended, carried by a `testEnded` event.
public struct TestResult: Sendable, Hashable, Codable {
  /// The verdict.
  public var verdict: Verdict
  /// Why the test was skipped, or the known issue it carries.
  public var reason: String?
  /// Every issue recorded while the test ran, in order.
  public var issues: [Issue]
  /// Whether this attempt failed and the test runs again (`--retries`): the runner counts
  /// only a test's last attempt, and reporters show the attempts before it as retried.
  public var willRetry: Bool
  /// Under a schedule, the steps the test took: a replay token printed for it carries them
  /// (``replayToken(of:)``).
  public var scheduleTrace: ScheduleTrace?

  /// Creates a result.
  public init(verdict: Verdict, reason: String? = nil, issues: [Issue] = [], willRetry: Bool = false,
              scheduleTrace: ScheduleTrace? = nil) {
    self.verdict = verdict
    self.reason = reason
    self.issues = issues
    self.willRetry = willRetry
    self.scheduleTrace = scheduleTrace
  }

  /// Reads a result as the event stream writes it; `willRetry` is false when absent.
  /// - Throws: ``EventDecodingError`` when a field is missing or has the wrong type.
  public init(from decoder: any Decoder) throws { try self.init(mappedFrom: decoder) }

  /// Writes the result as the event stream does: `reason`, `scheduleTrace` and `willRetry`
  /// only when they say something.
  public func encode(to encoder: any Encoder) throws { try encodeMapped(to: encoder) }

  /// The token that replays `test` as it ran (`--schedule`): its schedule's token and, when
  /// known, the steps it took; `nil` for a test that ran under no schedule.
  public func replayToken(of test: TestID) -> String? {
    test.schedule.map { token in scheduleTrace.map { "\(token):\($0)" } ?? token }
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

  /// Creates an empty summary.
  public init() {}

  /// Reads a summary as the event stream writes it; `flaky` is 0 when absent (before
  /// retries existed).
  /// - Throws: ``EventDecodingError`` when a field is missing or has the wrong type.
  public init(from decoder: any Decoder) throws { try self.init(mappedFrom: decoder) }

  /// Writes the summary as the event stream does.
  public func encode(to encoder: any Encoder) throws { try encodeMapped(to: encoder) }

  /// Every test counted, each once whatever its attempts.
  public var total: Int { passed + failed + errored + skipped + knownIssues + flaky }
  /// Whether nothing failed or errored.
  public var succeeded: Bool { failed == 0 && errored == 0 }

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

  /// Counts a test's result, unless it is an attempt that is retried (only a test's last
  /// attempt counts).
  public mutating func count(_ result: TestResult) {
    if !result.willRetry { count(result.verdict) }
  }

  /// Adds another summary's counts to this one.
  public mutating func add(_ other: Summary) {
    passed += other.passed
    failed += other.failed
    errored += other.errored
    skipped += other.skipped
    knownIssues += other.knownIssues
    flaky += other.flaky
  }
}

/// The version of this build of AsyncHarness.
public enum AsyncHarnessVersion {
  /// The version string written into reports.
  public static let current = "0.1.0"
}
