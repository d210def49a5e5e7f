/// What follows an attempt of a test, for the test and for the worker that ran it: the one
/// policy behind every such decision of a run, a pure function of plain facts
/// (``init(after:)``), so that each rule is tried directly, without processes.
///
/// - **The test.** A judged attempt that failed runs again as the test's next attempt (a
///   retry) while a retry is left and no stop was requested; otherwise it is the test's last.
///   An attempt still running when its worker ended (``Facts/cutShort``) ends with the
///   worker's end when it was the one the worker was stopped for or named as crashing it,
///   when the run was interrupted, or when it ran alone and nothing stopped the worker; the
///   others run again, their run counted for nothing: side by side at once without the test
///   that ended the worker when that test is known, else in halves; in a test bundle, always
///   alone. A test bundle's crash after other tests ended in it is no evidence against the
///   tests running then: each runs again alone.
/// - **An attempt past its deadline** (a hang outside any wait, which only stopping its
///   process ends) stops its worker, and every attempt running there ends with it or runs
///   again, unless it ran side by side in a harness worker beside attempts still within their
///   time limits: then the hang is told apart from them. It ends at once, left running, and
///   the others go on; the worker starts no other test and is retired once they ended
///   (``PastDeadline``).
/// - **The worker.** One that ended is replaced: the next test starts a fresh one. One that
///   was sent a stop signal is never reused, nor one that said it must not run another test
///   (work a test left behind), one that ran the schedule it was started with, or any under
///   `--isolation test`: each is retired. Any other runs the next test.
struct AttemptFollowUp: Equatable {
  /// What follows for the attempt's test.
  enum Test: Equatable {
    /// The attempt ends as it ended. A judged one is its test's last; one its worker cut short
    /// ends with the worker's end, and is judged next.
    case done
    /// The attempt was judged a failure, a retry is left and no stop was requested: the
    /// test's next attempt runs.
    case retry
    /// The worker ended while the attempt ran, and not for it: its run counts for nothing, and
    /// it runs again so.
    case runAgain(Company)
  }

  /// Beside what an attempt runs again.
  enum Company: Equatable {
    /// Alone, in a worker that runs one test at a time (a test bundle's).
    case alone
    /// Side by side at once, beside the others that run again: the test that ended the worker
    /// is known, and is not among them.
    case besideOthers
    /// In halves of the tests the worker's end named none of, each half side by side with
    /// nothing else; a half the worker ends in again is halved again.
    case inHalves
  }

  /// What follows for the worker that ran the attempt.
  enum Worker: Equatable {
    /// It runs the next test.
    case keep
    /// It runs no other test: its executor ends it once the tests it runs ended, and the next
    /// test starts a fresh one.
    case retire
    /// It ended: the next test starts a fresh one.
    case replace
  }

  /// What is done when attempts running in a worker passed their deadline.
  enum PastDeadline: Equatable {
    /// The worker is stopped (SIGTERM, then SIGKILL after the grace period); each attempt
    /// running in it ends with it or runs again (``Test``).
    case stopWorker
    /// The attempts past their deadline end now, left running in the worker, which starts no
    /// other attempt and is retired once the attempts beside them ended.
    case leaveRunning
  }

  /// What is done when attempts run past their deadline in a worker of `kind`: `sideBySide`
  /// when they run beside others whose events are held until they end, `othersOnTime` when
  /// some attempt running there is still within its time limit.
  static func pastDeadline(in kind: WorkerKind, sideBySide: Bool, othersOnTime: Bool) -> PastDeadline {
    kind == .harness && sideBySide && othersOnTime ? .leaveRunning : .stopWorker
  }

  /// What kind of worker process ran the attempt.
  enum WorkerKind: Equatable {
    /// The suites executable started again as a worker, which checks each test it runs alone
    /// for work left behind, and runs tests side by side when asked to.
    case harness
    /// An invocation of another package's test bundle, which runs a list of tests and checks
    /// none of them for work left behind.
    case testBundle
  }

  /// Which attempts a worker's stop, or its crash, names.
  enum Naming: Equatable {
    case nobody
    /// Only attempts other than the one decided for.
    case others
    /// The attempt decided for (others too, maybe).
    case this
  }

  /// How the worker ended while the attempt still ran.
  struct CutShort: Equatable {
    /// Whether the worker was stopped because the run was interrupted.
    var interrupted = false
    /// Whether the attempt was the only one running in the worker.
    var alone = true
    /// The attempts past their deadline the worker was stopped for.
    var stoppedFor = Naming.nobody
    /// The attempts the worker named as crashing it (a harness worker's `crashing` reply).
    var namedCrashing = Naming.nobody
    /// Whether other tests had ended in the worker before it ended.
    var testsEndedBefore = false
  }

  /// What is known of an attempt as it ends: each place that asks states what it knows, the
  /// rest keep their defaults.
  struct Facts: Equatable {
    /// Whether the attempt was judged a failure.
    var failed = false
    /// Whether its test has a retry left.
    var retryLeft = false
    /// Whether a stop of the run was requested (SIGINT, SIGTERM).
    var stopRequested = false
    /// What kind of worker ran it.
    var workerKind = WorkerKind.harness
    /// How its worker ended while it still ran; `nil` when it ended first.
    var cutShort: CutShort?
    /// Whether the worker ended (it is cut short too when ``cutShort`` says how).
    var workerEnded = false
    /// Whether the worker was sent a stop signal (at a deadline, or for an interrupt), or was
    /// seen to exit while what it wrote is still read: it takes no other attempt.
    var workerStopped = false
    /// Whether the worker must not run another test: it said so (``WorkerRetirement``), or a
    /// test left processes running in it.
    var workerLeftWork = false
    /// Whether the worker ran the schedule it was started with (one schedule, one test).
    var workerRanSchedule = false
    /// Whether each test runs in a fresh worker (`--isolation test`).
    var freshWorkerPerTest = false
  }

  /// What follows for the test.
  let test: Test
  /// What follows for the worker.
  let worker: Worker

  /// What follows an attempt of which `facts` are known (see the type's description).
  init(after facts: Facts) {
    test = facts.cutShort.map { Self.test(cutShort: $0, in: facts.workerKind) }
      ?? (facts.failed && facts.retryLeft && !facts.stopRequested ? .retry : .done)
    if facts.workerEnded || facts.cutShort != nil {
      worker = .replace
    } else if facts.workerStopped || facts.workerLeftWork || facts.workerRanSchedule || facts.freshWorkerPerTest {
      worker = .retire
    } else {
      worker = .keep
    }
  }

  /// What follows for an attempt its worker, of `kind`, ended as `cutShort` says.
  private static func test(cutShort: CutShort, in kind: WorkerKind) -> Test {
    if cutShort.interrupted { return .done }
    if kind == .testBundle && cutShort.stoppedFor == .nobody && cutShort.testsEndedBefore {
      // Work the tests before it left behind may be what crashed the bundle.
      return .runAgain(.alone)
    }
    if cutShort.stoppedFor == .this || cutShort.namedCrashing == .this { return .done }
    // Alone, only a stop for others that ended meanwhile is not its own end.
    if cutShort.alone && cutShort.stoppedFor == .nobody { return .done }
    if kind == .testBundle { return .runAgain(.alone) }
    return .runAgain(cutShort.stoppedFor == .others || cutShort.namedCrashing == .others ? .besideOthers : .inHalves)
  }
}
