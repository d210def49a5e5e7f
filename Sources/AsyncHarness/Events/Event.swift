import Foundation

/// Something that happened during a run, delivered to every ``Reporter``.
///
/// Events are `Codable` and versioned (``Event/schemaVersion``): the JSON Lines reporter
/// writes one a line, and tools and worker processes read them back.
public struct Event: Sendable, Hashable, Codable {
  /// The version of the event schema this build writes. Fields are only added within a
  /// version; a reader ignores fields it does not know.
  public static let schemaVersion = 1

  /// What happened.
  public enum Kind: String, Sendable, Hashable, Codable {
    /// The run began; carries ``Event/run``.
    case runStarted
    /// A suite began under one waiter; carries ``Event/suite`` and ``Event/waiter``.
    case suiteStarted
    /// A test began; carries ``Event/test``.
    case testStarted
    /// A test recorded an issue; carries ``Event/test`` and ``Event/issue``. Late signals
    /// arrive after their test's `testEnded`.
    case issueRecorded
    /// A test captured output; carries ``Event/output``.
    case outputCaptured
    /// A test ended; carries ``Event/result`` and ``Event/duration``.
    case testEnded
    /// A suite ended under one waiter; carries ``Event/summary`` and ``Event/duration``.
    case suiteEnded
    /// The run ended; carries ``Event/summary`` and ``Event/duration``.
    case runEnded
  }

  /// The schema version this event was written with.
  public var version: Int
  /// What happened.
  public var kind: Kind
  /// When it happened (wall clock).
  public var timestamp: Date
  /// The suite, for suite and test events.
  public var suite: String?
  /// The waiter strategy, for suite and test events.
  public var waiter: String?
  /// The test, for test events.
  public var test: TestID?
  /// The issue, for `issueRecorded`.
  public var issue: Issue?
  /// Captured text, for `outputCaptured`.
  public var output: String?
  /// The result, for `testEnded`.
  public var result: TestResult?
  /// Facts about the run, for `runStarted`.
  public var run: RunInfo?
  /// Counts, for `suiteEnded` and `runEnded`.
  public var summary: Summary?
  /// Seconds from the matching start event, for the `…Ended` events.
  public var duration: Double?

  /// Creates an event; the factory methods below are shorter.
  public init(
    kind: Kind, timestamp: Date = Date(), suite: String? = nil, waiter: String? = nil,
    test: TestID? = nil, issue: Issue? = nil, output: String? = nil, result: TestResult? = nil,
    run: RunInfo? = nil, summary: Summary? = nil, duration: Double? = nil
  ) {
    self.version = Self.schemaVersion
    self.kind = kind
    self.timestamp = timestamp
    self.suite = suite
    self.waiter = waiter
    self.test = test
    self.issue = issue
    self.output = output
    self.result = result
    self.run = run
    self.summary = summary
    self.duration = duration
  }
}

/// How one test ended, carried by a `testEnded` event.
public struct TestResult: Sendable, Hashable, Codable {
  /// The verdict.
  public var verdict: Verdict
  /// Why the test was skipped, or the known issue it carries.
  public var reason: String?
  /// Every issue recorded while the test ran, in order.
  public var issues: [Issue]

  /// Creates a result.
  public init(verdict: Verdict, reason: String? = nil, issues: [Issue] = []) {
    self.verdict = verdict
    self.reason = reason
    self.issues = issues
  }
}

/// Facts about a run that reports record, carried by `runStarted`.
public struct RunInfo: Sendable, Hashable, Codable {
  /// The version of AsyncHarness that ran.
  public var harnessVersion: String
  /// The seed tests were shuffled with, when they were.
  public var seed: UInt64?
  /// How many times each test runs.
  public var repetitions: Int
  /// The waiter strategies the run uses.
  public var waiters: [String]

  /// Creates run facts.
  public init(harnessVersion: String = AsyncHarnessVersion.current, seed: UInt64? = nil,
              repetitions: Int = 1, waiters: [String] = []) {
    self.harnessVersion = harnessVersion
    self.seed = seed
    self.repetitions = repetitions
    self.waiters = waiters
  }
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

  /// Creates an empty summary.
  public init() {}

  /// Every test counted.
  public var total: Int { passed + failed + errored + skipped + knownIssues }
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
    }
  }

  /// Adds another summary's counts to this one.
  public mutating func add(_ other: Summary) {
    passed += other.passed
    failed += other.failed
    errored += other.errored
    skipped += other.skipped
    knownIssues += other.knownIssues
  }
}

/// The version of this build of AsyncHarness.
public enum AsyncHarnessVersion {
  /// The version string written into reports.
  public static let current = "0.1.0"
}
