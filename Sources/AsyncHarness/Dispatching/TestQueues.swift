import Dispatch

/// The queues and the clock one test hands to the code under test: `t.main`,
/// `t.background`, the queues made with `t.queue("label")`, and `t.clock`.
///
/// A waiter strategy supplies them (``Waiter/makeQueues(for:)``): real dispatch queues
/// and the continuous clock by default (``RealQueues``), queues that run work inline under
/// the synchronous strategy (``InlineQueues``), and queues whose work the scheduled
/// strategy runs itself, in a seeded order and on virtual time (``ScheduledQueues``).
public protocol TestQueues: Sendable {
  /// The queue standing for the main queue (`t.main`).
  var main: any Dispatching { get }
  /// Makes a serial queue labelled `label`; `t.background` is the one labelled
  /// `background`. Each call makes a distinct queue, even with the same label.
  func makeQueue(label: String) -> any Dispatching
  /// The clock the code under test should sleep on and read time from (`t.clock`).
  var clock: any Clock<Duration> { get }
}

/// What a strategy is given to make one test's queues: the test, the schedule it runs
/// under, the jitter of its real queues, and where the queues record what they detect (a
/// dispatch cycle).
public struct QueueSetup: Sendable {
  /// The test the queues are for.
  public let test: TestID
  /// The schedule chosen for this run of the test (`--explore`, `--schedule`), for a
  /// strategy that orders work itself; `nil` leaves the strategy's own default.
  public let schedule: Schedule?
  /// The delays real queues add to each item (`--jitter`), for a strategy whose tests get
  /// real queues (``RealQueues`` applies them); `nil` for none.
  public let jitter: Jitter?
  let record: TestRecord?
  /// Whether a strategy that orders work itself reports each step it takes (`scheduleStep`,
  /// ``Configuration/reportsWaits``).
  let reportsSteps: Bool

  /// A setup for queues that belong to no test (a strategy author's own tests): their
  /// issues go to the test running at that moment.
  /// - Parameters:
  ///   - test: the test the queues are for.
  ///   - schedule: the schedule, for a strategy that orders work itself.
  ///   - jitter: the delays real queues add to each item.
  public init(test: TestID, schedule: Schedule? = nil, jitter: Jitter? = nil) {
    self.init(test: test, schedule: schedule, jitter: jitter, record: nil, reportsSteps: false)
  }

  init(test: TestID, schedule: Schedule?, jitter: Jitter?, record: TestRecord?, reportsSteps: Bool) {
    self.test = test
    self.schedule = schedule
    self.jitter = jitter
    self.record = record
    self.reportsSteps = reportsSteps
  }

  /// Where queues made for this test record the issues they detect.
  var issues: IssueSink { IssueSink(record: record) }

  /// Runs `work` when the test ends (after its body and teardown, before it is reported).
  /// A setup that belongs to no test drops it.
  public func whenTestEnds(_ work: @escaping @Sendable () -> Void) {
    record?.addCleanup(work)
  }
}

/// Real queues: `t.main` is `DispatchQueue.main`, every other queue a serial
/// `DispatchQueue` made for the test; the clock is the continuous clock. The default of
/// every strategy that does not order work itself. With a jitter in the setup
/// (`--jitter`), each queue delays its items a little (``Jitter``).
public struct RealQueues: TestQueues {
  /// The queue that stands for the main queue (`t.main`).
  public let main: any Dispatching
  private let setup: QueueSetup
  private let jitter: JitterSource?

  /// The real queues of the test `setup` names.
  public init(for setup: QueueSetup) {
    self.setup = setup
    jitter = setup.jitter?.delays(for: setup.test)
    main = AsyncQueue(.main, identity: .main, issues: setup.issues, jitter: jitter.map { JitteredDelivery($0.nextQueue()) })
  }

  /// Makes a queue for the test, named `label` (as `t.queue("io")` does).
  /// - Parameter label: The queue's name in messages.
  /// - Returns: The queue.
  public func makeQueue(label: String) -> any Dispatching {
    AsyncQueue(DispatchQueue(label: "AsyncHarness.\(setup.test.name).\(label)"),
               identity: QueueIdentity(label: label), issues: setup.issues,
               jitter: jitter.map { JitteredDelivery($0.nextQueue()) })
  }

  /// The clock the test hands to code that sleeps or reads time.
  public var clock: any Clock<Duration> { ContinuousClock() }
}

/// Inline queues (``SyncQueue``): work runs at once on the caller's thread, so a test is
/// plain Arrange, Act, Assert. Delayed work (``Dispatching/asyncAfter(_:_:)``) still waits
/// in real time, then runs inline; the clock is the continuous clock.
public struct InlineQueues: TestQueues {
  /// The queue that stands for the main queue (`t.main`).
  public let main: any Dispatching
  private let setup: QueueSetup

  /// The inline queues of the test `setup` names.
  public init(for setup: QueueSetup) {
    self.setup = setup
    main = SyncQueue(identity: .main, issues: setup.issues)
  }

  /// Makes a queue for the test, named `label` (as `t.queue("io")` does).
  /// - Parameter label: The queue's name in messages.
  /// - Returns: The queue.
  public func makeQueue(label: String) -> any Dispatching {
    SyncQueue(identity: QueueIdentity(label: label), issues: setup.issues)
  }

  /// The clock the test hands to code that sleeps or reads time.
  public var clock: any Clock<Duration> { ContinuousClock() }
}
