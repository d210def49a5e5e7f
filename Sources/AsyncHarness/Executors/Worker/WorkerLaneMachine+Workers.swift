extension WorkerLaneMachine {
  /// What a harness workers' lane knows of one of its workers, beside its process (which is
  /// the driver's): the attempts it runs and when it is stopped (``WorkerSupervision``), how its
  /// channel and output are read (``WorkerMessages``), the tests that ended in it, and whether
  /// it is being retired. The lane's loop feeds the first two what it reads
  /// (``WorkerLaneMachine/reading(_:_:)``); the machine reads what they found once a wait is over.
  struct WorkerState {
    var supervision: WorkerSupervision
    var messages: WorkerMessages
    /// The tests that ended in it, latest last.
    private(set) var ended = TestsEnded()
    /// Whether it was told to stop and is watched to its exit: what it still says is dropped.
    private(set) var isRetiring = false
    /// The sink of the last attempt begun in it: where the events of its tests that ended go
    /// (late signals), and the failure of its own end.
    private var lastSink: EventSink?

    /// A worker that started: one running tests one at a time when `marker` (its numbered
    /// line as each test starts) is given, else one running them side by side.
    init(gracePeriod: Duration, marker: [UInt8]?) {
      supervision = WorkerSupervision(gracePeriod: gracePeriod)
      messages = WorkerMessages(marker: marker)
    }

    /// How many attempts run in it.
    var running: Int { supervision.running.count }

    /// Whether it was sent a stop signal (at a test's deadline, or for an interrupt): it starts
    /// no other test (``WorkerSupervision/takesAttempts``).
    var stopped: Bool { !supervision.takesAttempts }

    /// Whether it runs no other test and is retired once the tests it runs ended: a reply said
    /// so (``WorkerRetirement``), or a test was left running past its time limit.
    var mustRetire: Bool { messages.retiring || !supervision.leftRunning.isEmpty }

    /// Begins the attempt of `planned` it runs next or started (channel reference `ref`),
    /// stopped at `deadline`: its events streamed to `sink` when it runs `alone`, else held.
    mutating func begin(_ planned: Runner.PlannedTest, ref: Int?, sink: EventSink, alone: Bool,
                        deadline: ContinuousClock.Instant?) {
      supervision.start(planned, ref: ref, sink: sink, streams: alone, deadline: deadline)
      lastSink = sink
      messages.others = sink
      if alone { supervision.printed(messages.startNextTest()) }
    }

    /// What a wait for it found: the attempts it replied for, those that ended at their
    /// deadline and were left running, and, when it `exited` (what it wrote read to its end,
    /// a process it left still holding its output when `outputHeld`), how its attempts finish.
    mutating func waited(exited exit: ProcessEnding?, outputHeld: Bool)
      -> (replies: [WorkerMessages.Reply], finished: [WorkerSupervision.Finished]) {
      var finished = supervision.takeOverdue()
      if let exit { finished += supervision.exited(exit, outputHeldBy: outputHeld ? "the worker process" : nil) }
      let replies = messages.takeReplies()
      for case .ended(let attempt, _, _) in replies.map(\.finished) + finished { ended.append(attempt.planned.id) }
      return (replies, finished)
    }

    /// Begins its retirement: what it still says is dropped, and it is stopped as at a
    /// deadline (SIGTERM, then SIGKILL) once the grace period from now passed.
    mutating func beginRetiring() {
      isRetiring = true
      messages.others = nil
      supervision.idleDeadline = .now + supervision.gracePeriod
    }

    /// Drops what it said while it is retired.
    mutating func dropReplies() {
      _ = messages.takeReplies()
    }

    /// The failure of its end, and where it goes, when it ended with `exit` by itself (no
    /// signal was sent to it) with a failing status after tests ran in it, holding none: work
    /// a test left behind ended it, a failure outside every test naming the tests that ended in
    /// it last, as `swift test` is red when such work crashes its process. `nil` for any other end.
    mutating func failureOfItsOwnEnd(_ exit: ProcessEnding) -> (OutsideFailure, EventSink)? {
      guard exit != .exited(0), supervision.stopping == nil, let last = ended.ids.last, let lastSink else { return nil }
      _ = supervision.exited(exit)
      return (.endedBetweenTests("The worker process", "ended with \(exit)", after: ended,
                                 because: "work a test left behind ended it", output: supervision.tail,
                                 suite: last.suiteRun, kind: .crashed), lastSink)
    }

    /// Hands its decoder and supervision to `body`, together.
    mutating func reading<Result>(_ body: (inout WorkerMessages, inout WorkerSupervision) -> Result) -> Result {
      body(&messages, &supervision)
    }
  }
}
