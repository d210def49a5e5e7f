/// Identifies one run of one test: the suite, the test's name, what it ran under (its
/// ``host``), the repetition, the attempt, and the schedule under a scheduling strategy. Events
/// carry it. The test itself, the same in every run and on every machine, is its
/// ``testPath`` (``TestPath``, what `--list` prints and `--only` reads).
public struct TestID: Sendable, Hashable, Codable, CustomStringConvertible {
  /// The suite's name.
  public var suite: String
  /// The test's name, unique within its suite.
  public var name: String
  /// What the test ran under: the name of the waiter strategy a harness test ran under
  /// (`expectation`, `semaphore`, …), or of the testing library that runs another package's
  /// test under `harness test` (`xctest`, `swift-testing`). The event stream keeps the field's
  /// name, `"waiter"`, for schema compatibility.
  public var host: String
  /// The repetition, counted from 1.
  public var repetition: Int
  /// The attempt, counted from 1: attempts after the first are retries of a failed test.
  public var attempt: Int
  /// The replay token of the schedule the test ran under (``ScheduleToken``, e.g.
  /// `7:pct3:9f2c1a`), under a strategy that orders work itself; `nil` otherwise.
  public var schedule: String?

  /// Creates a test identifier.
  public init(suite: String, name: String, host: String, repetition: Int = 1, attempt: Int = 1,
              schedule: String? = nil) {
    self.suite = suite
    self.name = name
    self.host = host
    self.repetition = repetition
    self.attempt = attempt
    self.schedule = schedule
  }

  /// Reads an identifier as the event stream writes it; `attempt` is 1 when absent (schema
  /// version 1).
  /// - Throws: ``EventDecodingError`` when a field is missing or has the wrong type.
  public init(from decoder: any Decoder) throws { try self.init(mappedFrom: decoder) }

  /// Writes the identifier as the event stream does.
  public func encode(to encoder: any Encoder) throws { try encodeMapped(to: encoder) }

  /// The token that replays this run of the test (`--schedule`): its schedule's token and,
  /// when known, the `steps` it took; `nil` for a test that ran under no schedule.
  func replayToken(steps: ScheduleTrace?) -> String? {
    schedule.map { token in steps.map { "\(token):\($0)" } ?? token }
  }

  /// `Suite/test` as plain text, unescaped: what `--filter` matches (``testPath`` is the
  /// test's path as `--list` writes it).
  public var path: String { "\(suite)/\(name)" }

  /// The test this is a run of, whatever its host, repetition, attempt and schedule.
  public var testPath: TestPath { TestPath(suite: suite, name: name) }

  /// The suite and host this test runs in.
  public var suiteRun: SuiteRun { SuiteRun(suite: suite, host: host) }

  /// `Suite/test [host]`, with `#N` for repetitions after the first and `(attempt N)` for
  /// retries.
  public var description: String {
    var text = "\(path) [\(host)]"
    if repetition > 1 { text += " #\(repetition)" }
    if attempt > 1 { text += " (attempt \(attempt))" }
    return text
  }
}

extension TestID {
  /// What the test ran under: renamed ``host``, as it is not always a waiter strategy.
  @available(*, deprecated, renamed: "host")
  public var waiter: String {
    get { host }
    set { host = newValue }
  }

  /// Creates a test identifier: renamed ``init(suite:name:host:repetition:attempt:schedule:)``.
  @available(*, deprecated, renamed: "init(suite:name:host:repetition:attempt:schedule:)")
  public init(suite: String, name: String, waiter: String, repetition: Int = 1, attempt: Int = 1,
              schedule: String? = nil) {
    self.init(suite: suite, name: name, host: waiter, repetition: repetition, attempt: attempt,
              schedule: schedule)
  }
}

/// How a test ended.
public enum Verdict: String, Sendable, Hashable, Codable, CaseIterable {
  /// No failing issue was recorded.
  case passed
  /// A failing issue was recorded (an expectation or a wait failed).
  case failed
  /// The test threw, or misused the harness, or would have deadlocked, or its process
  /// crashed or was stopped.
  case errored
  /// The test did not run; the reason is in ``TestResult/reason``.
  case skipped
  /// The test carries a known issue and failed as expected.
  case knownIssue
  /// The test failed, then passed when it was run again (`--retries`, the `.retries`
  /// trait): it does not fail the run unless `--fail-on-flaky` is given.
  case flaky

  /// Whether this verdict counts against the run.
  public var isFailure: Bool { self == .failed || self == .errored }
}
