import AsyncHarness
import Foundation

/// Which attributes a JUnit report carries beyond the profile every dashboard accepts.
public enum JUnitProfile: String, Sendable, Hashable, CaseIterable {
  /// Valid against both the Jenkins `junit-10.xsd` and the Maven Surefire schema: accepted
  /// by Jenkins, GitLab, the GitHub reporters and the other JUnit consumers.
  case standard
  /// ``standard`` plus `file` and `line` attributes on each failing `<testcase>` (the first
  /// failing issue's location), which the GitHub reporters (mikepenz, EnricoMi) and GitLab
  /// use to annotate the source. Both schemas reject these attributes, so choose this
  /// profile only for those consumers.
  case github

  /// The name `--junit-profile` takes.
  public var name: String { rawValue }
}

/// Writes a run as a JUnit XML report for CI dashboards, through libxml2's streaming writer.
///
/// Each suite × waiter strategy becomes one `<testsuite>` named `Suite [waiter]`, with the
/// properties `waiter`, `seed` (when the run was shuffled), `repetitions` and
/// `harnessVersion`. Each test becomes a `<testcase>` whose `classname` is that suite name
/// and whose `name` is the test's name, with ` #N` for repetition N > 1; names that would
/// repeat in the file get a ` (2)`, ` (3)`, … suffix.
///
/// Verdicts become result elements: a failure as `<failure message type>`, an error (a
/// thrown error, harness misuse, a deadlock) as `<error message type>`, both listing every
/// failing issue as `message path/File.swift:LINE`; a skip as `<skipped message>`; a known
/// issue as `<skipped message="known issue: …">`, so it does not count as a failure.
/// Captured output goes into `<system-out>`; warnings, late signals (also those arriving
/// after their test ended, while its suite is open) and a known issue's failures go into
/// `<system-err>`. Each of these texts, and each attribute, keeps at most `outputLimit`
/// bytes and then says how much was cut.
///
/// Text is sanitized: ANSI escape sequences are removed and characters XML 1.0 forbids are
/// replaced by visible stand-ins (`␀`…`␟` for control characters, `␡` for DEL, `�` for C1
/// controls, U+FFFE and U+FFFF). Times have three decimals, never an exponent.
///
/// The report is written to a temporary file in the destination's directory and renamed
/// into place by ``finish()``: a crash never leaves a torn report. Memory stays flat: only
/// the open suite's testcases are held; finished suites are streamed to disk.
///
/// Flaky results (Surefire's `<flakyFailure>`) will be written once the runner retries
/// failed tests and ``TestResult`` carries the earlier attempts.
///
/// ```swift
/// let junit = try JUnitReporter(path: "reports/junit.xml", profile: .github)
/// ```
public final class JUnitReporter: Reporter {
  /// Where the report is written.
  public let path: String
  /// The attributes written beyond the standard profile.
  public let profile: JUnitProfile
  /// The most UTF-8 bytes kept of each text and attribute value.
  public let outputLimit: Int

  private var document: JUnitDocument?
  private var run: RunInfo?
  private var suite: OpenSuite?
  private var suiteNames = UniqueNames()
  private var suitesTime = 0.0
  private var runTime: Double?

  /// Creates a reporter that writes the report to `path` when the run finishes.
  ///
  /// - Parameters:
  ///   - path: The report file; it is replaced when the run finishes.
  ///   - profile: ``JUnitProfile/standard`` (the default) or ``JUnitProfile/github``.
  ///   - outputLimit: The most bytes kept of each test's output, of each message and of each
  ///     name; 1 MiB by default, well under the 10 MB that libxml2-based readers accept.
  /// - Throws: ``JUnitError/destinationUnusable(path:reason:)`` when the directory of `path`
  ///   is missing or unwritable, or `path` is a directory, before any test runs.
  public init(path: String, profile: JUnitProfile = .standard, outputLimit: Int = 1_048_576) throws {
    self.path = path
    self.profile = profile
    self.outputLimit = max(0, outputLimit)
    document = try JUnitDocument(destination: path)
  }

  /// Makes the reporter for `--junit PATH --junit-profile NAME`; pass it to
  /// `HarnessMain.run(_:junit:)`.
  ///
  /// ```swift
  /// HarnessMain.run(suites, junit: JUnitReporter.factory)
  /// ```
  public static let factory: JUnitReporterFactory = { path, profileName in
    guard let profile = JUnitProfile(rawValue: profileName) else { throw JUnitError.unknownProfile(profileName) }
    return try JUnitReporter(path: path, profile: profile)
  }

  /// Records one event; a suite is written to the temporary file when it ends.
  ///
  /// - Throws: ``JUnitError/unexpectedEvent(_:)`` for events out of order (a test outside a
  ///   suite, a suite inside another, anything after ``finish()``), or a ``JUnitError``
  ///   when writing fails.
  public func handle(_ event: Event) throws {
    guard let document else { throw JUnitError.unexpectedEvent("\(event.kind) after finish()") }
    switch event.kind {
    case .runStarted:
      run = event.run
    case .suiteStarted:
      if let suite {
        throw JUnitError.unexpectedEvent("suite \(event.suite ?? "") started while \(suite.name.string) is open")
      }
      suite = OpenSuite(name: suiteNames.claim(suiteName(event)), waiter: event.waiter, timestamp: event.timestamp)
    case .testStarted:
      if let test = event.test { suite?.start(test) }
    case .outputCaptured:
      if let test = event.test, let output = event.output { suite?.capture(output, of: test, limit: outputLimit) }
    case .issueRecorded:
      if let test = event.test, let issue = event.issue { suite?.recordLate(issue, of: test) }
    case .testEnded:
      guard let test = event.test, let result = event.result else {
        throw JUnitError.unexpectedEvent("testEnded without a test and a result")
      }
      guard let suite else { throw JUnitError.unexpectedEvent("test \(test) ended outside a suite") }
      suite.end(test, name: testName(test), result: result, duration: event.duration ?? 0)
    case .suiteEnded:
      guard let suite else { throw JUnitError.unexpectedEvent("suite \(event.suite ?? "") ended but none is open") }
      try write(suite, duration: event.duration ?? 0, to: document)
      self.suite = nil
    case .runEnded:
      runTime = event.duration
    }
  }

  /// Writes the report and renames it into place. A suite still open (the run was
  /// interrupted) is written with the tests that ended. Calling it again does nothing.
  public func finish() throws {
    guard let document else { return }
    if let suite {
      try write(suite, duration: Date().timeIntervalSince(suite.timestamp), to: document)
      self.suite = nil
    }
    try document.commit(name: "AsyncHarness", time: runTime ?? suitesTime)
    self.document = nil
  }

  // MARK: Names

  private func suiteName(_ event: Event) -> XMLText {
    let name = XMLText(event.suite ?? "", limit: outputLimit).nonBlank(or: "(unnamed suite)")
    guard let waiter = event.waiter else { return name }
    return XMLText("\(name.string) [\(XMLText(waiter, limit: outputLimit).string)]")
  }

  private func testName(_ test: TestID) -> XMLText {
    let base = XMLText(test.name, limit: outputLimit).nonBlank(or: "(unnamed test)")
    return test.repetition > 1 ? XMLText("\(base.string) #\(test.repetition)") : base
  }

  // MARK: Writing

  /// The result element a verdict is written as; counts come from the same function.
  private static func resultElement(_ verdict: Verdict) -> String? {
    switch verdict {
    case .passed: nil
    case .failed: "failure"
    case .errored: "error"
    case .skipped, .knownIssue: "skipped"
    }
  }

  private func write(_ suite: OpenSuite, duration: Double, to document: JUnitDocument) throws {
    var counts = JUnitCounts()
    for testCase in suite.cases { counts.count(resultElement: Self.resultElement(testCase.result.verdict)) }
    suitesTime += max(0, duration)
    try document.writeSuite(
      name: suite.name, counts: counts, time: JUnitFormat.time(duration),
      timestamp: JUnitFormat.timestamp(suite.timestamp)
    ) { writer in
      try writer.startElement("properties")
      if let waiter = suite.waiter { try property("waiter", waiter, to: writer) }
      if let seed = run?.seed { try property("seed", String(seed), to: writer) }
      if let run { try property("repetitions", String(run.repetitions), to: writer) }
      try property("harnessVersion", run?.harnessVersion ?? AsyncHarnessVersion.current, to: writer)
      try writer.endElement()
      for testCase in suite.cases { try write(testCase, classname: suite.name, to: writer) }
    }
  }

  private func property(_ name: String, _ value: String, to writer: XMLWriter) throws {
    try writer.startElement("property")
    try writer.attribute("name", XMLText(name))
    try writer.attribute("value", XMLText(value, limit: outputLimit))
    try writer.endElement()
  }

  private func write(_ testCase: TestCase, classname: XMLText, to writer: XMLWriter) throws {
    let result = testCase.result
    let failing = result.issues.filter(\.isFailure)
    let primary = failing.first { $0.isError == (result.verdict == .errored) } ?? failing.first
    try writer.startElement("testcase")
    try writer.attribute("name", testCase.name)
    try writer.attribute("classname", classname)
    try writer.attribute("time", XMLText(JUnitFormat.time(testCase.duration)))
    if profile == .github, result.verdict.isFailure, let location = primary?.sourceLocation {
      let file = XMLText(location.path, limit: outputLimit)
      if !file.isBlank { try writer.attribute("file", file) }
      if location.line > 0 { try writer.attribute("line", XMLText(String(location.line))) }
    }
    if let element = Self.resultElement(result.verdict) {
      try writer.startElement(element)
      switch result.verdict {
      case .failed, .errored:
        let message = primary?.message ?? result.reason ?? "the test \(result.verdict.rawValue)"
        try writer.attribute("message", XMLText(message, limit: outputLimit).nonBlank(or: "(no message)"))
        try writer.attribute("type", XMLText(primary?.kind.rawValue ?? result.verdict.rawValue))
        let text = failing.isEmpty ? message : failing.map(line).joined(separator: "\n")
        try writer.text(XMLText(text, limit: outputLimit))
      case .knownIssue:
        let message = result.reason.map { "known issue: \($0)" } ?? "known issue"
        try writer.attribute("message", XMLText(message, limit: outputLimit))
      default:
        if let reason = result.reason { try writer.attribute("message", XMLText(reason, limit: outputLimit)) }
      }
      try writer.endElement()
    }
    if let output = testCase.output, !output.isEmpty {
      try writer.startElement("system-out")
      try writer.text(XMLText(output.text))
      try writer.endElement()
    }
    let notes = result.issues.filter { !$0.isFailure || result.verdict == .knownIssue } + testCase.lateIssues
    if !notes.isEmpty {
      try writer.startElement("system-err")
      try writer.text(XMLText(notes.map { "\($0.kind.rawValue): \(line($0))" }.joined(separator: "\n"), limit: outputLimit))
      try writer.endElement()
    }
    try writer.endElement()
  }

  /// `message path/File.swift:LINE`, or the message alone when the location is unknown.
  private func line(_ issue: Issue) -> String {
    guard let location = issue.sourceLocation else { return issue.message }
    return "\(issue.message) \(location)"
  }
}

/// The suite × waiter being run: its ended tests wait here until the suite ends, so that
/// the `<testsuite>` counts are known before it is written and late issues can still join.
///
/// Tests run one at a time, as the runner sends them: output goes to the running test, and
/// output or issues for a test that already ended are matched by searching the ended tests
/// from the newest, where a late signal's test almost always is.
private final class OpenSuite {
  let name: XMLText
  let waiter: String?
  let timestamp: Date
  private(set) var cases: [TestCase] = []
  private var running: (test: TestID, output: CapturedText?)?
  private var names = UniqueNames()

  init(name: XMLText, waiter: String?, timestamp: Date) {
    self.name = name
    self.waiter = waiter
    self.timestamp = timestamp
  }

  func start(_ test: TestID) {
    running = (test, nil)
  }

  func capture(_ output: String, of test: TestID, limit: Int) {
    if running?.test == test {
      running!.output = running!.output ?? CapturedText(limit: limit)
      running!.output!.append(output)
    } else if let index = endedIndex(test) {
      cases[index].output = cases[index].output ?? CapturedText(limit: limit)
      cases[index].output!.append(output)
    }
  }

  /// Keeps an issue that arrived after its test ended; issues that arrive while the test runs
  /// are also in its result.
  func recordLate(_ issue: Issue, of test: TestID) {
    if running?.test != test, let index = endedIndex(test) { cases[index].lateIssues.append(issue) }
  }

  func end(_ test: TestID, name: XMLText, result: TestResult, duration: Double) {
    let output = running?.test == test ? running?.output : nil
    running = nil
    cases.append(TestCase(test: test, name: names.claim(name), duration: duration, result: result, output: output))
  }

  private func endedIndex(_ test: TestID) -> Int? {
    cases.lastIndex { $0.test == test }
  }
}

/// One ended test, waiting for its suite to end.
private struct TestCase {
  var test: TestID
  var name: XMLText
  var duration: Double
  var result: TestResult
  var output: CapturedText?
  var lateIssues: [Issue] = []
}
