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
  private let state: Mutex<BundleLane>

  /// Creates an executor that runs tests of `bundle`.
  init(bundle: String, directory: String, channelLibrary: String, allTests: [TestLibrary: Int] = [:],
       attachmentsPath: String? = nil,
       gracePeriod: Duration = .seconds(1), stop: StopRequest?) {
    state = Mutex(BundleLane(kind: TestBundleKind(bundle: bundle, directory: directory, channelLibrary: channelLibrary,
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

/// A test bundle's lane: the driver of its ``BundleLaneMachine``, which knows and decides,
/// while the lane holds the worker's process and carries out what the machine asks (start,
/// wait, signal, stop, send what a test recorded). The lane's loop (``LaneWatch``) feeds
/// what it reads of the worker to the machine's state of it.
struct BundleLane: WatchedLane, LaneDriver {
  /// How its workers start.
  let kind: TestBundleKind
  /// The worker's process, watched, while the lane holds one.
  private var process: WorkerWatch?
  /// What the lane knows and decides.
  var machine: BundleLaneMachine
  /// How the attempt asked for ended, once the machine said.
  private var end: AttemptEnd?

  init(kind: TestBundleKind) {
    self.kind = kind
    machine = BundleLaneMachine(bundle: kind.bundle)
  }

  /// Runs `planned` in the worker that was given it, or in a new worker given it and the
  /// prepared tests after it that have not ended yet, carrying out what the machine asks and
  /// answering it, until the attempt ends.
  mutating func run(_ planned: Runner.PlannedTest, events: EventSink) -> AttemptEnd {
    end = nil
    defer { end = nil }
    // The machine ends every list with the attempt's end or a command it awaits the answer to.
    drive(.asked(planned, sink: events))
    return end ?? .couldNotStart(reason: "the lane ended \(planned.id.path) without an end")
  }

  /// Stops the worker left, if any, and forgets what the runner said it hands over.
  mutating func finish() {
    drive(.finishing)
  }

  // MARK: The lane's loop

  /// The one place the lane holds its worker.
  enum Slot { case worker }

  var slotsOfRunningWorkers: [Slot] { process.map { $0.exit == nil } == true ? [.worker] : [] }

  mutating func withWatch<Result>(_ slot: Slot, _ body: (inout WorkerWatch, inout BundleWorkerDecoder, inout WorkerSupervision) -> Result)
    -> Result {
    Self.withWatch(&process, &machine, body)
  }

  /// The worker's watch, with its decoder and supervision, which are the lane's machine's.
  private static func withWatch<Result>(_ process: inout WorkerWatch?, _ machine: inout BundleLaneMachine,
                                        _ body: (inout WorkerWatch, inout BundleWorkerDecoder, inout WorkerSupervision) -> Result)
    -> Result {
    machine.reading { decoder, supervision in body(&process!, &decoder, &supervision) }
  }

  /// Never: a lane holds one test bundle's worker at a time, and waits for it.
  mutating func endedUnawaited(_ slot: Slot, _ exit: ProcessEnding) {}

  mutating func timePassed(_ slot: Slot, to now: ContinuousClock.Instant, interrupt: Int32?) {
    drive(.timePassed(to: now, interrupt: interrupt))
  }

  // MARK: Commands

  /// Carries out one of the machine's commands; returns its answer when it has one.
  mutating func carryOut(_ command: BundleLaneMachine.Command) -> BundleLaneMachine.Event? {
    switch command {
    case .spawn(let batch, let oneAtATime):
      let marker = "AsyncHarness \(String(UInt64.random(in: 0...UInt64.max), radix: 16))"
      do {
        process = try kind.start(batch.map(\.test), of: batch.first?.planned, oneAtATime: oneAtATime, marker: marker)
        return .spawned(BundleLaneMachine.WorkerState(bundle: kind.bundle, batch: batch, oneAtATime: oneAtATime, marker: marker,
                                                      gracePeriod: kind.gracePeriod))
      } catch {
        process = nil
        return .couldNotSpawn(reason: "\(error)")
      }
    case .wait:
      let exit = LaneWatch.watch(&self, until: .worker)
      return .waited(exit: exit, outputHeld: process!.outputHeld)
    case .kill:
      process?.kill()
      process = nil
    case .signal(let signal):
      process?.process.signal(signal)
    case .deliver(let recorded, let sink):
      for event in recorded { sink.send(event) }
    case .report(let failure, let sink):
      sink(.outsideFailure(failure))
    case .tell(let issues, let test, let sink):
      for issue in issues { sink(.issueRecorded(test, issue)) }
    case .end(let end):
      self.end = end
    }
    return nil
  }
}
