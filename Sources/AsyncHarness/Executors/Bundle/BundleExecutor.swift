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
/// ``BundleInvocation`` for each library's invocation), runs the test asked for and the
/// tests of the same library the runner prepared after it (``prepare(_:)``, with the entries
/// of the prepared entry's chain, and in a run of one lane those of the entries after it,
/// ``prepare(following:of:)``), in one invocation
/// whose list of tests stays under ``BundleInvocation/listLimit`` bytes. The worker has
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
  private let state: Mutex<BundleRuns>

  /// Creates an executor that runs tests of `bundle`.
  init(bundle: String, directory: String, channelLibrary: String, allTests: [TestLibrary: Int] = [:],
       attachmentsPath: String? = nil,
       gracePeriod: Duration = .seconds(1), stop: StopRequest?) {
    state = Mutex(BundleRuns(kind: TestBundleKind(bundle: bundle, directory: directory, channelLibrary: channelLibrary,
                                                  allTests: allTests, attachmentsPath: attachmentsPath,
                                                  gracePeriod: gracePeriod, stop: stop)))
  }

  /// True: a test past its time limit has its worker's process group stopped.
  var stopsHungTests: Bool { true }

  /// True: each test runs in a worker process of the bundle.
  var isolatesTests: Bool { true }

  /// Remembers the tests the runner hands over next, and the entries its lane runs after
  /// them (the entry's chain, ``LaneBalance``): the worker started for a test runs them after
  /// it in the same process.
  func prepare(_ planned: Runner.Plan.PlannedTests) {
    state.withLock { _ = $0.machine.handle(.prepared(planned)) }
  }

  /// Remembers the entries the runner hands over after the prepared tests: a new worker runs
  /// their tests too.
  func prepare(following entries: ArraySlice<Runner.Plan.Entry>, of plan: Runner.Plan) {
    state.withLock { _ = $0.machine.handle(.following(entries, plan.configuration)) }
  }

  /// Runs `test` in the worker that was given it, or in a new worker given it and the
  /// prepared tests after it that have not ended yet.
  func run(_ planned: Runner.PlannedTest, events: EventSink) -> AttemptEnd {
    state.withLock { $0.run(planned, events: events) }
  }

  /// Stops the worker left, if any.
  func finish() {
    state.withLock { $0.finish() }
  }
}

/// A test bundle's lane: the driver of its ``BundleLaneMachine``, which decides, while the
/// lane holds the worker and carries out what the machine asks (start, wait, retire, stop,
/// send what a test recorded).
struct BundleRuns: WatchedLane, LaneDriver {
  /// How its workers start.
  let kind: TestBundleKind
  fileprivate var worker: BundleWorker?
  /// What the lane decides.
  var machine: BundleLaneMachine
  /// The attempt the runner asked for, while it runs, and where its events go.
  private var asked: (planned: Runner.PlannedTest, events: EventSink)?
  /// How it ended, once the machine said.
  private var end: AttemptEnd?

  init(kind: TestBundleKind) {
    self.kind = kind
    machine = BundleLaneMachine(bundle: kind.bundle)
  }

  /// The one place the lane holds its worker.
  enum Slot { case worker }

  var slotsOfRunningWorkers: [Slot] { worker.map { $0.watch.exit == nil } == true ? [.worker] : [] }

  mutating func withWatch<Result>(_ slot: Slot, _ body: (inout WorkerWatch, inout BundleWorkerDecoder, inout WorkerSupervision) -> Result)
    -> Result {
    worker!.withWatch(body)
  }

  /// Never: a lane holds one test bundle's worker at a time, and waits for it.
  mutating func endedUnawaited(_ slot: Slot, _ exit: ProcessEnding) {}

  mutating func timePassed(_ slot: Slot, to now: ContinuousClock.Instant, interrupt: Int32?) {
    worker!.timePassed(to: now, interrupt: interrupt)
  }

  /// Runs `planned` in the worker that was given it, or in a new worker given it and the
  /// prepared tests after it that have not ended yet, carrying out what the machine asks and
  /// answering it, until the attempt ends.
  mutating func run(_ planned: Runner.PlannedTest, events: EventSink) -> AttemptEnd {
    (asked, end) = ((planned, events), nil)
    defer { (asked, end) = (nil, nil) }
    // The machine ends every list with the attempt's end or a command it awaits the answer to.
    drive(.asked(planned, workerHolds: worker?.holds(planned.id) == true))
    return end ?? .couldNotStart(reason: "the lane ended \(planned.id.path) without an end")
  }

  /// Carries out one of the machine's commands; returns its answer when it has one.
  mutating func carryOut(_ command: BundleLaneMachine.Command) -> BundleLaneMachine.Event? {
    switch command {
    case .spawn(let batch, let oneAtATime):
      do {
        worker = try BundleWorker(kind, batch: batch, oneAtATime: oneAtATime)
        return .spawned
      } catch {
        worker = nil
        return .couldNotSpawn(reason: "\(error)")
      }
    case .wait(let planned):
      var ended = machine.ended
      let exited = !watchWorker(until: (planned, asked!.events), ended: &ended)
      return .waited(worker!.facts(exited: exited, asked: planned.id), ended: ended)
    case .waitForExit(let limit, let silently):
      var ended = machine.ended
      worker!.awaitExit(within: limit, silently: silently)
      _ = watchWorker(until: nil, ended: &ended)
      return .exited(ended: ended)
    case .retire:
      defer { worker = nil }
      return .retired(worker!.retire())
    case .kill:
      worker?.kill()
      worker = nil
    case .deliver(let recorded):
      for event in recorded { asked?.events.send(event) }
    case .report(let failure):
      asked?.events(.outsideFailure(failure))
    case .tell(let issues):
      for issue in issues { asked?.events(.issueRecorded(asked!.planned.id, issue)) }
    case .end(let end):
      self.end = end
    }
    return nil
  }

  /// Stops the worker left, if any, and forgets what the runner said it hands over.
  mutating func finish() {
    drive(.finishing)
  }

  /// Reads the worker (``LaneWatch``) until the test `asked` for ends (`true`: the worker
  /// runs on) or it exits (`false`); every test that ends meanwhile goes to `ended`, the test
  /// asked for's events to its sink. Without a test asked for, reads the worker, which has no
  /// test left to run, until it exits, and judges how: a crash or a hang after its last test
  /// is a failure outside every test (``BundleWorker/retire()``).
  private mutating func watchWorker(until asked: (planned: Runner.PlannedTest, events: EventSink)?,
                                    ended: inout [TestID: BundleWorker.Ended]) -> Bool {
    if let asked { worker!.await(asked) }
    let exit = LaneWatch.watch(&self, until: .worker)
    return worker!.waited(exited: exit, ended: &ended)
  }
}

/// One invocation of the test bundle running a list of tests of one library, watched by the
/// watch of a worker (``WorkerWatch``, ``WorkerSupervision``): its channel read a record at a
/// time, its output cut into the tests that printed it (``BundleWorkerDecoder``). XCTest runs
/// one test at a time; Swift Testing runs its tests side by side as it does under `swift test`.
struct BundleWorker {
  /// A test that ended: the events it recorded while the runner waited for another, and how
  /// it ended.
  struct Ended {
    var events: [Event] = []
    var end: AttemptEnd
  }

  private(set) var watch: WorkerWatch
  private var supervision: WorkerSupervision
  private var decoder: BundleWorkerDecoder

  /// Starts the bundle of `kind` for the tests of `batch`, each with the test it stands for,
  /// all of one library, `oneAtATime` or as the library runs them.
  init(_ kind: TestBundleKind, batch: [(planned: Runner.PlannedTest, test: ExistingTest)], oneAtATime: Bool) throws {
    let library = batch.first?.test.library ?? .xctest
    let reader = BundleChannelReader(library)
    let invocation = BundleInvocation(library: library, allTests: kind.allTests, attachmentsPath: kind.attachmentsPath)
    let marker = "AsyncHarness \(String(UInt64.random(in: 0...UInt64.max), radix: 16))"
    let channel = try ChildProcess.makePipe()
    defer { close(channel.write) }
    let process: ChildProcess
    do {
      process = try ChildProcess(
        executable: kind.bundle, arguments: invocation.arguments(running: batch.map(\.test), oneAtATime: oneAtATime),
        environment: BundleChannelLibrary.environment(library: kind.channelLibrary, testing: library, marker: marker,
                                                      schedule: batch.first?.planned.schedule,
                                                      saysSteps: batch.first?.planned.reportsWaits == true)
          .merging(invocation.environment) { $1 },
        handing: [(channel.write, BundleChannelLibrary.channelDescriptor)], directory: kind.directory)
    } catch {
      close(channel.read)
      throw error
    }
    _ = fcntl(channel.read, F_SETFL, fcntl(channel.read, F_GETFL) | O_NONBLOCK)
    watch = WorkerWatch(process: process, channel: channel.read, stop: kind.stop)
    supervision = WorkerSupervision(gracePeriod: kind.gracePeriod, kind: .testBundle)
    supervision.idleDeadline = batch.first?.planned.timeLimit.map { ContinuousClock().now + $0 }
    let file = kind.bundle.split(separator: "/").last ?? ""
    let bundleName = String(file.hasSuffix(".xctest") ? file.dropLast(".xctest".count) : file)
    decoder = BundleWorkerDecoder(reader: reader, marker: Array("\u{1}\(marker) ".utf8), batch: batch,
                                  oneAtATime: oneAtATime || invocation.runsOneTestAtATime,
                                  bundleSuite: SuiteRun(suite: bundleName, host: library.name))
  }

  /// What the lane's machine is told once a wait for the test `asked` for is over, the
  /// worker having `exited` or not (``AttemptFollowUp``): whether it was sent a stop signal (a
  /// test's deadline passed as its end came: a stopped worker runs no other test), a test left
  /// a process running, it ran a schedule, it holds no test or the one asked for.
  func facts(exited: Bool, asked: TestID) -> BundleLaneMachine.Waited {
    BundleLaneMachine.Waited(exited: exited, stopped: !supervision.takesAttempts, leftProcesses: decoder.leftProcesses,
                             ranSchedule: decoder.scheduled, failed: decoder.toldOfAFailure, holdsNone: decoder.holdsNone,
                             holdsAsked: holds(asked))
  }

  /// Hands over what the worker, which ended or runs no other test, leaves (its failures
  /// outside every test so far, the tests it interrupted, which run again alone, the warnings
  /// they keep from it, its crash under review), and stops its process group.
  mutating func retire() -> BundleLaneMachine.Retired {
    defer { kill() }
    return BundleLaneMachine.Retired(failures: decoder.takeOutsideFailures(), runAgainAlone: decoder.runAgainAlone,
                                     kept: decoder.kept, crash: decoder.crashUnderReview)
  }

  /// Begins a wait for the test `asked` for to end.
  mutating func await(_ asked: (planned: Runner.PlannedTest, events: EventSink)) {
    decoder.asked = asked
  }

  /// Begins a wait for the worker, which has no test left to run, to exit within `limit`; a
  /// stop past it is no failure when `silently`.
  mutating func awaitExit(within limit: Duration, silently: Bool) {
    decoder.asked = nil
    decoder.exitLimit = limit
    decoder.stopAtExitLimitIsSilent = silently
    supervision.idleDeadline = ContinuousClock().now + limit
  }

  /// What the wait found: `exit` when the worker exited (it is judged: `false`), else the
  /// test asked for ended (`true`); every test that ended meanwhile goes to `ended`.
  mutating func waited(exited exit: ProcessEnding?, ended: inout [TestID: Ended]) -> Bool {
    defer { ended.merge(decoder.takeEnded()) { $1 } }
    guard let exit else { return true }
    judge(exit, ended: &ended, asked: decoder.asked.map { ($0.planned.id, $0.events) })
    return false
  }

  /// Whether the test is one this worker runs and has not ended yet.
  func holds(_ id: TestID) -> Bool { decoder.holds(id) }

  /// Judges the worker's end (``BundleWorkerDecoder/exited(_:into:outputHeldBy:)``). Output still
  /// held after it while no test ran (a process the tests started) is a warning of the last
  /// test that ended, unless the runner has that one already: then of the test it waits for,
  /// `asked` (the message blames no one test).
  private mutating func judge(_ exit: ProcessEnding, ended: inout [TestID: Ended], asked: (id: TestID, events: EventSink)?) {
    let ranNone = supervision.running.isEmpty
    decoder.exited(exit, into: &supervision, outputHeldBy: watch.outputHeld ? "the test bundle" : nil)
    guard watch.outputHeld && ranNone else { return }
    let leak = WorkerSupervision.outputHeld(by: "the test bundle")
    ended.merge(decoder.takeEnded()) { $1 }
    if let last = decoder.lastEnded, ended[last] != nil {
      ended[last]!.events.append(Event(.issueRecorded(last, leak)))
    } else if let asked {
      asked.events(.issueRecorded(asked.id, leak))
    }
  }

  /// Stops the worker's process group and waits for it.
  mutating func kill() { watch.kill() }

  /// Time passed to `now`, and the run was interrupted by `interrupt` when it was: sends the
  /// signals the worker's deadlines and the interrupt ask for.
  mutating func timePassed(to now: ContinuousClock.Instant, interrupt: Int32?) {
    for signal in supervision.signals(at: now, interrupt: interrupt) { watch.process.signal(signal) }
  }

  /// Hands the worker's watch, decoder and supervision to `body`, together.
  mutating func withWatch<Result>(_ body: (inout WorkerWatch, inout BundleWorkerDecoder, inout WorkerSupervision) -> Result) -> Result {
    body(&watch, &decoder, &supervision)
  }
}
