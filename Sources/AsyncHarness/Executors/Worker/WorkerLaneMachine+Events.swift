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

  /// What happened in the lane.
  enum Event {
    /// The runner says which tests it hands over next.
    case prepared(Runner.Plan.PlannedTests)
    /// The runner asks for an attempt of a test, run alone, its events streamed to `sink`.
    case asked(Runner.PlannedTest, sink: EventSink)
    /// The answer to ``Command/spawn(_:)``: the worker started.
    case spawned(Slot)
    /// The answer to ``Command/spawn(_:)``: the worker could not start, for `reason`.
    case couldNotSpawn(Slot, reason: String)
    /// The answer to an `answered` ``Command/send(_:ref:answered:)``: the worker took it.
    case taken
    /// The answer to an `answered` ``Command/send(_:ref:answered:)``: the worker no longer
    /// reads (it died).
    case refused
    /// The wait for the worker in the slot is over (the answer to ``Command/begin(_:ref:)``
    /// and ``Command/waitBeside``, and told while a worker retires, ``Command/retire(_:)``):
    /// what the lane's loop read of it is in its ``WorkerState``; it `exit`ed so, when it did,
    /// a process it left still holding its output when `outputHeld`.
    case waited(Slot, exit: ProcessEnding?, outputHeld: Bool)
    /// The runner asks for an attempt of a test, run side by side, its events going to `sink`.
    case askedBeside(Runner.PlannedTest, sink: EventSink)
    /// The lane waits for attempts side by side.
    case awaitingBeside
    /// The worker in the slot exited so while the lane waited for another.
    case endedUnawaited(Slot, ProcessEnding)
    /// Time passed to `now` for the worker in the slot (the lane's loop says so at each
    /// pass), and the run was interrupted by `interrupt` when it was.
    case timePassed(Slot, to: ContinuousClock.Instant, interrupt: Int32?)
    /// The run ends.
    case finishing
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
    /// The attempt of the test the worker runs next began, under `ref` when it was sent: wait
    /// for that worker (answered: ``Event/waited(_:exit:outputHeld:)``).
    case begin(Runner.PlannedTest, ref: Int?)
    /// Tell the worker running tests one at a time to resume after a failure.
    case resume
    /// Send the test to the side-by-side worker, to start side by side under `ref`.
    case start(Runner.PlannedTest, ref: Int)
    /// Wait for the side-by-side worker (answered: ``Event/waited(_:exit:outputHeld:)``).
    case waitBeside
    /// Send what the attempt held, and the note of how it ended, to its sink; its end is the runner's.
    case deliver(WorkerSupervision.Attempt, AttemptEnd, note: Issue?)
    /// Send these issues to the attempt's sink: it runs again.
    case tell(WorkerSupervision.Attempt, [Issue])
    /// The attempt of the test could not start.
    case couldNotStart(TestID, reason: String)
    /// Stop the worker in the slot at once, and forget it.
    case kill(Slot)
    /// Retire the worker in the slot: tell it to stop and watch it to its exit, telling each
    /// wait's end (``Event/waited(_:exit:outputHeld:)``) until the one that saw it exit.
    case retire(Slot)
    /// Forget the worker in the slot: it ended.
    case forget(Slot)
    /// Send a failure outside every test (``WorkerState/failureOfItsOwnEnd(_:)``) to the sink.
    case report(OutsideFailure, to: EventSink)
    /// Send the signal to the process group of the worker in the slot: its deadline passed,
    /// or the run was interrupted (``WorkerSupervision/signals(at:interrupt:)``).
    case signal(Slot, Int32)
  }
}
