@_spi(ForToolsIntegrationOnly) import AsyncHarness
import Foundation

/// The report being built: the open suites' tests, and the document finished suites are
/// streamed into. This file holds its state and how events change it; writing a finished
/// suite is in JUnitRendering.swift.
final class JUnitReport {
  let profile: JUnitProfile
  let outputLimit: Int
  /// The suites as declared, by name, for the github profile's `file` and `line`.
  let declaredSuites: [String: Catalog.Group]
  /// Where each test of the suite being written is declared, by name: made for one suite at
  /// a time, so that a million tests never hold a million locations at once.
  var declarations: (suite: String, locations: [String: SourceLocation])?
  private var document: JUnitDocument?
  private(set) var run: RunInfo?
  /// The suites started and not written, in the order they started, with the duration of
  /// those that ended: with `--workers N`, several run at once, their events interleave, and
  /// one that ends before a suite started earlier waits for it.
  private var open: [(run: SuiteRun, suite: OpenSuite, duration: Double?)] = []
  private var suiteNames = ReportNameSuffixer()
  /// How many failures outside every test each suite had so far.
  private var outsideCounts: [SuiteRun: Int] = [:]
  /// The time of the suites written so far: the report's time when the run's is unknown.
  var suitesTime = 0.0
  private var runTime: Double?

  init(destination: String, profile: JUnitProfile, outputLimit: Int, declaredSuites: [String: Catalog.Group]) throws {
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
      open.append((run, OpenSuite(name: name, waiter: run.host, timestamp: event.timestamp, spillDirectory: document.directory,
                                  report: document.destination), nil))
    case .testStarted(let test):
      suite(test.suiteRun)?.start(event)
    case .outputCaptured, .outputShared:
      guard let (test, pieces) = event.kind.printedOutput, let suite = suite(test.suiteRun) else { return }
      for piece in pieces { suite.capture(piece, of: test, limit: outputLimit) }
    case .issueRecorded(let test, _):
      suite(test.suiteRun)?.record(event)
    case .testEnded(let test, let end):
      guard let suite = suite(test.suiteRun) else { throw JUnitError.unexpectedEvent("test \(test) ended outside a suite") }
      try suite.end(test, name: testName(test), end)
    case .suiteEnded(let run, _, let duration):
      guard let index = open.firstIndex(where: { $0.run == run && $0.duration == nil }) else {
        throw JUnitError.unexpectedEvent("suite \(run.suite) ended but none is open")
      }
      open[index].duration = duration
      try writeEndedSuites(to: document)
    case .runEnded(_, let duration):
      runTime = duration
    case .outsideFailure(let failure):
      try record(failure, at: event.timestamp, in: document)
    case .testSlow, .waitEnded, .scheduleStep, .workerReplaced:
      break
    }
  }

  /// Gives a failure outside every test a testcase of its own (`initializationError` or
  /// `executionError`, `#2` and on for a second in one suite), errored, under its suite: in
  /// the suite while it is open, else in a `<testsuite>` of its own, named as the suite.
  private func record(_ failure: OutsideFailure, at timestamp: Date, in document: JUnitDocument) throws {
    outsideCounts[failure.suite, default: 0] += 1
    let count = outsideCounts[failure.suite]!
    let raw = failure.testcaseName + (count > 1 ? " #\(count)" : "")
    var message = "In \(failure.place.description): \(failure.issue.message)"
    if let suspects = failure.suspectsSentence { message += "\n\(suspects)" }
    let issue = Issue(kind: failure.issue.kind, message: message, sourceLocation: failure.issue.sourceLocation)
    let test = TestID(suite: failure.suite.suite, name: raw, host: failure.suite.host)
    let testCase = TestCase(test: test, order: 0, name: name(raw, placeholder: "executionError", suffix: nil), duration: 0,
                            result: TestResult(verdict: .errored, issues: [issue]))
    if let suite = suite(failure.suite) { return suite.add(testCase) }
    // Its testcase's classname is the suite's, though the `<testsuite>` name must differ.
    let classname = suiteName(failure.suite)
    var name = classname
    name.value = suiteNames.claim(name.value)
    let suite = OpenSuite(name: name, classname: classname, waiter: failure.suite.host, timestamp: timestamp,
                          spillDirectory: document.directory, report: document.destination)
    suite.add(testCase)
    open.append((failure.suite, suite, 0))
    try writeEndedSuites(to: document)
  }

  /// Writes the suites that ended, in the order they started, each once every suite before it
  /// is written.
  private func writeEndedSuites(to document: JUnitDocument) throws {
    while let first = open.first, let duration = first.duration {
      open.removeFirst()
      try write(first.suite, duration: duration, to: document)
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
    let waiter = run.host.isEmpty
      ? nil : XMLText(" [") + XMLText(attribute: run.host, limit: Self.waiterLimit) + XMLText("]")
    return name(run.suite, placeholder: "(unnamed suite)", suffix: waiter)
  }

  /// The test's name as its testcase's `name`, with ` #N` for repetition N > 1.
  func testName(_ test: TestID) -> CappedName {
    name(test.name, placeholder: "(unnamed test)", suffix: test.repetition > 1 ? XMLText(" #\(test.repetition)") : nil)
  }
}

/// The suite × waiter being run: its ended tests wait here until the suite ends, so that
/// the `<testsuite>` counts are known before it is written and late issues can still join.
///
/// Several of its tests may run at once (a suite whose tests run in parallel): output and
/// issues go to the running attempt they name, until its test's `testEnded` hands over every
/// attempt; output or issues for an attempt whose test already ended are matched by
/// searching the ended tests from the newest, where a late signal's test almost always is.
/// Testcases are written in the order their tests first started, which the runner keeps in
/// plan order.
///
/// Memory stays flat however many tests the suite has: beyond ``memoryLimit`` ended tests,
/// the oldest go to a ``CaseSpill`` on disk, in order.
/// Output or an issue arriving for a test after that (more than ``memoryLimit`` tests after
/// it ended) is not in the report; the JSON Lines stream has it.
final class OpenSuite {
  /// How many ended tests a suite keeps in memory, at most twice over.
  static let memoryLimit = 4096

  let name: CappedName
  /// The `classname` of its testcases: its name, unless it holds only the failures outside
  /// every test of a suite already written.
  let classname: CappedName
  let waiter: String
  let timestamp: Date
  /// The ended tests in memory, in the order they ended.
  private var cases: [TestCase] = []
  /// The ended tests that left memory, all before every test in `cases`.
  private var spill: CaseSpill?
  private let spillDirectory: String
  private let report: String
  /// The attempts whose test has not ended: each test's place in the suite's order, and each
  /// attempt's output.
  private var running: [TestID: (order: Int, output: CappedText?)] = [:]
  private var nextOrder = 0

  init(name: CappedName, classname: CappedName? = nil, waiter: String, timestamp: Date, spillDirectory: String,
       report: String) {
    self.name = name
    self.classname = classname ?? name
    self.waiter = waiter
    self.timestamp = timestamp
    self.spillDirectory = spillDirectory
    self.report = report
  }

  /// Starts an attempt (its `testStarted`).
  func start(_ event: Event) {
    guard case .testStarted(let test) = event.kind else { return }
    running[test] = (order(of: test), nil)
  }

  /// The place of a test in the suite's order: that of the attempt before it, or the next.
  private func order(of test: TestID) -> Int {
    var previous = test
    previous.attempt -= 1
    if let earlier = running[previous] { return earlier.order }
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

  /// Adds a testcase that is no test's (a failure outside every test), after those so far.
  func add(_ testCase: TestCase) {
    var testCase = testCase
    testCase.order = nextOrder
    nextOrder += 1
    cases.append(testCase)
  }

  /// Keeps an issue (its `issueRecorded`) that came after its test ended, as a late one: the
  /// issues of a running attempt come with its test's end (``TestAttempt/issues``).
  func record(_ event: Event) {
    guard case .issueRecorded(let test, let issue) = event.kind, issue.kind == .lateSignal || running[test] == nil,
          let index = endedIndex(test) else { return }
    cases[index].lateIssues.append(issue)
  }

  /// Ends a test: its last attempt becomes the testcase and carries the attempts before it,
  /// each with its issues and output.
  func end(_ test: TestID, name: CappedName, _ end: TestEnd) throws {
    var attempts: [TestCase] = []
    for attempt in end.attempts {
      var id = test
      id.attempt = attempt.number
      let run = running.removeValue(forKey: id)
      let last = attempt.number == test.attempt
      let result = TestResult(verdict: last ? end.verdict : attempt.outcome, reason: end.reason, issues: attempt.issues,
                              scheduleTrace: attempt.scheduleTrace)
      attempts.append(TestCase(test: id, order: run?.order ?? attempts.first?.order ?? order(of: id), name: name,
                               duration: attempt.duration, result: result, output: run?.output))
    }
    var last = attempts.removeLast()
    last.retriedAttempts = attempts
    cases.append(last)
    if cases.count >= 2 * Self.memoryLimit { try spillOldest() }
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

  /// Calls `body` with each ended test's testcase, in order. Tests read back from disk are
  /// named with `name`.
  func forEachCase(naming name: (TestID) -> CappedName, _ body: (TestCase) throws -> Void) throws {
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

  /// Where the ended test one of whose attempts is `test` is.
  private func endedIndex(_ test: TestID) -> Int? {
    cases.lastIndex { $0.test == test || $0.retriedAttempts.contains { $0.test == test } }
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
  var retriedAttempts: [TestCase] = []
}

/// A suite or test name as its attribute value, and in full when the attribute cut it.
struct CappedName {
  var value: XMLText
  var full: XMLText?
}
