/// What a harness workers' lane is told and what it answers (``WorkerLaneMachine``): its
/// events, its commands, and the facts they carry.
extension WorkerLaneMachine {
  /// Where a lane holds a worker.
  enum Slot: Equatable, CaseIterable {
    /// The worker running tests one at a time.
    case worker
    /// Under `--isolation test`, the worker started for the next test while one runs.
    case spare
    /// The worker running `async` tests side by side.
    case sideBySide
  }

  /// A `run` request sent to the worker running tests one at a time, not answered yet.
  struct Sent: Equatable {
    let id: TestID
    /// Its place among the prepared tests, when it was sent ahead.
    let planIndex: Int?
    /// Its reference on the worker's channel.
    let ref: Int
  }

  /// How an attempt that ran alone ended, for its worker.
  struct EndedAlone {
    /// The worker ended (or no reply came).
    var workerEnded = false
    /// The worker was sent a stop signal.
    var workerStopped = false
    /// The reply said the worker must not run another test (``WorkerRetirement``).
    var workerLeftWork = false
    /// The reply said the worker drops what it was sent until told to resume.
    var paused = false
  }

  /// How a worker of the lane ended.
  struct WorkerEnded: Equatable {
    /// Its exit status or signal.
    var exit: ProcessEnding
    /// It was sent a stop signal (at a deadline, for an interrupt, or past its retirement's
    /// grace period).
    var stopped = false
    /// Tests ran in it.
    var ranTests = true
    /// How many attempts still ran in it.
    var running = 0
  }

  /// What happened in the lane.
  enum Event {
    /// The runner says which tests it hands over next.
    case prepared(Runner.Plan.PlannedTests)
    /// The runner asks for an attempt of a test, run alone.
    case asked(Runner.PlannedTest)
    /// The answer to ``Command/spawn(_:)``: the worker started.
    case spawned(Slot)
    /// The answer to ``Command/spawn(_:)``: the worker could not start, for `reason`.
    case couldNotSpawn(Slot, reason: String)
    /// The answer to an `answered` ``Command/send(_:ref:answered:)``: the worker took it.
    case taken
    /// The answer to an `answered` ``Command/send(_:ref:answered:)``: the worker no longer
    /// reads (it died).
    case refused
    /// The wait for the attempt begun alone is over: it finished so (the worker's reply, or
    /// how the worker's end ended it; `nil` when neither said), and its worker is as `EndedAlone` says.
    case endedAlone(WorkerSupervision.Finished?, EndedAlone)
    /// The runner asks for an attempt of a test, run side by side, its events going to `sink`.
    case askedBeside(Runner.PlannedTest, sink: EventSink)
    /// The lane waits for attempts side by side, `running` of them running.
    case awaitingBeside(running: Int)
    /// The wait for the side-by-side worker found these attempts finished; the worker ended,
    /// was sent a stop signal, must not run another test (`workerLeftWork`), and runs
    /// `running` attempts still.
    case waitedBeside(finished: [WorkerSupervision.Finished], workerEnded: Bool, workerStopped: Bool, workerLeftWork: Bool,
                      running: Int)
    /// The worker in the slot ended so while the lane waited for another.
    case endedUnawaited(Slot, WorkerEnded)
    /// The worker in the slot, retired (``Command/retire(_:)``), ended so.
    case retired(Slot, WorkerEnded)
    /// The run ends; attempts still run side by side when `besideRunning`.
    case finishing(besideRunning: Bool)
  }

  /// What the lane's driver does.
  enum Command {
    /// Start a worker in the slot (answered: ``Event/spawned(_:)`` or
    /// ``Event/couldNotSpawn(_:reason:)``).
    case spawn(Slot)
    /// The spare becomes the worker running tests one at a time.
    case takeSpare
    /// Send the test to the worker running tests one at a time, under `ref`; when `answered`,
    /// say whether it took it (``Event/taken``, ``Event/refused``).
    case send(Runner.PlannedTest, ref: Int, answered: Bool)
    /// Begin the attempt of the test the worker runs next, under `ref` when it was sent; the
    /// driver waits for its end (``Event/endedAlone(_:)``).
    case begin(Runner.PlannedTest, ref: Int?)
    /// Tell the worker running tests one at a time to resume after a failure.
    case resume
    /// Start the test side by side under `ref`, in the side-by-side worker, its events going
    /// to `sink`.
    case start(Runner.PlannedTest, ref: Int, sink: EventSink)
    /// Wait for the side-by-side worker (``Event/waitedBeside(finished:workerEnded:workerLeftWork:running:)``).
    case waitBeside
    /// Send what the attempt held, and the note of how it ended, to its sink; its end is the runner's.
    case deliver(WorkerSupervision.Attempt, AttemptEnd, note: Issue?)
    /// Send these issues to the attempt's sink: it runs again.
    case tell(WorkerSupervision.Attempt, [Issue])
    /// The attempt of the test could not start.
    case couldNotStart(TestID, reason: String)
    /// Stop the worker in the slot at once, and forget it.
    case kill(Slot)
    /// Retire the worker in the slot: tell it to stop and watch it to its exit.
    case retire(Slot)
    /// Forget the worker in the slot: it ended.
    case forget(Slot)
    /// Report a failure outside every test: the worker in the slot ended so by itself after
    /// its tests, for work a test left behind (``WorkerConnection/endedAfterItsTests(_:)``).
    case reportEnd(Slot, ProcessEnding)
  }
}
