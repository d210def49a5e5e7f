#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import AsyncHarnessShared
import Foundation

/// How a test bundle's worker is read: its library's records on the channel
/// (``BundleChannelReader``) start and end the attempts of the tests given to it, and its
/// output is cut at the numbered markers written before each record (``MarkedOutput``).
struct BundleWorkerDecoder: WorkerDecoder {
  private var reader: BundleChannelReader
  /// The tests given to this worker, by their test's ID.
  private let planned: [String: Runner.PlannedTest]
  /// Whether the worker runs one test at a time (XCTest, or tests run again alone).
  private let runsOneTestAtATime: Bool
  private var records = LineSplitter()
  private var recordsRead = 0
  private var output: MarkedOutput
  /// The test the runner waits for, and where its events go.
  var asked: (planned: Runner.PlannedTest, events: EventSink)?
  /// The tests that ended and were not handed to the executor yet.
  private var ended: [TestID: BundleLaneMachine.Ended] = [:]
  /// The IDs of the tests that started, and the tests that ended, in this worker.
  private var started: Set<String> = []
  private var finished: Set<TestID> = []
  /// Whether a test left a process running: the worker is replaced.
  private(set) var leftProcesses = false
  /// Whether the bundle's Swift concurrency ran under a schedule (its steps were said).
  private(set) var scheduled = false
  /// The steps the schedule took up to the end relayed next, as the library said just before it.
  private var scheduleOfNextEnd: ScheduleTrace?
  /// The last test that ended.
  private(set) var lastEnded: TestID?
  /// The processes running as the test whose end is relayed next ended, as the library said
  /// just before it, and those already reported.
  private var leftByNextEnd: [String]?
  private var knownChildren: Set<String> = []
  /// The tests that were running when the worker crashed, which run again alone.
  private(set) var runAgainAlone: Set<TestID> = []
  /// What the worker did around its tests, and the failures outside every test found there.
  private(set) var edges: BundleEdges
  /// The crash that made the tests of ``runAgainAlone`` run again, until they did.
  private(set) var crashUnderReview: CrashUnderReview?
  /// Once every test ended, how long the worker has to exit before it is stopped.
  var exitLimit: Duration?
  /// Whether a stop at ``exitLimit`` is no failure (a schedule's bundle, given a moment to exit).
  var stopAtExitLimitIsSilent = false
  /// The warnings those tests keep from this worker.
  private(set) var kept: [TestID: [Issue]] = [:]
  /// The issues recorded for tests that had not started, by their test's ID: Swift Testing
  /// records so what fails as a test is prepared (a trait's `prepare`, an `.enabled(if:)`
  /// condition that throws), and never runs the test.
  private var issuesBeforeStart: [String: [Issue]] = [:]
  /// The warnings of Swift Testing suites (by ID) recorded while no test of theirs ran: the next
  /// test of the suite to start is handed them.
  private var suiteWarnings: [String: [Issue]] = [:]
  /// Whether the worker's library told of a failure (an issue of a test, a suite or no test,
  /// or a record refused): only then is its exit status 1 its library's own.
  private(set) var toldOfAFailure = false

  init(reader: BundleChannelReader, marker: [UInt8], batch: [(planned: Runner.PlannedTest, test: ExistingTest)], oneAtATime: Bool,
       bundleSuite: SuiteRun) {
    self.reader = reader
    edges = BundleEdges(bundleSuite: bundleSuite)
    output = MarkedOutput(marker: marker)
    planned = Dictionary(batch.map { ($0.test.id, $0.planned) }) { first, _ in first }
    runsOneTestAtATime = oneAtATime
  }

  func holds(_ id: TestID) -> Bool {
    planned.values.contains { $0.id == id } && !finished.contains(id) && !runAgainAlone.contains(id)
  }

  /// Whether every test given to the worker ended or runs again elsewhere.
  var holdsNone: Bool { !planned.values.contains { holds($0.id) } }

  /// Hands over the failures outside every test found so far.
  mutating func takeOutsideFailures() -> [OutsideFailure] { edges.take() }

  mutating func takeEnded() -> [TestID: BundleLaneMachine.Ended] {
    defer { ended = [:] }
    return ended
  }

  mutating func output(_ bytes: ArraySlice<UInt8>, into supervision: inout WorkerSupervision) {
    supervision.printed(output.append(bytes, passed: recordsRead))
  }

  /// Relays the records read; true once the asked test ended.
  mutating func channel(_ bytes: ArraySlice<UInt8>, into supervision: inout WorkerSupervision) -> Bool {
    records.append(bytes)
    while let line = records.next() {
      for note in reader.read(line) { relay(note, into: &supervision) }
      recordsRead += 1
      // What the tests printed before the next record is the tests' that ran then.
      supervision.printed(output.release(passed: recordsRead))
      if let asked, ended[asked.planned.id] != nil { return true }
    }
    return false
  }

  mutating func ended(into supervision: inout WorkerSupervision) {
    supervision.printed(output.rest())
  }

  /// Relays what one record says.
  private mutating func relay(_ note: BundleNote, into supervision: inout WorkerSupervision) {
    switch note {
    case .issue(_, let issue), .issueOfNoTest(let issue): toldOfAFailure = toldOfAFailure || issue.isFailure
    case .refused: toldOfAFailure = true
    default: break
    }
    switch note {
    case .started(let id, let time):
      started.insert(id)
      guard let planned = planned[id], !runAgainAlone.contains(planned.id) else { return }
      edges.started(planned)
      // Events are streamed as they come only where no other test can start beside this one.
      let streams = planned.id == asked?.planned.id && runsOneTestAtATime
      let deadline = planned.timeLimit.map { ContinuousClock().now + $0 }
      supervision.start(planned, sink: streams ? asked?.events : nil, streams: streams, deadline: deadline, at: time ?? Date())
      let suite = planned.existing?.suite ?? ""
      let warnings = suiteWarnings.keys.filter { suite == $0 || suite.hasPrefix($0 + "/") }.sorted()
        .flatMap { suiteWarnings.removeValue(forKey: $0) ?? [] }
      for issue in (issuesBeforeStart.removeValue(forKey: id) ?? []) + warnings {
        supervision.record(Event(.issueRecorded(planned.id, issue)), of: planned.id)
      }
    case .issue(let id, var issue):
      if let test = planned[id] {
        if issue.sourceLocation == nil { issue.sourceLocation = test.test.sourceLocation }
        if supervision.runs(test.id) {
          supervision.record(Event(.issueRecorded(test.id, issue)), of: test.id)
        } else if finished.contains(test.id) {
          // A warning once its test ended fails nothing, as under `swift test`.
          if issue.isFailure { edges.recordedAfterItsTest(issue, test: test) }
        } else if !started.contains(id) {
          issuesBeforeStart[id, default: []].append(issue)
        }
      } else if reader.library == .swiftTesting {
        // A suite's issue (a trait of it threw): under its suite, after its tests if one started.
        // (An XCTest issue of a test not given to the worker is one of a test run inside another,
        // which that test judges.)
        let tests = planned.values.filter { $0.existing?.suite == id || $0.existing?.suite.hasPrefix(id + "/") == true }
        let suite = tests.first?.id.suiteRun ?? SuiteRun(suite: id, host: reader.library.name)
        if issue.isFailure {
          edges.suiteRecorded(issue, id: id, suite: suite, afterTests: tests.contains { started.contains($0.existing?.id ?? "") })
        } else if let running = tests.first(where: { supervision.runs($0.id) }) {
          // A suite's warning fails nothing, as under `swift test`: it is a warning of a test of the
          // suite, one running, else the next to start.
          supervision.record(Event(.issueRecorded(running.id, issue)), of: running.id)
        } else {
          suiteWarnings[id, default: []].append(issue)
        }
      }
    case .issueOfNoTest(let issue):
      // A warning of no test fails nothing, as under `swift test`.
      if issue.isFailure { edges.recordedAfterItsTest(issue, running: supervision.running.map(\.planned)) }
    case .classStarted(let name):
      edges.classStarted(name)
    case .classEnded:
      edges.classEnded()
    case .ended(let id, let skipReason, let seconds):
      defer { leftByNextEnd = nil }
      guard let planned = planned[id], let attempt = supervision.running.first(where: { $0.planned.id == planned.id }) else { return }
      // Children are the test's only when no other test ran beside it (they may be another's,
      // still running as it should).
      let left = supervision.running.count == 1 ? (leftByNextEnd ?? []).filter { !knownChildren.contains($0) } : []
      if !left.isEmpty {
        leftProcesses = true
        knownChildren.formUnion(left)
        supervision.record(Event(.issueRecorded(planned.id, Issue(kind: .leaked, message:
          "Leaked work: the test returned while child processes it started are still running ("
            + left.joined(separator: ", ") + "); the test bundle is stopped with them once this test's turn ends, and "
            + "the tests after it run in a fresh one"))), of: planned.id)
      }
      let seconds = seconds ?? attempt.start.duration(to: .now).timeInterval
      if planned.schedule != nil && scheduleOfNextEnd == nil && skipReason == nil {
        // Never a silent plain run: the bundle could not install the schedule's executors.
        supervision.record(Event(.issueRecorded(planned.id, Issue(kind: .apiMisused, message: "The test ran without its "
          + "schedule: the library preloaded into its bundle could not install Swift concurrency executors (they need "
          + "Swift 6.3 or later on Linux, in the toolchain that builds the package), so its order was not explored",
          sourceLocation: planned.test.sourceLocation))), of: planned.id)
      }
      end(planned, as: skipReason.map { .skipped(reason: $0, duration: seconds) }
        ?? .returned(duration: seconds, trace: scheduleOfNextEnd), into: &supervision)
    case .leftProcesses(let processes):
      leftByNextEnd = processes
    case .schedule(let trace, let jobs, let outside, let escapedAt, let hookedAt):
      scheduled = true
      scheduleOfNextEnd = trace
      guard let planned = supervision.running.first?.planned else { return }
      var warnings: [String] = []
      if let hookedAt {
        warnings.append(Self.hookedMessage(after: hookedAt))
      } else if let escapedAt {
        warnings.append(Scheduler.blockedMessage("The Swift concurrency job of step \(escapedAt)", for: BundleChannelLibrary.longStep,
                                                 why: "while other work waited to run beside it (it blocks its thread on that "
                                                   + "work: a semaphore, a lock, a synchronous wait; or it works on without it, "
                                                   + "as a loop on the clock does)", handedBack: nil))
      }
      if outside > 0 { warnings.append(Self.outsideMessage(outside: outside, of: jobs, before: trace.firstOutsideStep)) }
      for warning in warnings {
        supervision.record(Event(.issueRecorded(planned.id, Issue(kind: .warning, message: warning,
                                                               sourceLocation: planned.test.sourceLocation))), of: planned.id)
      }
    case .step(let number, let ran, let virtualTime):
      guard let planned = supervision.running.first?.planned else { return }
      supervision.record(Event(.scheduleStep(planned.id, step: number, ran: ran, virtualTime: virtualTime.timeInterval)),
                         of: planned.id)
    case .refused(let message):
      // Never dropped in silence: a record lost may be a failure lost. The test's, when one
      // runs alone; else one outside every test.
      let issue = Issue(kind: .apiMisused, message: message)
      if supervision.running.count == 1, let attempt = supervision.running.first {
        supervision.record(Event(.issueRecorded(attempt.planned.id, issue)), of: attempt.planned.id)
      } else {
        edges.recordedAfterItsTest(issue)
      }
    case .stuck(let virtualTime):
      // The test waits for what nothing will do; its library would wait for ever.
      guard supervision.running.count == 1, let attempt = supervision.running.first else { return }
      scheduled = true
      supervision.record(Event(.issueRecorded(attempt.planned.id, Issue(
        kind: .deadlock, message: Self.stuckMessage(at: virtualTime),
        sourceLocation: attempt.planned.test.sourceLocation))), of: attempt.planned.id)
      end(attempt.planned, as: .returned(duration: attempt.start.duration(to: .now).timeInterval), into: &supervision)
    }
  }

  /// Ends `test`'s attempt as `end`: kept for the runner, with the events it held.
  private mutating func end(_ planned: Runner.PlannedTest, as end: AttemptEnd, into supervision: inout WorkerSupervision) {
    if case .ended(let attempt, _, _) = supervision.end(planned.id, as: end) {
      ended[planned.id] = BundleLaneMachine.Ended(events: attempt.held, end: end)
    }
    finished.insert(planned.id)
    lastEnded = planned.id
    edges.ended(planned)
    scheduleOfNextEnd = nil
    if supervision.running.isEmpty {
      supervision.idleDeadline = asked?.planned.timeLimit.map { ContinuousClock().now + $0 }
    }
  }

  /// What a test says when work from outside its schedule came while the schedule's own ran,
  /// or while the schedule waited for it.
  static func outsideMessage(outside: Int, of jobs: Int, before step: Int?) -> String {
    "The test's order was partly outside the schedule's control: \(outside) of the \(jobs) Swift concurrency jobs of "
      + "its bundle came from threads the schedule does not run (Dispatch, threads of its own, the testing library's) "
      + "while the schedule's own work ran or waited for them\(step.map { ", first before step \($0)" } ?? ""); the "
      + "schedule neither orders nor replays that work"
  }

  /// What a test says when it installed its own executor hook after step `step`.
  static func hookedMessage(after step: Int) -> String {
    "The test installed its own executor hook (swift_task_enqueueGlobal_hook or another of the runtime's, as "
      + "withMainSerialExecutor does) after step \(step) of its schedule: from there its Swift concurrency ran on Swift's "
      + "own executors in the order the hook gives, unexplored"
  }

  /// What a test says when the schedule found it stuck: the scheduled strategy's words, and the
  /// rule for work outside the schedule (the preloaded library's `OutsideWork`).
  static func stuckMessage(at virtualTime: Duration) -> String {
    ScheduleScope.stuckMessage(at: virtualTime, quietPeriod: BundleChannelLibrary.quietPeriod)
      + "; nothing outside the schedule can resume it either: every other thread of the test bundle waits for another "
      + "thread (none runs, sleeps, reads or writes, waits with a timeout or for a child process, and no timer is armed "
      + "and no socket open while one waits for events)"
  }

  /// Ends what the worker's end ends.
  /// - Attempts running: as the supervisor decides (``WorkerSupervision/exited(_:outputHeldBy:)``):
  ///   those it runs again, alone in a fresh worker, keeping their warnings (output held past
  ///   the exit, `outputHeldBy`), are under review (``crashUnderReview``); when the worker
  ///   ended by itself after other tests had ended in it, no running test is blamed yet.
  /// - None running, the worker not stopped: a library that ran every test it knows ended
  ///   so (the tests it never started are none of its, but for those it recorded issues for
  ///   instead, which end with them), with status 1 only when it told of a failure; otherwise the worker ended outside every test's body
  ///   (``BundleEdges/endedBetweenTests(_:stoppedAt:output:because:suite:)``): the
  ///   tests it never started run again in a new worker, but for those of a class whose
  ///   `class func setUp()` failed, which end skipped. So does a worker stopped at the time
  ///   limit while no test ran (a hang between tests, or at its exit).
  /// - None running, the worker stopped only for a test whose end came with the signal: the
  ///   test asked for runs again in a fresh worker. Interrupted, or before any test ended:
  ///   the test asked for ends so.
  mutating func exited(_ exit: ProcessEnding, into supervision: inout WorkerSupervision, outputHeldBy worker: String?) {
    if !supervision.running.isEmpty {
      let running = supervision.running.map(\.planned)
      let output = supervision.tail
      var underReview: [Runner.PlannedTest] = []
      for outcome in supervision.exited(exit, outputHeldBy: worker) {
        switch outcome {
        case .ended(let attempt, let end, _):
          ended[attempt.planned.id] = BundleLaneMachine.Ended(events: attempt.held, end: end)
          finished.insert(attempt.planned.id)
        case .runAgain(let attempt, _, _):
          underReview.append(attempt.planned)
          if !attempt.kept.isEmpty { kept[attempt.planned.id, default: []] += attempt.kept }
        }
      }
      runAgainAlone.formUnion(underReview.map(\.id))
      if !underReview.isEmpty {
        crashUnderReview = edges.crashUnderReview(exit, running: running.filter { test in underReview.contains { $0.id == test.id } },
                                                  output: output)
      }
      return
    }
    let invocation = BundleInvocation(library: reader.library)
    if supervision.stopping == nil && invocation.isCompleteRun(exit, toldOfAFailure: toldOfAFailure) {
      for (id, planned) in planned where !started.contains(id) {
        if let issues = issuesBeforeStart[id] {
          // Its library recorded them instead of running it: they are its end, in its words.
          ended[planned.id] = BundleLaneMachine.Ended(events: issues.map { Event(.issueRecorded(planned.id, $0)) },
                                                 end: .returned(duration: 0))
        } else if let suite = planned.existing.flatMap({ edges.failedSuite(holding: $0.suite) }) {
          ended[planned.id] = BundleLaneMachine.Ended(end: .skipped(
            reason: "Not run: its suite \(suite) failed before it; see the suite's initializationError", duration: 0))
        } else {
          ended[planned.id] = BundleLaneMachine.Ended(end: .couldNotStart(
            reason: "The test bundle ran no test \(planned.id.path): it has no such \(invocation.libraryName) test"))
        }
      }
      return
    }
    // Stopped only for a test whose end came with the signal: the next test runs in a fresh worker.
    if supervision.stopping != nil && supervision.stoppedForEndedAttempts { return }
    // Given a moment to exit, silently, and stopped then: nothing more is known of it.
    if stopAtExitLimitIsSilent && supervision.stopping != nil && supervision.stopping?.interrupt == nil { return }
    let interrupted = supervision.stopping?.interrupt != nil
    if !interrupted && (!finished.isEmpty || edges.openClass != nil || asked == nil) {
      let limit = supervision.stopping == nil ? nil : asked?.planned.timeLimit ?? exitLimit
      let planned = self.planned
      let cause = limit == nil && exit == .exited(1) ? invocation.statusOneUnexplained : nil
      let failedSetUp = edges.endedBetweenTests(exit, stoppedAt: limit, output: supervision.tail, because: cause) { name in
        planned.values.first { $0.existing?.suite == name }?.id.suiteRun
      }
      guard let failedSetUp else { return }
      for (id, planned) in planned where planned.existing?.suite == failedSetUp && !started.contains(id) {
        ended[planned.id] = BundleLaneMachine.Ended(end: .skipped(
          reason: "Not run: class func setUp() of \(failedSetUp) failed (the test bundle ended with \(exit)); see its "
            + "initializationError", duration: 0))
        finished.insert(planned.id)
      }
    } else if let asked = asked?.planned {
      ended[asked.id] = BundleLaneMachine.Ended(end: supervision.ending(exit, timeLimit: asked.timeLimit, output: supervision.tail))
    }
  }
}
