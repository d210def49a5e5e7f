import AsyncHarness
import Foundation

/// Converts a Swift Testing event stream into a JUnit report, through ``JUnitReporter``.
///
/// The stream is the file `swift test --event-stream-output-path PATH --event-stream-version 6.3`
/// writes (version 0 is read too; with 6.3, set `SWT_EXPERIMENTAL_EVENT_STREAM_FIELDS_ENABLED=1`
/// for skip reasons, thrown errors and a case's arguments): one JSON record a line, the tests first, then the events as they happen. Each
/// suite (`Module.Suite`, or the module for tests outside a suite) becomes a `<testsuite>`
/// and each test function a `<testcase>` (a parameterized test is one testcase; a failing
/// case's arguments follow its message). An issue fails its test at the issue's file and
/// line; a caught error makes the test error; a known issue or a warning does not fail it
/// and goes into `<system-err>`; a skipped test (or a test of a skipped suite) is skipped
/// with its reason, and a test that cancelled itself (`Test.cancel`) is skipped with the
/// reason `cancelled: COMMENT`, as `harness test` reports it: both read the stream with one
/// decoder.
///
/// Because Swift Testing writes the stream as tests run, a report survives a crash: a test
/// that started and never ended becomes an `<error>` naming it at its declaration, and when
/// the run never ended, the tests that never started are skipped as not run.
///
/// ```swift
/// try convertSwiftTestingEvents(".build/events.jsonl", toJUnit: ".build/swift-testing.xml")
/// ```
///
/// - Parameters:
///   - input: The event stream.
///   - output: The report to write.
///   - profile: The attributes written beyond the standard profile.
/// - Returns: The counts of the tests in the report.
/// - Throws: ``JUnitError/unreadableEventStream(path:reason:)`` when `input` is missing, is
///   not JSON Lines, or is not version 0 (naming the line); a ``JUnitError`` when `output`
///   cannot be written. Nothing is written then.
@discardableResult
public func convertSwiftTestingEvents(_ input: String, toJUnit output: String, profile: JUnitProfile = .standard) throws
  -> Summary
{
  let stream = try SwiftTestingStream(path: input)
  let reporter = try JUnitReporter(path: output, profile: profile)
  let events = stream.harnessEvents()
  for event in events { try reporter.handle(event) }
  try reporter.finish()
  guard case .runEnded(let summary, _)? = events.last?.kind else { return Summary() }
  return summary
}

/// A Swift Testing event stream, read: the declared tests and what happened to each.
struct SwiftTestingStream {
  /// A test or suite the stream declares, in declaration order.
  struct Declared {
    var id: String
    var name: String
    var isSuite: Bool
    var location: SourceLocation?
  }

  /// What happened to one test.
  struct Progress {
    var started: Date?
    var ended: Date?
    /// Set when the test was skipped: its reason, or `.some(nil)` when it has none.
    var skipReason: String??
    /// Set when the test cancelled itself: it ends skipped so, unless an issue failed it.
    var cancelReason: String?
    var issues: [Issue] = []
  }

  private(set) var declared: [Declared] = []
  private(set) var progress: [String: Progress] = [:]
  private(set) var runStarted: Date?
  private(set) var runEnded: Date?
  /// The last instant in the stream: where a test that never ended stops.
  private(set) var lastInstant: Date?
  /// The one decoder of Swift Testing's records, which `harness test` reads a bundle's with.
  private var decoder = SwiftTestingDecoder()
  /// The failing issues that named no test («unknown»), and when each was recorded.
  private(set) var issuesOfNoTest: [(issue: Issue, at: Date)] = []

  /// Reads the stream at `path`.
  /// - Throws: ``JUnitError/unreadableEventStream(path:reason:)``.
  init(path: String) throws {
    try forEachLine(of: path, unreadable: JUnitError.unreadableEventStream) { number, line in
      let record: SwiftTestingRecord
      do {
        record = try SwiftTestingRecord(line: line)
      } catch {
        throw JUnitError.unreadableEventStream(path: path, reason: "line \(number) is not an event stream record")
      }
      guard record.isReadable else {
        throw JUnitError.unreadableEventStream(
          path: path,
          reason: "line \(number) is version \(record.version); this tool reads versions 0 and \(SwiftTestingRecord.runVersion) (swift test --event-stream-version \(SwiftTestingRecord.runVersion))")
      }
      read(record)
    }
  }

  private mutating func read(_ record: SwiftTestingRecord) {
    let instant = record.payload.instant.map { Date(timeIntervalSince1970: $0.since1970) }
    if record.kind == "event" {
      // An event without its instant is not placed in time; it means nothing here.
      guard let instant else { return }
      lastInstant = instant
    }
    switch decoder.read(record) {
    case .declared(let declaration)?:
      declared.append(Declared(id: declaration.id, name: declaration.name ?? declaration.id, isSuite: declaration.isSuite,
                               location: declaration.location))
    case .runStarted?: runStarted = instant
    case .runEnded?: runEnded = instant
    case .started(let id)?: progress[id, default: Progress()].started = instant
    case .ended(let id, let cancelReason)?:
      progress[id, default: Progress()].ended = instant
      progress[id, default: Progress()].cancelReason = cancelReason
    case .skipped(let id, let reason)?: progress[id, default: Progress()].skipReason = .some(reason)
    case .issue(let id, let issue)?: progress[id, default: Progress()].issues.append(issue)
    case .issueOfNoTest(let issue)?: if issue.isFailure { issuesOfNoTest.append((issue, instant ?? lastInstant ?? Date())) }
    case .cancelled?, nil: break
    }
  }

  /// The run as harness events: a suite at a time, each test with its verdict.
  func harnessEvents() -> [Event] {
    let start = runStarted ?? lastInstant ?? Date()
    var events = [Event(.runStarted(RunInfo()), timestamp: start)]
    var total = Summary()
    let suites = declared.filter(\.isSuite)
    var order: [String] = []
    var tests: [String: [(Declared, TestResult, start: Date, end: Date)]] = [:]
    for test in declared where !test.isSuite {
      let suite = suiteName(of: test, among: suites)
      guard let (result, started, ended) = outcome(of: test, suite: suite) else { continue }
      if tests[suite] == nil { order.append(suite) }
      tests[suite, default: []].append((test, result, started, ended))
    }
    for suite in order {
      let cases = tests[suite] ?? []
      let run = SuiteRun(suite: suite, host: "")
      let suiteStart = cases.map(\.start).min() ?? start
      var summary = Summary()
      events.append(Event(.suiteStarted(run), timestamp: suiteStart))
      for (test, result, started, ended) in cases {
        let id = TestID(suite: suite, name: test.name, host: "")
        events.append(Event(.testStarted(id), timestamp: started))
        events += result.issues.map { Event(.issueRecorded(id, $0), timestamp: ended) }
        events.append(Event(.testEnded(id, TestEnd(once: result, duration: ended.timeIntervalSince(started))), timestamp: ended))
        summary.count(result.verdict)
      }
      let suiteEnd = cases.map(\.end).max() ?? suiteStart
      events.append(Event(.suiteEnded(run, summary, duration: suiteEnd.timeIntervalSince(suiteStart)), timestamp: suiteEnd))
      total.add(summary)
    }
    let end = runEnded ?? lastInstant ?? start
    let outside = outsideFailures(at: end)
    events += outside.map { Event(.outsideFailure($0.failure), timestamp: $0.at) }
    total.outsideFailures = outside.count
    events.append(Event(.runEnded(total, duration: end.timeIntervalSince(start)), timestamp: end))
    return events
  }

  /// What failed outside every test's body, as `harness test` reports it: a suite's failing
  /// issues (a trait that threw), issues of no test, and a process that stopped (no
  /// `runEnded`) while no test ran.
  private func outsideFailures(at end: Date) -> [(failure: OutsideFailure, at: Date)] {
    var failures: [(failure: OutsideFailure, at: Date)] = []
    for suite in declared where suite.isSuite {
      let tests = declared.filter { !$0.isSuite && SwiftTestingRecord.encloses(suite.id, $0.id) }
      let afterTests = tests.contains { progress[$0.id]?.started != nil }
      for issue in progress[suite.id]?.issues ?? [] where issue.isFailure {
        failures.append((OutsideFailure(place: .suite, suite: SuiteRun(suite: suite.id, host: ""), issue: issue,
                                        afterTests: afterTests), progress[suite.id]?.ended ?? end))
      }
    }
    for (issue, at) in issuesOfNoTest {
      let module = issue.sourceLocation.map { String($0.fileID.prefix { $0 != "/" }) } ?? "Swift Testing"
      failures.append((OutsideFailure(place: .noTest, suite: SuiteRun(suite: module, host: ""), issue: issue, afterTests: true), at))
    }
    let running = declared.contains { !$0.isSuite && progress[$0.id]?.started != nil && progress[$0.id]?.ended == nil }
    if runStarted != nil, runEnded == nil, !running {
      failures.append((OutsideFailure(
        place: .process, suite: SuiteRun(suite: "Swift Testing", host: ""),
        issue: Issue(kind: .crashed, message: "The test process stopped while no test ran: the event stream ends without "
          + "its runEnded record"), afterTests: true), end))
    }
    return failures
  }

  /// The verdict of one test and when it ran; `nil` for a test the run left out (filtered).
  private func outcome(of test: Declared, suite: String) -> (TestResult, Date, Date)? {
    let state = progress[test.id] ?? Progress()
    if let reason = state.skipReason ?? skipReasonOfEnclosingSuite(of: test) {
      let when = state.started ?? lastInstant ?? Date()
      return (TestResult(verdict: .skipped, reason: reason), when, when)
    }
    guard let started = state.started else {
      // A run that never ended stopped before this test started.
      guard runEnded == nil, runStarted != nil else { return nil }
      let when = lastInstant ?? Date()
      return (TestResult(verdict: .skipped, reason: "not run: the test process stopped before this test started"), when, when)
    }
    guard let ended = state.ended else {
      let crash = Issue(
        kind: .crashed,
        message: "\(suite)/\(test.name) started and never ended: the test process stopped while it ran "
          + "(it crashed or exited, in this test or in one running beside it)",
        sourceLocation: test.location)
      return (TestResult(verdict: .errored, issues: state.issues + [crash]), started, lastInstant ?? started)
    }
    let failing = state.issues.filter(\.isFailure)
    let verdict: Verdict =
      failing.contains(where: \.isError) ? .errored : failing.isEmpty ? .passed : .failed
    // A test that cancelled itself is skipped, as `harness test` reports it, unless it failed first.
    if let reason = state.cancelReason, !verdict.isFailure {
      return (TestResult(verdict: .skipped, reason: reason, issues: state.issues), started, ended)
    }
    return (TestResult(verdict: verdict, issues: state.issues), started, ended)
  }

  /// The reason of the closest enclosing suite that was skipped (its tests have no events).
  private func skipReasonOfEnclosingSuite(of test: Declared) -> String?? {
    let enclosing = declared.filter { $0.isSuite && SwiftTestingRecord.encloses($0.id, test.id) }
      .sorted { $0.id.count > $1.id.count }
    return enclosing.lazy.compactMap { progress[$0.id]?.skipReason }.first
  }

  /// The closest enclosing suite's ID, or the module of a test outside any suite (the one
  /// rule, `SwiftTestingRecord.enclosingSuite(of:among:)`).
  private func suiteName(of test: Declared, among suites: [Declared]) -> String {
    SwiftTestingRecord.enclosingSuite(of: test.id, among: suites.map(\.id))
      ?? SwiftTestingRecord.module(ofTestAt: test.location, id: test.id)
  }
}
