extension BundleLaneMachine {
  /// What a test bundle's lane knows of its worker, beside its process (which is the
  /// driver's): the attempts it runs and when it is stopped (``WorkerSupervision``), how its
  /// channel and output are read (``BundleWorkerDecoder``), and what the lane waits for of it.
  /// The lane's loop feeds the first two what it reads (``BundleLaneMachine/reading(_:)``);
  /// the machine reads what they found once a wait is over.
  struct WorkerState {
    var supervision: WorkerSupervision
    var decoder: BundleWorkerDecoder
    /// Whether the lane waits for it, holding no test, to exit.
    private(set) var awaitsExit = false

    /// The state of a worker of the test bundle at `bundle`, started for the tests of `batch`,
    /// each with the test it stands for, all of one library, `oneAtATime` or as the library
    /// runs them, writing `marker` (``BundleChannelLibrary``'s variable) before each record;
    /// stopped `gracePeriod` after SIGTERM with SIGKILL.
    init(bundle: String, batch: [(planned: Runner.PlannedTest, test: ExistingTest)], oneAtATime: Bool, marker: String,
         gracePeriod: Duration) {
      let library = batch.first?.test.library ?? .xctest
      supervision = WorkerSupervision(gracePeriod: gracePeriod, kind: .testBundle)
      supervision.idleDeadline = batch.first?.planned.timeLimit.map { ContinuousClock().now + $0 }
      let file = bundle.split(separator: "/").last ?? ""
      let bundleName = String(file.hasSuffix(".xctest") ? file.dropLast(".xctest".count) : file)
      decoder = BundleWorkerDecoder(reader: BundleChannelReader(library), marker: Array("\u{1}\(marker) ".utf8), batch: batch,
                                    oneAtATime: oneAtATime || BundleInvocation(library: library).runsOneTestAtATime,
                                    bundleSuite: SuiteRun(suite: bundleName, host: library.name))
    }

    /// What is known of it once a wait for the test asked for is over, it having `exited` or
    /// not (``AttemptFollowUp``): whether it was sent a stop signal (a test's deadline passed as
    /// its end came: a stopped worker runs no other test), a test left a process running, it
    /// ran a schedule.
    func facts(exited: Bool) -> AttemptFollowUp.Facts {
      AttemptFollowUp.Facts(workerKind: .testBundle, workerEnded: exited, workerStopped: !supervision.takesAttempts,
                            workerLeftWork: decoder.leftProcesses, workerRanSchedule: decoder.scheduled)
    }

    /// Whether it ran a schedule (one schedule, one test) that passed, was not stopped, left no
    /// process and holds no test: it is heard to its exit a moment, silently.
    var ranAPassingSchedule: Bool {
      decoder.scheduled && !decoder.toldOfAFailure && supervision.takesAttempts && !decoder.leftProcesses && decoder.holdsNone
    }

    /// Begins a wait for the test `asked` for to end.
    mutating func await(_ asked: (planned: Runner.PlannedTest, sink: EventSink)) {
      decoder.asked = (asked.planned, asked.sink)
    }

    /// Begins a wait for it, which has no test left to run, to exit within `limit`; a stop past
    /// it is no failure when `silently`.
    mutating func awaitExit(within limit: Duration, silently: Bool) {
      awaitsExit = true
      decoder.asked = nil
      decoder.exitLimit = limit
      decoder.stopAtExitLimitIsSilent = silently
      supervision.idleDeadline = ContinuousClock().now + limit
    }

    /// Hands its decoder and supervision to `body`, together.
    mutating func reading<Result>(_ body: (inout BundleWorkerDecoder, inout WorkerSupervision) -> Result) -> Result {
      body(&decoder, &supervision)
    }
  }
}
