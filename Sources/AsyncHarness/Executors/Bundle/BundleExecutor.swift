import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs the tests of another package's test bundle (`harness test`): each planned test is
/// one the bundle listed (``Catalog/init(existing:)``: an XCTest method or a Swift Testing
/// function), which only the bundle runs.
///
/// Not a process per test: one worker, the bundle started for one testing library (see
/// ``BundleChannelReader`` for each library's invocation), runs the test asked for and the
/// tests of the same library the runner prepared after it (``prepare(_:)``, and in a run of
/// one lane those of the entries after it, ``prepare(following:of:)``), in one invocation
/// whose list of tests stays under ``BundleChannelReader/listLimit`` bytes. The worker has
/// the library ``BundleChannelLibrary`` preloaded, and its testing library's own records
/// (each test's start, issues and end) come on a private channel that this process reads
/// beside the worker's output (``BundleChannelReader``): each test's issues (failures at
/// file:line, thrown errors, Swift Testing's known issues as warnings) and output are
/// streamed as events, and nothing a test prints is read as its library's words. A skip
/// (`XCTSkip`, a disabled Swift Testing test) ends the attempt as
/// ``AttemptEnd/skipped(reason:duration:)``. A library may run the tests in its own order: a
/// test that ends before the runner asks for it is kept, with its events, until it does.
///
/// A crash, `exit`, or a test still running at its time limit (counted from its own start;
/// its process group is stopped: SIGTERM, then SIGKILL after `gracePeriod`) ends that test
/// only, with the tail of its output; the tests after it run in a new worker. A worker ends
/// at its exit, not when its output closes: a process a test left running that still holds
/// the output is stopped with the worker's group, never waited for. A test that leaves a
/// child process running gets a `leaked` warning, and its worker is replaced once the test
/// the runner asked for ends.
///
/// A step under a schedule (`--explore N`, `--schedule TOKEN`) runs alone in a worker of its
/// own, started with the schedule (``BundleChannelLibrary/scheduleVariable``), which runs the
/// bundle's Swift concurrency in the schedule's order: the steps it took end the attempt
/// (``AttemptEnd/returned(duration:trace:)``), work from outside it is a warning, and a test
/// stuck with nothing left to run ends there with a `deadlock` issue.
final class BundleExecutor: TestExecutor {
  /// The test bundle: on Linux, an executable.
  let bundle: String
  /// The directory its workers start in: the package's, as with `swift test`, so that tests
  /// that read files by relative paths find them.
  let directory: String
  /// The library preloaded into each worker (``BundleChannelLibrary``).
  let channelLibrary: String
  /// How long a stopped worker has between SIGTERM and SIGKILL.
  let gracePeriod: Duration
  /// When requested, the running test's worker is stopped and the test ends as interrupted.
  let stop: StopRequest?
  private let state = Mutex(BundleRuns())

  /// Creates an executor that runs tests of `bundle`.
  init(bundle: String, directory: String, channelLibrary: String,
       gracePeriod: Duration = .seconds(1), stop: StopRequest?) {
    self.bundle = bundle
    self.directory = directory
    self.channelLibrary = channelLibrary
    self.gracePeriod = gracePeriod
    self.stop = stop
  }

  /// True: a test past its time limit has its worker's process group stopped.
  var stopsHungTests: Bool { true }

  /// True: each test runs in a worker process of the bundle.
  var isolatesTests: Bool { true }

  /// Remembers the tests the runner hands over next: the worker started for a test runs
  /// them after it in the same process.
  func prepare(_ planned: Runner.Plan.PlannedTests) {
    state.withLock { state in
      state.prepared = planned
      state.following = nil
    }
  }

  /// Remembers the entries the runner hands over after the prepared tests: a new worker runs
  /// their tests too.
  func prepare(following entries: ArraySlice<Runner.Plan.Entry>, of plan: Runner.Plan) {
    state.withLock { $0.following = (entries, plan) }
  }

  /// Runs `test` in the worker that was given it, or in a new worker given it and the
  /// prepared tests after it that have not ended yet.
  func run(_ planned: Runner.PlannedTest, events: EventSink) -> AttemptEnd {
    state.withLock { state in
      // The warnings it kept from a worker it ran in before running again alone are its own.
      defer { for issue in state.kept.removeValue(forKey: planned.id) ?? [] { events(.issueRecorded(planned.id, issue)) } }
      while true {
        if let ended = state.ended.removeValue(forKey: planned.id) {
          state.alone.remove(planned.id)
          for event in ended.events { events.send(event) }
          state.review(planned.id, endedAs: ended.end, events: events)
          return ended.end
        }
        if state.worker?.holds(planned.id) != true {
          guard planned.existing != nil else {
            return .couldNotStart(reason: "\(planned.id.path) is not a test of the test bundle \(bundle)")
          }
          // A worker running other tests (the runner asked for a retry first) is stopped:
          // the tests it had not ended run again in a new worker.
          state.worker?.kill()
          do {
            let batch = state.batch(from: planned)
            state.worker = try BundleWorker(bundle: bundle, directory: directory, channelLibrary: channelLibrary,
                                            batch: batch, oneAtATime: state.alone.contains(planned.id),
                                            gracePeriod: gracePeriod, stop: stop)
          } catch {
            state.worker = nil
            return .couldNotStart(reason: "\(error)")
          }
        }
        if !state.worker!.run(until: planned, events: events, ended: &state.ended) {
          state.retire(events: events)
        } else if state.worker!.mustBeReplaced {
          // Replaced: what the test left running goes with the worker's process group, and
          // a worker whose schedule ran (one schedule, one test) ends with it.
          state.worker?.kill()
          state.worker = nil
        } else if state.worker!.holdsNone {
          // Its end is heard: a crash after its last test fails outside every test.
          state.worker!.runToItsEnd(ended: &state.ended)
          state.retire(events: events)
        }
      }
    }
  }

  /// Stops the worker left, if any.
  func finish() {
    state.withLock { state in
      state.worker?.kill()
      state.worker = nil
      state.prepared = nil
      state.following = nil
      state.alone = []
    }
  }
}

/// The executor's worker, the tests prepared, and the tests that ended before the runner
/// asked for them.
struct BundleRuns {
  fileprivate var worker: BundleWorker?
  var prepared: Runner.Plan.PlannedTests?
  /// The entries the runner hands over after the prepared tests, when it knows them.
  var following: (entries: ArraySlice<Runner.Plan.Entry>, plan: Runner.Plan)?
  fileprivate var ended: [TestID: BundleWorker.Ended] = [:]
  /// The tests that were running when their worker crashed (side by side, or after other
  /// tests ended in it): each runs again alone, in a worker of its own.
  var alone: Set<TestID> = []
  /// The crashes whose interrupted tests run again alone, to tell whose crash it was.
  var underReview: [CrashUnderReview] = []

  /// Ends the worker that exited: its failures outside every test are sent, the tests it
  /// interrupted run again alone, and its crash is reviewed as they end.
  mutating func retire(events: EventSink) {
    guard var worker else { return }
    for failure in worker.takeOutsideFailures() { events(.outsideFailure(failure)) }
    alone.formUnion(worker.runAgainAlone)
    kept.merge(worker.kept, uniquingKeysWith: +)
    if let crash = worker.crashUnderReview { underReview.append(crash) }
    worker.kill()
    self.worker = nil
  }

  /// `test` ended as `end`: a crash it ran again alone for is a failure outside every test
  /// once none of the tests it interrupted crashed again.
  mutating func review(_ test: TestID, endedAs end: AttemptEnd, events: EventSink) {
    for index in underReview.indices {
      if let failure = underReview[index].ended(test, as: end) { events(.outsideFailure(failure)) }
    }
    underReview.removeAll { $0.isSettled }
  }

  /// The warnings of tests that run again alone, kept from the worker they ran in first
  /// (``WorkerSupervision/Attempt/kept``): each test's, given to it when it ends.
  var kept: [TestID: [Issue]] = [:]

  /// `test`, then the prepared tests after it and the tests of the following entries, of the
  /// same library (the same waiter), that run and have not ended, each with the test it
  /// stands for: what a new worker runs, as many as its list of tests holds. The tests that
  /// must run alone go in a batch of their own (run one at a time), the others in another.
  func batch(from planned: Runner.PlannedTest) -> [(planned: Runner.PlannedTest, test: ExistingTest)] {
    guard let test = planned.existing else { return [] }
    var batch = [(planned: planned, test: test)]
    // A schedule's executors are installed as the bundle starts: its test runs alone in it.
    guard planned.schedule == nil else { return batch }
    // A test run again alone after a crash runs in a worker of its own.
    guard !alone.contains(planned.id) else { return batch }
    var listBytes = test.id.utf8.count
    var first = planned.id
    first.attempt = 1
    guard let prepared, let index = prepared.firstIndex(where: { $0.id == first }) else { return batch }
    /// Adds the candidates that run; false once the list is full.
    func add(_ candidates: some Sequence<Runner.PlannedTest>) -> Bool {
      for candidate in candidates
      where candidate.test.skipReason == nil && ended[candidate.id] == nil && !alone.contains(candidate.id)
        && candidate.host.name == planned.host.name && candidate.schedule == nil {
        guard let test = candidate.existing else { continue }
        listBytes += 1 + test.id.utf8.count
        guard listBytes <= BundleChannelReader.listLimit else { return false }
        batch.append((candidate, test))
      }
      return true
    }
    guard add(prepared[(index + 1)...]), let following else { return batch }
    for entry in following.entries where entry.host.name == planned.host.name {
      guard add(following.plan.plannedTests(of: entry, repetition: 1)) else { break }
    }
    return batch
  }
}

/// One invocation of the test bundle running a list of tests of one library, watched by the
/// lane supervisor (``WorkerWatch``, ``WorkerSupervision``): its channel read a record at a
/// time, its output cut into the tests that printed it (``BundleTranscript``). XCTest runs
/// one test at a time; Swift Testing runs its tests side by side as it does under `swift test`.
private struct BundleWorker {
  /// A test that ended: the events it recorded while the runner waited for another, and how
  /// it ended.
  struct Ended {
    var events: [Event] = []
    var end: AttemptEnd
  }

  private var watch: WorkerWatch
  private var supervision: WorkerSupervision
  private var transcript: BundleTranscript

  /// Starts the bundle in `directory` for `tests`, each with the test it stands for, all of
  /// one library, with `channelLibrary` preloaded.
  init(bundle: String, directory: String, channelLibrary: String, batch: [(planned: Runner.PlannedTest, test: ExistingTest)],
       oneAtATime: Bool, gracePeriod: Duration, stop: StopRequest?) throws {
    let library = batch.first?.test.library ?? .xctest
    let reader = BundleChannelReader(library)
    let marker = "AsyncHarness \(String(UInt64.random(in: 0...UInt64.max), radix: 16))"
    let channel = try ChildProcess.makePipe()
    defer { close(channel.write) }
    let process: ChildProcess
    do {
      process = try ChildProcess(
        executable: bundle, arguments: reader.arguments(running: batch.map(\.test), oneAtATime: oneAtATime),
        environment: BundleChannelLibrary.environment(library: channelLibrary, testing: library, marker: marker,
                                                      schedule: batch.first?.planned.schedule,
                                                      saysSteps: batch.first?.planned.reportsWaits == true)
          .merging(reader.environment) { $1 },
        handing: [(channel.write, BundleChannelLibrary.channelDescriptor)], directory: directory)
    } catch {
      close(channel.read)
      throw error
    }
    _ = fcntl(channel.read, F_SETFL, fcntl(channel.read, F_GETFL) | O_NONBLOCK)
    watch = WorkerWatch(process: process, channel: channel.read, stop: stop)
    supervision = WorkerSupervision(gracePeriod: gracePeriod)
    supervision.idleDeadline = batch.first?.planned.timeLimit.map { ContinuousClock().now + $0 }
    let file = bundle.split(separator: "/").last ?? ""
    let bundleName = String(file.hasSuffix(".xctest") ? file.dropLast(".xctest".count) : file)
    transcript = BundleTranscript(reader: reader, marker: Array("\u{1}\(marker) ".utf8), batch: batch,
                                  oneAtATime: oneAtATime || reader.runsOneTestAtATime,
                                  bundleSuite: SuiteRun(suite: bundleName, waiter: library.name))
  }

  /// How long a worker whose tests all ended may take to exit when the run has no time
  /// limit: past it, the worker is stopped and its hang is a failure outside every test
  /// (`swift test` would wait for ever).
  static let exitLimit: Duration = .seconds(30)

  /// Whether every test given to the worker ended or runs again elsewhere.
  var holdsNone: Bool { transcript.holdsNone }

  /// The crash that made the tests it interrupted run again alone, once the worker ended.
  var crashUnderReview: CrashUnderReview? { transcript.crashUnderReview }

  /// Hands over the failures outside every test found so far.
  mutating func takeOutsideFailures() -> [OutsideFailure] { transcript.takeOutsideFailures() }

  /// Reads the worker, which has no test left to run, until it exits, and judges how: a crash
  /// or a hang after its last test is a failure outside every test (``takeOutsideFailures()``).
  mutating func runToItsEnd(ended: inout [TestID: Ended]) {
    let limit = transcript.asked?.planned.timeLimit ?? Self.exitLimit
    transcript.asked = nil
    transcript.exitLimit = limit
    supervision.idleDeadline = ContinuousClock().now + limit
    defer { ended.merge(transcript.takeEnded()) { $1 } }
    guard let exit = watch.watch(&transcript, &supervision) else { return }
    judge(exit, ended: &ended, asked: nil)
  }

  /// Whether the test is one this worker runs and has not ended yet.
  func holds(_ id: TestID) -> Bool { transcript.holds(id) }

  /// Whether the worker is replaced once the test asked for ends: a test left a process
  /// running, it ran under a schedule, or the worker was sent a stop signal (a test's
  /// deadline passed as its end came): a stopped worker runs no other test.
  var mustBeReplaced: Bool { transcript.leftProcesses || transcript.scheduled || !supervision.takesAttempts }

  /// The tests that were running side by side when the worker crashed: each runs again
  /// alone (in a fresh worker running one test at a time), for a verdict of its own.
  var runAgainAlone: Set<TestID> { transcript.runAgainAlone }

  /// The warnings those tests keep from this worker (``WorkerSupervision/Attempt/kept``).
  var kept: [TestID: [Issue]] { transcript.kept }

  /// Reads the worker until `test` ends (`true`: the worker runs on) or the worker exits
  /// (`false`); every test that ends meanwhile goes to `ended`, `test`'s events to `events`.
  mutating func run(until planned: Runner.PlannedTest, events: EventSink, ended: inout [TestID: Ended]) -> Bool {
    transcript.asked = (planned, events)
    defer { ended.merge(transcript.takeEnded()) { $1 } }
    guard let exit = watch.watch(&transcript, &supervision) else { return true }
    judge(exit, ended: &ended, asked: (planned.id, events))
    return false
  }

  /// Judges the worker's end (``BundleTranscript/exited(_:into:outputHeldBy:)``). Output still
  /// held after it while no test ran (a process the tests started) is a warning of the last
  /// test that ended, unless the runner has that one already: then of the test it waits for,
  /// `asked` (the message blames no one test).
  private mutating func judge(_ exit: ProcessEnding, ended: inout [TestID: Ended], asked: (id: TestID, events: EventSink)?) {
    let ranNone = supervision.running.isEmpty
    transcript.exited(exit, into: &supervision, outputHeldBy: watch.outputHeld ? "the test bundle" : nil)
    guard watch.outputHeld && ranNone else { return }
    let leak = WorkerSupervision.outputHeld(by: "the test bundle")
    ended.merge(transcript.takeEnded()) { $1 }
    if let last = transcript.lastEnded, ended[last] != nil {
      ended[last]!.events.append(Event(.issueRecorded(last, leak)))
    } else if let asked {
      asked.events(.issueRecorded(asked.id, leak))
    }
  }

  /// Stops the worker's process group and waits for it.
  mutating func kill() { watch.kill() }
}

/// How a test bundle's worker is read: its library's records on the channel
/// (``BundleChannelReader``) start and end the attempts of the tests given to it, and its
/// output is cut at the numbered markers written before each record (``MarkedOutput``).
private struct BundleTranscript: WorkerTranscript {
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
  private var ended: [TestID: BundleWorker.Ended] = [:]
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
  /// The warnings those tests keep from this worker.
  private(set) var kept: [TestID: [Issue]] = [:]

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

  mutating func takeEnded() -> [TestID: BundleWorker.Ended] {
    defer { ended = [:] }
    return ended
  }

  mutating func output(_ bytes: ArraySlice<UInt8>, into supervision: inout WorkerSupervision) {
    supervision.printed(output.append(bytes, recordsRelayed: recordsRead))
  }

  /// Relays the records read; true once the asked test ended.
  mutating func channel(_ bytes: ArraySlice<UInt8>, into supervision: inout WorkerSupervision) -> Bool {
    records.append(bytes)
    while let line = records.next() {
      for note in reader.read(line) { relay(note, into: &supervision) }
      recordsRead += 1
      // What the tests printed before the next record is the tests' that ran then.
      supervision.printed(output.release(recordsRelayed: recordsRead))
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
    case .started(let id):
      started.insert(id)
      guard let planned = planned[id], !runAgainAlone.contains(planned.id) else { return }
      edges.started(planned)
      // Events are streamed as they come only where no other test can start beside this one.
      let streams = planned.id == asked?.planned.id && runsOneTestAtATime
      let deadline = planned.timeLimit.map { ContinuousClock().now + $0 }
      supervision.start(planned, sink: streams ? asked?.events : nil, streams: streams, deadline: deadline)
    case .issue(let id, var issue):
      if let test = planned[id] {
        if issue.sourceLocation == nil { issue.sourceLocation = test.test.sourceLocation }
        if supervision.runs(test.id) {
          supervision.record(Event(.issueRecorded(test.id, issue)), of: test.id)
        } else if finished.contains(test.id) {
          edges.recordedAfterItsTest(issue, test: test)
        }
      } else if reader.library == .swiftTesting {
        // A suite's issue (a trait of it threw): under its suite, after its tests if one started.
        // (An XCTest issue of a test not given to the worker is one of a test run inside another,
        // which that test judges.)
        let tests = planned.values.filter { $0.existing?.suite == id || $0.existing?.suite.hasPrefix(id + "/") == true }
        let suite = tests.first?.id.suiteRun ?? SuiteRun(suite: id, waiter: reader.library.name)
        edges.suiteRecorded(issue, id: id, suite: suite, afterTests: tests.contains { started.contains($0.existing?.id ?? "") })
      }
    case .issueOfNoTest(let issue):
      edges.recordedAfterItsTest(issue)
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
        warnings.append(Scheduler.blockedMessage("The Swift concurrency job of step \(escapedAt)",
                                                 for: BundleChannelLibrary.quietPeriod, handedBack: nil))
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
      ended[planned.id] = BundleWorker.Ended(events: attempt.held, end: end)
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
  /// - Attempts running: as the supervisor decides (``WorkerSupervision/exited(_:outputHeldBy:)``),
  ///   except that when the worker ended by itself after other tests had ended in it, no
  ///   running test is blamed yet: each runs again alone in a fresh worker
  ///   (``crashUnderReview``), as do those the supervisor runs again, without its notes
  ///   (`swift test` gives none), keeping their warnings (output held past the exit,
  ///   `outputHeldBy`).
  /// - None running, the worker not stopped: a library that ran every test it knows ended
  ///   so (the tests it never started are none of its); otherwise the worker ended outside
  ///   every test's body (``BundleEdges/endedBetweenTests(_:stoppedAt:output:suite:)``): the
  ///   tests it never started run again in a new worker, but for those of a class whose
  ///   `class func setUp()` failed, which end skipped. So does a worker stopped at the time
  ///   limit while no test ran (a hang between tests, or at its exit).
  /// - None running, the worker stopped only for a test whose end came with the signal: the
  ///   test asked for runs again in a fresh worker. Interrupted, or before any test ended:
  ///   the test asked for ends so.
  mutating func exited(_ exit: ProcessEnding, into supervision: inout WorkerSupervision, outputHeldBy worker: String?) {
    if !supervision.running.isEmpty {
      let byItself = supervision.stopping == nil
      let running = supervision.running.map(\.planned)
      let output = supervision.tail
      var underReview: [Runner.PlannedTest] = []
      for outcome in supervision.exited(exit, outputHeldBy: worker) {
        switch outcome {
        case .ended(let attempt, let end, _):
          if byItself, case .processEnded = end, !edges.ended.isEmpty {
            underReview.append(attempt.planned)
            if !attempt.kept.isEmpty { kept[attempt.planned.id, default: []] += attempt.kept }
          } else {
            ended[attempt.planned.id] = BundleWorker.Ended(events: attempt.held, end: end)
            finished.insert(attempt.planned.id)
          }
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
    let complete = supervision.stopping == nil && reader.statusesOfACompleteRun.contains { exit == .exited($0) }
    if complete {
      for (id, planned) in planned where !started.contains(id) {
        if let suite = planned.existing.flatMap({ edges.failedSuite(holding: $0.suite) }) {
          ended[planned.id] = BundleWorker.Ended(end: .skipped(
            reason: "Not run: its suite \(suite) failed before it; see the suite's initializationError", duration: 0))
        } else {
          ended[planned.id] = BundleWorker.Ended(end: .couldNotStart(
            reason: "The test bundle ran no test \(planned.id.path): it has no such \(reader.libraryName) test"))
        }
      }
      return
    }
    // Stopped only for a test whose end came with the signal: the next test runs in a fresh worker.
    if supervision.stopping != nil && supervision.stoppedForEndedAttempts { return }
    let interrupted = supervision.stopping?.interrupt != nil
    if !interrupted && (!finished.isEmpty || edges.openClass != nil || asked == nil) {
      let limit = supervision.stopping == nil ? nil : asked?.planned.timeLimit ?? exitLimit
      let planned = self.planned
      let failedSetUp = edges.endedBetweenTests(exit, stoppedAt: limit, output: supervision.tail) { name in
        planned.values.first { $0.existing?.suite == name }?.id.suiteRun
      }
      guard let failedSetUp else { return }
      for (id, planned) in planned where planned.existing?.suite == failedSetUp && !started.contains(id) {
        ended[planned.id] = BundleWorker.Ended(end: .skipped(
          reason: "Not run: class func setUp() of \(failedSetUp) failed (the test bundle ended with \(exit)); see its "
            + "initializationError", duration: 0))
        finished.insert(planned.id)
      }
    } else if let asked = asked?.planned {
      ended[asked.id] = BundleWorker.Ended(end: supervision.ending(exit, timeLimit: asked.timeLimit, output: supervision.tail))
    }
  }
}

/// A test bundle's output, cut at the numbered marker lines (`\u{1}MARKER N`) the preloaded
/// library (``BundleChannelLibrary``) writes to standard output just before it writes record
/// N to the channel: what comes before marker N was printed before record N, whatever the
/// reads cut the output into. A marker that never comes (a test had redirected its output)
/// holds nothing up: the next one cuts.
struct MarkedOutput {
  /// The marker's text up to its number.
  let marker: [UInt8]
  /// Bytes read and not handed out: from a marker whose record was not relayed yet on.
  private var held: [UInt8] = []

  init(marker: [UInt8]) { self.marker = marker }

  /// Adds bytes read; returns those printed after the record `recordsRelayed` was written
  /// and before the next one.
  mutating func append(_ bytes: ArraySlice<UInt8>, recordsRelayed: Int) -> ArraySlice<UInt8> {
    held += bytes
    return release(recordsRelayed: recordsRelayed)
  }

  /// Hands out what was held up to the first marker of a record not relayed yet, dropping
  /// the markers of records relayed.
  mutating func release(recordsRelayed: Int) -> ArraySlice<UInt8> {
    var released: [UInt8] = []
    while true {
      guard let at = held.firstRange(of: marker) else {
        // The end may be the start of a marker: keep it until the next read.
        let keep = (1..<min(marker.count, held.count + 1)).last { held.suffix($0).elementsEqual(marker.prefix($0)) } ?? 0
        released += held[..<(held.count - keep)]
        held.removeFirst(held.count - keep)
        return released[...]
      }
      released += held[..<at.lowerBound]
      guard let newline = held[at.upperBound...].firstIndex(of: 0x0A) else {
        held.removeFirst(at.lowerBound)
        return released[...]
      }
      let number = Int(String(decoding: held[at.upperBound..<newline], as: UTF8.self)) ?? 0
      if number > recordsRelayed {
        held.removeFirst(at.lowerBound)
        return released[...]
      }
      held.removeFirst(newline + 1)
    }
  }

  /// Everything held, its markers left out: the output's end.
  mutating func rest() -> ArraySlice<UInt8> {
    let released = release(recordsRelayed: .max)
    defer { held = [] }
    return (Array(released) + held)[...]
  }
}
