import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs each test in a worker process: the same suites executable started again as a
/// worker, so the parent never runs user code.
///
/// One worker runs test after test. Requests and the worker's events travel on a private
/// channel (`Executors/Worker/README.md`): tests named by their position, never by their names, and
/// events streamed live as the test records them. The worker's standard output and standard
/// error become the running test's output. The tests the runner announces (``prepare(_:)``)
/// are sent to the worker up to ``pipelineDepth`` ahead, so that its next test starts
/// without waiting for this process; a marker line the worker writes as each test starts
/// keeps their outputs apart, and after a failing test the worker pauses, dropping what was
/// sent ahead, until it is told to resume. One poll loop writes requests and reads events
/// and output, and no write of this process ever blocks it, so neither side can wait on the
/// other whatever either writes.
///
/// When the worker dies while a test runs (`fatalError`, a failed precondition, SIGSEGV,
/// `abort`, `exit`), that attempt ends as ``AttemptEnd/processEnded(_:output:)`` and the next
/// test starts a fresh worker: every other result is kept. A test still running
/// `timeLimitMargin` past its time limit (hung outside any wait) gets SIGTERM, then SIGKILL
/// after `gracePeriod` (``AttemptEnd/stoppedAtLimit(_:killed:gracePeriod:output:)``). A worker
/// whose reply says it must not run another test (``WorkerRetirement``: its test exceeded its
/// time limit, and an `async` body cancelled at the limit and left running holds a thread of
/// its cooperative pool) is retired: the next test gets a fresh one.
@_spi(ForToolsIntegrationOnly) public final class WorkerExecutor: TestExecutor {
  /// The executable started as a worker.
  @_spi(ForToolsIntegrationOnly) public let executable: String
  /// How long a stopped worker has between SIGTERM and SIGKILL.
  @_spi(ForToolsIntegrationOnly) public let gracePeriod: Duration
  /// How long past its time limit a test runs before its worker is stopped: the worker's
  /// own time limit ends a wait in progress first, with a precise message.
  @_spi(ForToolsIntegrationOnly) public let timeLimitMargin: Duration
  /// When requested, the worker running a test is stopped like one past its time limit,
  /// and the test ends as an ``Issue/Kind/interrupted`` error.
  @_spi(ForToolsIntegrationOnly) public let stop: StopRequest?
  /// Whether each test runs in a fresh worker process (`--isolation test`: nothing a test
  /// leaves behind in its process reaches the next one) instead of one worker running test
  /// after test until it dies. A spare worker then starts while each test runs, so only the
  /// first test waits for a process to start; the spare left at the end is stopped unused.
  @_spi(ForToolsIntegrationOnly) public let freshProcessPerTest: Bool
  /// How many `async` tests of parallel suites one worker runs side by side, as tasks
  /// (`--async-width`); 1 runs each alone. Such tests run in a worker of their own, beside
  /// the one that runs the lane's other tests one at a time.
  @_spi(ForToolsIntegrationOnly) public let asyncWidth: Int
  private let state: Mutex<WorkerLane>

  /// Creates an executor that starts `executable` (a suites executable calling
  /// ``HarnessMain/run(_:registry:defaultWaiters:junit:)``) as its workers.
  /// - Parameters:
  ///   - executable: the path of the suites executable.
  ///   - freshProcessPerTest: `true` to start a worker for every test.
  ///   - gracePeriod: how long a stopped worker has between SIGTERM and SIGKILL.
  ///   - timeLimitMargin: how long past its time limit a test runs before its worker is stopped.
  ///   - stop: a request to stop the run, made by SIGINT or SIGTERM.
  ///   - asyncWidth: how many `async` tests of parallel suites one worker runs side by side.
  @_spi(ForToolsIntegrationOnly)
  public init(executable: String, freshProcessPerTest: Bool = false, gracePeriod: Duration = .seconds(1),
              timeLimitMargin: Duration = .milliseconds(500), stop: StopRequest? = nil, asyncWidth: Int = 1) {
    self.executable = executable
    self.freshProcessPerTest = freshProcessPerTest
    self.asyncWidth = max(1, asyncWidth)
    self.gracePeriod = gracePeriod
    self.timeLimitMargin = timeLimitMargin
    self.stop = stop
    let marker = "\u{1}AsyncHarness test starts \(String(UInt64.random(in: 0...UInt64.max), radix: 16))"
    state = Mutex(WorkerLane(kind: HarnessWorkerKind(executable: executable, marker: marker, gracePeriod: gracePeriod,
                                                     timeLimitMargin: timeLimitMargin, stop: stop,
                                                     freshWorkerPerTest: freshProcessPerTest)))
  }

  /// An executor that starts this process's own executable.
  /// - Parameters:
  ///   - freshProcessPerTest: `true` to start a worker for every test.
  ///   - stop: a request to stop the run, made by SIGINT or SIGTERM.
  ///   - asyncWidth: how many `async` tests of parallel suites one worker runs side by side.
  /// - Returns: the executor.
  @_spi(ForToolsIntegrationOnly)
  public static func relaunchingThisExecutable(freshProcessPerTest: Bool = false, stop: StopRequest? = nil,
                                               asyncWidth: Int = 1) -> WorkerExecutor {
    WorkerExecutor(executable: Bundle.main.executablePath ?? CommandLine.arguments[0],
                   freshProcessPerTest: freshProcessPerTest, stop: stop, asyncWidth: asyncWidth)
  }

  /// How many `async` tests of parallel suites one worker runs side by side unless told
  /// otherwise (`--async-width`).
  @_spi(ForToolsIntegrationOnly) public static let defaultAsyncWidth = 1024

  /// How many requests a worker holds at most: the test it runs and the ones it runs next.
  @_spi(ForToolsIntegrationOnly) public static let pipelineDepth = 8

  /// Remembers the tests the runner hands over next, so that a worker can be sent them
  /// before the test it runs ends (its next test then starts without waiting for a round
  /// trip through this process).
  @_spi(ForToolsIntegrationOnly) public func prepare(_ planned: Runner.Plan.PlannedTests) {
    state.withLock { $0.prepare(planned) }
  }

  /// Runs one attempt of a test (a test under one waiter) in a worker, streaming its issues
  /// and output to `events` as they happen.
  /// - Parameters:
  ///   - test: The test to run and how.
  ///   - events: Where its issues and output go.
  /// - Returns: How the attempt ended.
  @_spi(ForToolsIntegrationOnly) public func run(_ planned: Runner.PlannedTest, events: EventSink) -> AttemptEnd {
    state.withLock { $0.run(planned, events: events) }
  }

  /// True: a test past its time limit has its worker process stopped.
  @_spi(ForToolsIntegrationOnly) public var stopsHungTests: Bool { true }

  /// True: each test runs in a worker process.
  @_spi(ForToolsIntegrationOnly) public var isolatesTests: Bool { true }

  /// Tells the worker (and the spare, under `--isolation test`) to stop and waits for it to
  /// exit; one that does not exit within the grace period is stopped (SIGTERM, then SIGKILL
  /// after another). A worker still holding
  /// tests the runner never asked for (the run stopped) is killed at once.
  @_spi(ForToolsIntegrationOnly) public func finish() {
    state.withLock { $0.finish() }
  }

  /// The width asked for (``asyncWidth``).
  @_spi(ForToolsIntegrationOnly) public var sideBySideWidth: Int { asyncWidth }

  /// Whether another test may start side by side now (``WorkerLane/takesSideBySide``).
  @_spi(ForToolsIntegrationOnly) public var takesSideBySide: Bool {
    state.withLock { $0.takesSideBySide }
  }

  /// Starts `test` side by side with the tests running so (``WorkerRequest/start(_:)``), in
  /// the lane's side-by-side worker, started now when there is none; returns how the attempt
  /// ended when it could not start. ``waitSideBySide()`` says how it ends.
  @_spi(ForToolsIntegrationOnly) public func startSideBySide(_ planned: Runner.PlannedTest, events: EventSink) -> AttemptEnd? {
    state.withLock { $0.startSideBySide(planned, events: events) }
  }

  /// Waits until at least one test started side by side ended, and says how each that did
  /// ended. A test the worker ended in while it ran beside others, and not for it, runs again
  /// first, in the lane (``WorkerLane/waitSideBySide()``).
  @_spi(ForToolsIntegrationOnly) public func waitSideBySide() -> [SideBySideEnd] {
    state.withLock { $0.waitSideBySide() }
  }
}

extension AttemptEnd {
  /// Why the worker process that ended in this attempt is replaced (`workerReplaced`'s
  /// reason): `crashed` when it ended while the test ran, `stoppedAtTimeLimit` when it was
  /// stopped past the test's time limit; `nil` when it was not (an interrupt ends the run).
  var replacesWorker: String? {
    switch self {
    case .processEnded: "crashed"
    case .stoppedAtLimit: "stoppedAtTimeLimit"
    case .leftRunningAtLimit: WorkerRetirement.exceededTimeLimit.rawValue
    case .returned, .skipped, .interrupted, .couldNotStart: nil
    }
  }
}
