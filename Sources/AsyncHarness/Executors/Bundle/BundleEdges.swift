#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a test bundle's worker did around its tests' bodies, and the failures found there
/// (``OutsideFailure``): the XCTest class it is in (between `class func setUp()` and
/// `class func tearDown()`), the tests that ended in it (the suspects of what fails after
/// them), and the words of each failure outside every test.
struct BundleEdges {
  /// The XCTest classes the worker is in, innermost last (a test may run a suite of XCTest
  /// tests inside it), each with whether a test of it started in this worker.
  private var openClasses: [(name: String, testsStarted: Bool)] = []
  /// The XCTest class the worker is in, and whether a test of it started in this worker.
  var openClass: (name: String, testsStarted: Bool)? { openClasses.last }
  /// The tests that ended in this worker, latest last.
  private(set) var ended = TestsEnded()
  /// The failures found and not handed over yet.
  private(set) var found: [OutsideFailure] = []
  /// The failure found last.
  private var lastFound: OutsideFailure?
  /// The Swift Testing suites that recorded an issue, by ID.
  private var failedSuites: [String] = []
  /// The suite a failure of no suite is reported under when no test ended before it: the
  /// bundle's, under its library's name.
  let bundleSuite: SuiteRun

  init(bundleSuite: SuiteRun) {
    self.bundleSuite = bundleSuite
  }

  /// The tests that ended last, latest last, as `Suite/test`.
  var suspects: [String] { ended.suspects }

  /// The suite of the test that ended last, else the bundle's.
  var lastSuite: SuiteRun { ended.ids.last?.suiteRun ?? bundleSuite }

  mutating func classStarted(_ name: String) { openClasses.append((name, false)) }

  mutating func classEnded() { _ = openClasses.popLast() }

  /// A test of the worker started.
  mutating func started(_ planned: Runner.PlannedTest) {
    if let last = openClasses.indices.last, openClasses[last].name == planned.existing?.suite {
      openClasses[last].testsStarted = true
    }
  }

  /// A test of the worker ended.
  mutating func ended(_ planned: Runner.PlannedTest) {
    ended.append(planned.id)
  }


  /// Keeps a failure found, unless it repeats the one found before it word for word (Swift
  /// Testing posts an issue of no test twice).
  private mutating func add(_ failure: OutsideFailure) {
    guard failure != lastFound else { return }
    found.append(failure)
    lastFound = failure
  }

  /// Hands over the failures found so far.
  mutating func take() -> [OutsideFailure] {
    defer { found = [] }
    return found
  }

  /// A Swift Testing suite, `id`, recorded `issue` (a trait of it threw, or its own
  /// `Issue.record`): a failure of the suite, reported under `suite`, after its tests when one
  /// of them started.
  mutating func suiteRecorded(_ issue: Issue, id: String, suite: SuiteRun, afterTests: Bool) {
    add(OutsideFailure(place: .suite, suite: suite, issue: issue, afterTests: afterTests))
    failedSuites.append(id)
  }

  /// The failed suite that holds the test of suite `id` (itself or one it nests in), if any.
  func failedSuite(holding id: String) -> String? {
    failedSuites.first { id == $0 || id.hasPrefix($0 + "/") }
  }

  /// `issue` was recorded once no test was current (Swift Testing's «unknown»), or with the
  /// ID of `test`, which had ended: a failure of no test, whose suspects are the tests that
  /// ended last, then those `running` as it came (a detached task of one of them recorded it),
  /// latest last, at most ``OutsideFailure/suspectLimit``; the running test declared nearest
  /// above the issue in its file, whose body most likely holds the code that recorded it, is
  /// the last. It is reported under the suite of `test`, else of that test, else of the tests
  /// running when they share one, else of the test that ended last.
  mutating func recordedAfterItsTest(_ issue: Issue, test: Runner.PlannedTest? = nil, running: [Runner.PlannedTest] = []) {
    let author = issue.sourceLocation.flatMap { place in
      running.filter { $0.test.sourceLocation.fileID == place.fileID && $0.test.sourceLocation.line <= place.line }
        .max { $0.test.sourceLocation.line < $1.test.sourceLocation.line }
    }
    let others = running.map(\.id).filter { $0 != author?.id }
    let suspects = test.map { [$0.id.path] }
      ?? Array((suspects + others.map(\.path) + (author.map { [$0.id.path] } ?? [])).suffix(OutsideFailure.suspectLimit))
    let runningSuite = Set(running.map(\.id.suiteRun)).count == 1 ? running.first?.id.suiteRun : nil
    add(OutsideFailure(place: .noTest, suite: test?.id.suiteRun ?? author?.id.suiteRun ?? runningSuite ?? lastSuite, issue: issue,
                       suspects: suspects, afterTests: true))
  }

  /// The worker ended with `exit` while none of its tests ran and before it ran all of them
  /// (or with a status its library would not end with): in an XCTest class's
  /// `class func setUp()` (no test of it had started), in its `class func tearDown()`, or in
  /// the process, after the tests that ended last, `because` of what, when that is known. `suite`
  /// finds the suite of an XCTest class. Returns the class whose set-up failed, if that is
  /// where it happened: its tests that did not start never run.
  mutating func endedBetweenTests(_ exit: ProcessEnding, stoppedAt limit: Duration?, output: String, because cause: String? = nil,
                                  suite: (String) -> SuiteRun?) -> String? {
    let how = limit.map { "was stopped at the time limit of \($0.secondsDescription) seconds, still running, "
      + "\(exit == .signaled(SIGKILL) ? "with SIGKILL" : "with SIGTERM")" } ?? "ended with \(exit)"
    if let open = openClass, let classSuite = suite(open.name) {
      let place: OutsideFailure.Place = open.testsStarted ? .classTearDown : .classSetUp
      let when = open.testsStarted ? "after its tests ran, before the class ended" : "before any of its tests started"
      add(OutsideFailure(
        place: place, suite: classSuite,
        issue: Issue(kind: limit == nil ? .crashed : .timeLimitExceeded,
                     message: "The test bundle \(how) in \(place.description) of \(open.name), \(when)"
                       + OutsideFailure.lastOutput(output)),
        suspects: open.testsStarted ? suspects : [], afterTests: open.testsStarted))
      return open.testsStarted ? nil : open.name
    }
    add(OutsideFailure.endedBetweenTests("The test bundle", how, after: ended, because: cause, output: output, suite: lastSuite,
                                         kind: limit == nil ? .crashed : .timeLimitExceeded))
    return nil
  }

  /// The failure of a worker that ended with `exit` while `running` ran, after `suspects`
  /// ended in it: none of `running` is blamed until each ran again alone, and if none of them
  /// then crashes, this is the crash, left behind by earlier work.
  func crashUnderReview(_ exit: ProcessEnding, running: [Runner.PlannedTest], output: String) -> CrashUnderReview {
    let names = running.map(\.id.path).joined(separator: ", ")
    let said = output.isEmpty ? "" : "; its last output:\n\(output)"
    let them = running.count == 1 ? "it" : "them"
    let why = ended.ids.isEmpty
      ? "the crash did not happen again: it depends on what ran beside \(them), or on timing"
      : "the crash came from work that tests before \(them) left behind"
    let failure = OutsideFailure(
      place: .process, suite: running.first?.id.suiteRun ?? lastSuite,
      issue: Issue(kind: .crashed, message: "The test bundle ended with \(exit) while \(names) ran, and "
        + "\(running.count == 1 ? "it did not crash" : "none of them crashed") when run again alone, in a fresh process: \(why)\(said)"),
      suspects: suspects + (running.count > 1 ? running.map(\.id.path) : []), afterTests: true)
    return CrashUnderReview(failure: failure, awaiting: Set(running.map(\.id)))
  }
}

/// A worker's crash while tests ran after others had ended in it: each test it interrupted
/// runs again alone; one that crashes again is the crash's culprit, and when none does, the
/// crash is a failure outside every test (``failure``).
struct CrashUnderReview {
  /// The failure it is, if no test it interrupted crashes again.
  let failure: OutsideFailure
  /// The interrupted tests that have not ended their run alone yet.
  var awaiting: Set<TestID>
  /// Whether one of them crashed again alone: the crash was its own.
  var culpritFound = false

  /// `test`, one of those it interrupted, ended its run alone as `end`. Returns the failure
  /// once every one of them ended without crashing again.
  mutating func ended(_ test: TestID, as end: AttemptEnd) -> OutsideFailure? {
    guard awaiting.remove(test) != nil else { return nil }
    if case .processEnded = end { culpritFound = true }
    return awaiting.isEmpty && !culpritFound ? failure : nil
  }

  /// Whether nothing is left to decide.
  var isSettled: Bool { awaiting.isEmpty }
}
