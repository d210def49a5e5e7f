@_spi(ForToolsIntegrationOnly) import AsyncHarness
import Synchronization

/// Which attributes a JUnit report carries beyond the profile every dashboard accepts.
public enum JUnitProfile: String, Sendable, Hashable, CaseIterable {
  /// Valid against both the Jenkins `junit-10.xsd` and the Maven Surefire schema: accepted
  /// by Jenkins, GitLab, the GitHub reporters and the other JUnit consumers.
  case standard
  /// ``standard`` plus `file` and `line` attributes on each failing `<testcase>` (the first
  /// failing issue's location), which the GitHub reporters (mikepenz, EnricoMi) and GitLab
  /// use to annotate the source, and on every other testcase whose test's declaration the
  /// reporter knows (the relative `file` that CircleCI's and Buildkite's test splitting
  /// read). Both schemas reject these attributes, so choose this profile only for those
  /// consumers.
  case github

  /// The name `--junit-profile` takes.
  public var name: String { rawValue }
}

/// Writes a run as a JUnit XML report for CI dashboards, through libxml2's streaming writer.
///
/// Each suite × waiter strategy becomes one `<testsuite>` named `Suite [waiter]`, with the
/// properties `waiter`, `seed` (when the run was shuffled), `jitterSeed` (when real queues
/// were jittered, `--jitter`), `repetitions` and `harnessVersion`; a suite whose waiter is
/// empty (XCTest and Swift Testing tests, see ``convertSwiftTestingEvents(_:toJUnit:profile:)``)
/// is named `Suite` and has no `waiter` property. Each test becomes a `<testcase>` whose
/// `classname` is that suite name and whose `name` is the test's name, with ` #N` for
/// repetition N > 1; names that would
/// repeat in the file get a ` (2)`, ` (3)`, … suffix, skipping the names of other tests in
/// the suite (a test literally named `dup (2)` keeps its name).
///
/// Verdicts become result elements: a failure as `<failure message type>`, an error (a
/// thrown error, harness misuse, a deadlock) as `<error message type>`, both listing every
/// failing issue as `message path/File.swift:LINE`; a skip as `<skipped message>`; a known
/// issue as `<skipped message="known issue: …">`, so it does not count as a failure.
/// Captured output goes into `<system-out>`; warnings, late signals (also those arriving
/// after their test ended, while its suite is open) and a known issue's failures go into
/// `<system-err>`. Each of these texts keeps at most `outputLimit` bytes and then says how
/// much was cut.
///
/// Attribute values are capped far lower, at 4 KiB with their cut note (libxml2's default
/// parser refuses files with long values in a row): suite and test names keep 3 KiB of the
/// user's text, the rest of the 4 KiB holding the waiter and suffixes, and end with
/// ` [AsyncHarness: N more bytes cut]` when cut. A testcase whose name was cut starts its
/// `<system-out>` with the full name (capped at `outputLimit`), and so does the first
/// testcase of a suite whose name was cut, with the full suite name; a failure's full
/// message is in the failure's text.
///
/// Text is sanitized: ANSI escape sequences are removed and characters XML 1.0 forbids are
/// replaced by visible stand-ins (`␀`…`␟` for control characters, `␡` for DEL, `�` for C1
/// controls, U+FFFE and U+FFFF). Times have three decimals, never an exponent.
///
/// The report is written to a temporary file in the destination's directory and renamed
/// into place by ``finish()``: a crash never leaves a torn report. Memory stays flat: an
/// open suite holds its last 4,096 to 8,192 ended testcases, and the ones before wait in
/// order in an unlinked file beside the report; finished suites are streamed to disk in the
/// order they started (one that ends before a suite started earlier waits for it). Output or
/// a late issue that arrives for a test more than 4,096 ended tests later is not in the
/// report (the JSON Lines stream has it).
///
/// A test run again after failing attempts (`--retries`) is one testcase: when its last
/// attempt passed (flaky), it passes and holds a Surefire `<flakyFailure>` (or
/// `<flakyError>`) for each failed attempt; when every attempt failed, its `<failure>` (or
/// `<error>`) is the last attempt's, followed by a `<rerunFailure>` (or `<rerunError>`)
/// for each attempt before it. Each holds the attempt's failing issues as its `<stackTrace>`
/// and its output as `<system-out>`; the testcase's `time` is that of every attempt.
/// Jenkins and the GitHub reporters read these elements; the others ignore them.
///
/// ```swift
/// let junit = try JUnitReporter(path: "reports/junit.xml", profile: .github)
/// ```
public final class JUnitReporter: Reporter {
  /// Where the report is written.
  public let path: String
  /// The attributes written beyond the standard profile.
  public let profile: JUnitProfile
  /// The most UTF-8 bytes kept of each text; attribute values keep at most 4 KiB.
  public let outputLimit: Int
  private let report: Mutex<JUnitReport>

  /// Creates a reporter that writes the report to `path` when the run finishes.
  ///
  /// - Parameters:
  ///   - path: The report file; it is replaced when the run finishes.
  ///   - profile: ``JUnitProfile/standard`` (the default) or ``JUnitProfile/github``.
  ///   - outputLimit: The most bytes kept of each test's output and of each text; 1 MiB by
  ///     default, well under the 10 MB that libxml2-based readers accept.
  ///   - suites: The suites being run: under ``JUnitProfile/github``, a testcase with no
  ///     failure location gets the `file` and `line` where its test is declared.
  /// - Throws: ``JUnitError/destinationUnusable(path:reason:)`` when the directory of `path`
  ///   is missing or unwritable, or `path` is a directory, before any test runs.
  public convenience init(path: String, profile: JUnitProfile = .standard, outputLimit: Int = ReportDefaults.outputLimit,
              suites: [Suite] = []) throws {
    try self.init(path: path, profile: profile, outputLimit: outputLimit, catalog: Catalog(suites: suites))
  }

  /// Creates a reporter of a run of the tests of `catalog` (harness suites' or another
  /// package's); as ``init(path:profile:outputLimit:suites:)``.
  package init(path: String, profile: JUnitProfile = .standard, outputLimit: Int = ReportDefaults.outputLimit,
               catalog: Catalog) throws {
    self.path = path
    self.profile = profile
    self.outputLimit = max(0, outputLimit)
    // Only the github profile writes where tests are declared.
    let declared = profile == .github
      ? Dictionary(catalog.groups.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first }) : [:]
    report = Mutex(try JUnitReport(destination: path, profile: profile, outputLimit: max(0, outputLimit),
                                   declaredSuites: declared))
  }

  /// Makes the reporter for `--junit PATH --junit-profile NAME` and reads the report of
  /// `--shard-timings PATH` (``readJUnitTimings(_:)``); pass it to `HarnessMain.run(_:junit:)`.
  ///
  /// ```swift
  /// HarnessMain.run(suites, junit: JUnitReporter.factory)
  /// ```
  public static let factory = JUnitSupport(
    reporter: { path, profileName, catalog in
      guard let profile = JUnitProfile(rawValue: profileName) else { throw JUnitError.unknownProfile(profileName) }
      return try JUnitReporter(path: path, profile: profile, catalog: catalog)
    },
    timings: { path in try readJUnitTimings(path) })

  /// Records one event; a suite is written to the temporary file when it ends.
  ///
  /// - Throws: ``JUnitError/unexpectedEvent(_:)`` for events out of order (a test outside a
  ///   suite, a suite started twice, anything after ``finish()``), or a ``JUnitError``
  ///   when writing fails.
  public func handle(_ event: Event) throws {
    try report.withLock { try $0.handle(event) }
  }

  /// Writes the report and renames it into place. Suites still open (the run was
  /// interrupted) are written with the tests that ended. Calling it again does nothing.
  public func finish() throws {
    try report.withLock { try $0.finish() }
  }
}
