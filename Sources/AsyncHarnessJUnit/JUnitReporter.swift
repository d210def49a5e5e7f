import AsyncHarness
import Foundation
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
  public init(path: String, profile: JUnitProfile = .standard, outputLimit: Int = ReportDefaults.outputLimit,
              suites: [Suite] = []) throws {
    self.path = path
    self.profile = profile
    self.outputLimit = max(0, outputLimit)
    // Only the github profile writes where tests are declared.
    let declared = profile == .github ? Dictionary(suites.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first }) : [:]
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
    reporter: { path, profileName, suites in
      guard let profile = JUnitProfile(rawValue: profileName) else { throw JUnitError.unknownProfile(profileName) }
      return try JUnitReporter(path: path, profile: profile, suites: suites)
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

/// The report being built: the open suites' tests, and the document finished suites are
/// streamed into.
private final class JUnitReport {
  let profile: JUnitProfile
  let outputLimit: Int
  /// The suites as declared, by name, for the github profile's `file` and `line`.
  let declaredSuites: [String: Suite]
  /// Where each test of the suite being written is declared, by name: made for one suite at
  /// a time, so that a million tests never hold a million locations at once.
  private var declarations: (suite: String, locations: [String: SourceLocation])?
  private var document: JUnitDocument?
  private var run: RunInfo?
  /// The suites started and not written, in the order they started, with the duration of
  /// those that ended: with `--workers N`, several run at once, their events interleave, and
  /// one that ends before a suite started earlier waits for it.
  private var open: [(run: SuiteRun, suite: OpenSuite, duration: Double?)] = []
  private var suiteNames = UniqueNames()
  private var suitesTime = 0.0
  private var runTime: Double?

  init(destination: String, profile: JUnitProfile, outputLimit: Int, declaredSuites: [String: Suite]) throws {
    self.profile = profile
    self.outputLimit = outputLimit
    self.declaredSuites = declaredSuites
    document = try JUnitDocument(destination: destination)
  }

  func handle(_ event: Event) throws {
    guard let document else { throw JUnitError.unexpectedEvent("\(event.kind.name) after finish()") }
    switch event.kind {
    case .runStarted(let run):
      self.run = run
    case .suiteStarted(let run):
      if suite(run) != nil { throw JUnitError.unexpectedEvent("suite \(run) started while it is open") }
      var name = suiteName(run)
      name.value = suiteNames.claim(name.value)
      open.append((run, OpenSuite(name: name, waiter: run.waiter, timestamp: event.timestamp, spillDirectory: document.directory,
                                  report: document.destination), nil))
    case .testStarted(let test):
      suite(test.suiteRun)?.start(test)
    case .outputCaptured(let test, let output):
      suite(test.suiteRun)?.capture(output, of: test, limit: outputLimit)
    case .issueRecorded(let test, let issue):
      suite(test.suiteRun)?.recordLate(issue, of: test)
    case .testEnded(let test, let result, let duration):
      guard let suite = suite(test.suiteRun) else { throw JUnitError.unexpectedEvent("test \(test) ended outside a suite") }
      try suite.end(test, name: testName(test), result: result, duration: duration)
    case .suiteEnded(let run, _, let duration):
      guard let index = open.firstIndex(where: { $0.run == run && $0.duration == nil }) else {
        throw JUnitError.unexpectedEvent("suite \(run.suite) ended but none is open")
      }
      open[index].duration = duration
      // Suites are written in the order they started (the plan's), each once every suite
      // before it is written.
      while let first = open.first, let duration = first.duration {
        open.removeFirst()
        try write(first.suite, duration: duration, to: document)
      }
    case .runEnded(_, let duration):
      runTime = duration
    case .testSlow:
      break
    }
  }

  /// The suite of `run` that started and has not ended.
  private func suite(_ run: SuiteRun) -> OpenSuite? {
    open.first { $0.run == run && $0.duration == nil }?.suite
  }

  func finish() throws {
    guard let document else { return }
    for (_, suite, duration) in open {
      try write(suite, duration: duration ?? Date().timeIntervalSince(suite.timestamp), to: document)
    }
    open = []
    try document.commit(name: JUnitFormat.reportName(shard: run?.shard), time: runTime ?? suitesTime)
    self.document = nil
  }

  // MARK: Names

  /// The most bytes of the user's suite or test name in a `name` or `classname`, leaving room
  /// in ``XMLText/attributeLimit`` for the waiter (at most `waiterLimit`) and the suffixes.
  static let nameLimit = 3072
  static let waiterLimit = 256

  /// `raw` as an attribute, with ` [waiter]` or ` #N` after it, and in full when it was cut.
  private func name(_ raw: String, placeholder: String, suffix: XMLText?) -> CappedName {
    let (value, isCut) = XMLText.attribute(raw, limit: Self.nameLimit)
    let full = isCut ? XMLText(raw, limit: outputLimit) : nil
    guard let suffix else { return CappedName(value: value.nonBlank(or: placeholder), full: full) }
    return CappedName(value: value.nonBlank(or: placeholder) + suffix, full: full.map { $0 + suffix })
  }

  /// `Suite [waiter]`, or the suite's name alone for tests that ran under no waiter strategy
  /// (XCTest and Swift Testing tests reported through the bridges).
  private func suiteName(_ run: SuiteRun) -> CappedName {
    let waiter = run.waiter.isEmpty
      ? nil : XMLText(" [") + XMLText(attribute: run.waiter, limit: Self.waiterLimit) + XMLText("]")
    return name(run.suite, placeholder: "(unnamed suite)", suffix: waiter)
  }

  private func testName(_ test: TestID) -> CappedName {
    name(test.name, placeholder: "(unnamed test)", suffix: test.repetition > 1 ? XMLText(" #\(test.repetition)") : nil)
  }

  // MARK: Writing

  /// The result element a verdict is written as; counts come from the same function.
  private static func resultElement(_ verdict: Verdict) -> String? {
    switch verdict {
    case .passed, .flaky: nil
    case .failed: "failure"
    case .errored: "error"
    case .skipped, .knownIssue: "skipped"
    }
  }

  private func write(_ suite: OpenSuite, duration: Double, to document: JUnitDocument) throws {
    // First pass: the counts, and the names to reserve; the second writes the testcases.
    var counts = JUnitCounts()
    var reserved: [XMLText] = []
    try suite.forEachCase(naming: testName) { testCase in
      counts.count(resultElement: Self.resultElement(testCase.result.verdict))
      reserved.append(testCase.name.value)
    }
    suitesTime += max(0, duration)
    try document.writeSuite(
      name: suite.name.value, counts: counts, time: JUnitFormat.time(duration),
      timestamp: JUnitFormat.timestamp(suite.timestamp)
    ) { writer in
      try writer.startElement("properties")
      if !suite.waiter.isEmpty { try property("waiter", suite.waiter, to: writer) }
      if let seed = run?.seed { try property("seed", String(seed), to: writer) }
      if let seed = run?.jitterSeed { try property("jitterSeed", String(seed), to: writer) }
      if let run { try property("repetitions", String(run.repetitions), to: writer) }
      try property("harnessVersion", run?.harnessVersion ?? AsyncHarnessVersion.current, to: writer)
      try writer.endElement()
      var names = UniqueNames(reserving: reserved)
      reserved = []
      var first = true
      try suite.forEachCase(naming: testName) { testCase in
        try write(
          testCase, name: names.claim(testCase.name.value), classname: suite.name.value,
          fullClassname: first ? suite.name.full : nil, to: writer)
        first = false
      }
    }
  }

  private func property(_ name: String, _ value: String, to writer: XMLWriter) throws {
    try writer.startElement("property")
    try writer.attribute("name", XMLText(name))
    try writer.attribute("value", XMLText(attribute: value))
    try writer.endElement()
  }

  /// Writes one testcase; `fullClassname` (the first testcase of a suite whose name was cut)
  /// and the test's full name, when cut, start its `<system-out>`. The elements come in the
  /// order the Surefire schema requires: failure, reruns and flaky failures, skipped, error,
  /// reruns and flaky errors, output.
  private func write(
    _ testCase: TestCase, name: XMLText, classname: XMLText, fullClassname: XMLText?, to writer: XMLWriter
  ) throws {
    let result = testCase.result
    let primary = Self.primaryIssue(of: result)
    try writer.startElement("testcase")
    try writer.attribute("name", name)
    try writer.attribute("classname", classname)
    let duration = testCase.earlierAttempts.reduce(testCase.duration) { $0 + $1.duration }
    try writer.attribute("time", XMLText(JUnitFormat.time(duration)))
    if profile == .github, let location = (result.verdict.isFailure ? primary?.sourceLocation : nil)
      ?? declaration(of: testCase.test) {
      let file = XMLText(attribute: location.path)
      if !file.isBlank { try writer.attribute("file", file) }
      if location.line > 0 { try writer.attribute("line", XMLText(String(location.line))) }
    }
    // Earlier attempts: flaky ones when the last attempt passed, reruns otherwise.
    let prefix = result.verdict == .flaky ? "flaky" : "rerun"
    let (erroredAttempts, failedAttempts) = (
      testCase.earlierAttempts.filter { $0.result.verdict == .errored },
      testCase.earlierAttempts.filter { $0.result.verdict != .errored })
    if result.verdict == .failed { try writeResult(of: testCase, primary: primary, to: writer) }
    for attempt in failedAttempts { try writeAttempt(attempt, element: prefix + "Failure", to: writer) }
    if result.verdict != .failed { try writeResult(of: testCase, primary: primary, to: writer) }
    for attempt in erroredAttempts { try writeAttempt(attempt, element: prefix + "Error", to: writer) }
    // Lists made only when there is something in them: most testcases have nothing to add.
    var systemOut: [XMLText] = []
    if fullClassname != nil || testCase.name.full != nil {
      for (label, full) in [("classname", fullClassname), ("name", testCase.name.full)] where full != nil {
        systemOut.append(XMLText("[AsyncHarness: the \(label) in full]\n") + full! + XMLText("\n"))
      }
    }
    if let output = testCase.output, !output.isEmpty { systemOut.append(XMLText(output)) }
    if !systemOut.isEmpty {
      try writer.startElement("system-out")
      for text in systemOut { try writer.text(text) }
      try writer.endElement()
    }
    let notes = result.issues.isEmpty && testCase.lateIssues.isEmpty ? []
      : result.issues.filter { !$0.isFailure || result.verdict == .knownIssue } + testCase.lateIssues
    if !notes.isEmpty {
      try writer.startElement("system-err")
      try writer.text(lines(notes, labelled: true))
      try writer.endElement()
    }
    try writer.endElement()
  }

  /// Where `test` is declared, when its suite was given.
  private func declaration(of test: TestID) -> SourceLocation? {
    if declarations?.suite != test.suite {
      var locations: [String: SourceLocation] = [:]
      for declared in declaredSuites[test.suite]?.tests ?? [] { locations[declared.name] = declared.sourceLocation }
      declarations = (test.suite, locations)
    }
    return declarations?.locations[test.name]
  }

  /// The failing issue a failure or error element names: the first error of an errored test,
  /// the first failure otherwise.
  private static func primaryIssue(of result: TestResult) -> Issue? {
    let failing = result.issues.filter(\.isFailure)
    return failing.first { $0.isError == (result.verdict == .errored) } ?? failing.first
  }

  /// Writes the result element of the test's last attempt, if its verdict has one.
  private func writeResult(of testCase: TestCase, primary: Issue?, to writer: XMLWriter) throws {
    let result = testCase.result
    guard let element = Self.resultElement(result.verdict) else { return }
    let failing = result.issues.filter(\.isFailure)
    try writer.startElement(element)
    switch result.verdict {
    case .failed, .errored:
      let message = primary?.message ?? result.reason ?? "the test \(result.verdict.rawValue)"
      try writer.attribute("message", XMLText(attribute: message).nonBlank(or: "(no message)"))
      try writer.attribute("type", XMLText(primary?.kind.rawValue ?? result.verdict.rawValue))
      try writer.text(failing.isEmpty ? XMLText(message, limit: outputLimit) : lines(failing, labelled: false))
      // Issue 13: the flag that replays the schedule the test failed under.
      if let token = testCase.result.replayToken(of: testCase.test) { try writer.text(XMLText("\nreplay: --schedule \(token)")) }
    case .knownIssue:
      let message = result.reason.map { XMLText("known issue: ") + XMLText(attribute: $0, limit: XMLText.attributeLimit - 13) }
        ?? XMLText("known issue")
      try writer.attribute("message", message)
    default:
      if let reason = result.reason { try writer.attribute("message", XMLText(attribute: reason)) }
    }
    try writer.endElement()
  }

  /// Writes an earlier, failing attempt as Surefire's `<flakyFailure>`, `<rerunFailure>`,
  /// `<flakyError>` or `<rerunError>`: its message and type, its failing issues as the
  /// `<stackTrace>`, its output as `<system-out>`.
  private func writeAttempt(_ attempt: TestCase, element: String, to writer: XMLWriter) throws {
    let primary = Self.primaryIssue(of: attempt.result)
    let message = primary?.message ?? "attempt \(attempt.test.attempt) \(attempt.result.verdict.rawValue)"
    try writer.startElement(element)
    try writer.attribute("message", XMLText(attribute: "attempt \(attempt.test.attempt): " + message))
    try writer.attribute("type", XMLText(primary?.kind.rawValue ?? attempt.result.verdict.rawValue))
    try writer.startElement("stackTrace")
    try writer.text(lines(attempt.result.issues.filter(\.isFailure), labelled: false))
    try writer.endElement()
    if let output = attempt.output, !output.isEmpty {
      try writer.startElement("system-out")
      try writer.text(XMLText(output))
      try writer.endElement()
    }
    try writer.endElement()
  }

  /// One line per issue, `message path/File.swift:LINE` (the message alone when the location
  /// is unknown), after `kind: ` when `labelled`. The message and the path are sanitized on
  /// their own, so an escape sequence cut short at the end of a message keeps the location.
  private func lines(_ issues: [Issue], labelled: Bool) -> XMLText {
    var text = XMLText.captured(limit: outputLimit)
    for (index, issue) in issues.enumerated() {
      text.append((index > 0 ? "\n" : "") + (labelled ? "\(issue.kind.rawValue): " : ""))
      text.append(issue.message)
      if let location = issue.sourceLocation {
        text.append(" ")
        text.append(location.path)
        text.append(":\(location.line)")
      }
    }
    return XMLText(text)
  }
}

/// The suite × waiter being run: its ended tests wait here until the suite ends, so that
/// the `<testsuite>` counts are known before it is written and late issues can still join.
///
/// Several of its tests may run at once (a suite whose tests run in parallel): output goes
/// to the running test it names, and output or issues for a test that already ended are
/// matched by searching the ended tests from the newest, where a late signal's test almost
/// always is. Testcases are written in the order their tests first started, which the
/// runner keeps in plan order.
///
/// Memory stays flat however many tests the suite has: beyond ``memoryLimit`` ended tests,
/// the oldest go to a ``CaseSpill`` on disk, in order.
/// Output or an issue arriving for a test after that (more than ``memoryLimit`` tests after
/// it ended) is not in the report; the JSON Lines stream has it.
private final class OpenSuite {
  /// How many ended tests a suite keeps in memory, at most twice over.
  static let memoryLimit = 4096

  let name: CappedName
  let waiter: String
  let timestamp: Date
  /// The ended tests in memory, in the order they ended.
  private var cases: [TestCase] = []
  /// The ended tests that left memory, all before every test in `cases`.
  private var spill: CaseSpill?
  private let spillDirectory: String
  private let report: String
  /// Failed attempts that run again, until the test's last attempt ends.
  private var retried: [TestCase] = []
  /// The attempts running now: each test's place in the suite's order, and its output.
  private var running: [TestID: (order: Int, output: CappedText?)] = [:]
  private var nextOrder = 0

  init(name: CappedName, waiter: String, timestamp: Date, spillDirectory: String, report: String) {
    self.name = name
    self.waiter = waiter
    self.timestamp = timestamp
    self.spillDirectory = spillDirectory
    self.report = report
  }

  func start(_ test: TestID) {
    running[test] = (order(of: test), nil)
  }

  /// The place of a test in the suite's order: that of its earlier attempts, or the next.
  private func order(of test: TestID) -> Int {
    if let earlier = retried.last(where: { Self.sameTest($0.test, test) }) { return earlier.order }
    defer { nextOrder += 1 }
    return nextOrder
  }

  func capture(_ output: String, of test: TestID, limit: Int) {
    if running[test] != nil {
      running[test]!.output = running[test]!.output ?? XMLText.captured(limit: limit)
      running[test]!.output!.append(output)
    } else if let index = endedIndex(test) {
      cases[index].output = cases[index].output ?? XMLText.captured(limit: limit)
      cases[index].output!.append(output)
    }
  }

  /// Keeps an issue that arrived after its test ended; issues that arrive while the test runs
  /// are also in its result.
  func recordLate(_ issue: Issue, of test: TestID) {
    if running[test] == nil, let index = endedIndex(test) { cases[index].lateIssues.append(issue) }
  }

  /// Ends a test's attempt: an attempt that runs again waits for the test's last attempt,
  /// which becomes the testcase and carries the attempts before it.
  func end(_ test: TestID, name: CappedName, result: TestResult, duration: Double) throws {
    let run = running.removeValue(forKey: test)
    let ended = TestCase(test: test, order: run?.order ?? order(of: test), name: name, duration: duration,
                         result: result, output: run?.output)
    if result.willRetry {
      retried.append(ended)
    } else {
      var last = ended
      last.earlierAttempts = retried.filter { Self.sameTest($0.test, test) }
      retried.removeAll { Self.sameTest($0.test, test) }
      cases.append(last)
      if cases.count >= 2 * Self.memoryLimit { try spillOldest() }
    }
  }

  /// Moves the ended tests beyond ``memoryLimit`` to disk, in order, oldest first. A test
  /// that ends after a later one went to disk (it ran long beside them) stays in memory,
  /// and ``forEachCase(naming:_:)`` merges it back into its place.
  private func spillOldest() throws {
    cases.sort { $0.order < $1.order }
    let stragglers = cases.prefix { $0.order < (spill?.lastOrder ?? 0) }.count
    let movable = cases[stragglers..<max(stragglers, cases.count - Self.memoryLimit)]
    guard !movable.isEmpty else { return }
    if spill == nil { spill = try CaseSpill(directory: spillDirectory, report: report) }
    for testCase in movable { try spill!.append(testCase) }
    cases.removeSubrange(movable.indices)
  }

  /// Calls `body` with each testcase to write, in order: the ended tests, and the last
  /// attempt of any test whose retry never came (the run was cut short), so no attempt is
  /// lost. Tests read back from disk are named with `name`.
  func forEachCase(naming name: (TestID) -> CappedName, _ body: (TestCase) throws -> Void) throws {
    var pending = retried
    var cases = self.cases
    while let last = pending.popLast() {
      var testCase = last
      testCase.earlierAttempts = pending.filter { Self.sameTest($0.test, last.test) }
      pending.removeAll { Self.sameTest($0.test, last.test) }
      cases.append(testCase)
    }
    // Tests that ran at once may have ended out of order; those on disk are in order.
    var inMemory = cases.sorted { $0.order < $1.order }[...]
    try spill?.forEach(naming: name) { spilled in
      while let next = inMemory.first, next.order < spilled.order {
        try body(next)
        inMemory = inMemory.dropFirst()
      }
      try body(spilled)
    }
    for testCase in inMemory { try body(testCase) }
  }

  /// Whether two attempts are of the same test run.
  private static func sameTest(_ one: TestID, _ other: TestID) -> Bool {
    var other = other
    other.attempt = one.attempt
    return one == other
  }

  private func endedIndex(_ test: TestID) -> Int? {
    cases.lastIndex { Self.sameTest($0.test, test) }
  }
}

/// One ended test, waiting for its suite to end.
struct TestCase {
  var test: TestID
  /// The test's place in its suite's order: when its first attempt started.
  var order: Int
  var name: CappedName
  var duration: Double
  var result: TestResult
  var output: CappedText?
  var lateIssues: [Issue] = []
  /// The failed attempts before this one (`--retries`), first attempt first.
  var earlierAttempts: [TestCase] = []
}

/// A suite or test name as its attribute value, and in full when the attribute cut it.
struct CappedName {
  var value: XMLText
  var full: XMLText?
}
