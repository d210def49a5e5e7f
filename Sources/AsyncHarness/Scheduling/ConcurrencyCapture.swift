import AsyncHarnessShared
import Foundation
import Synchronization

#if compiler(>=6.3)
@_spi(ExperimentalCustomExecutors) @_spi(ExperimentalScheduling) import _Concurrency
#endif

/// Brings a scheduled test's Swift concurrency jobs (its tasks, actor hops, `@MainActor`
/// work, `Task.yield`, `Task.sleep`) into its ``Scheduler``, as pending items.
///
/// The harness installs its own main and default executors once per process, the first time
/// a scheduled test runs (`_createExecutors(factory:)`, Swift's experimental custom executors,
/// Swift 6.3 and later). They pass every job straight to the platform's executors, except
/// while a test holds the capture (``begin(for:)``): then a job enqueued by the test's
/// own code (its body, or a job the scheduler is running) becomes an item of that test's
/// scheduler, and so does a later job of a task already seen there, even when work from
/// outside resumes it (counted as outside work). Any other job goes to the platform.
///
/// Where the API is missing (an older compiler, an older macOS), ``isAvailable`` is false and
/// Swift concurrency escapes the scheduler, as it did before.
enum ConcurrencyCapture {
  /// The scheduler holding the capture, if any: one test at a time per process.
  private static let holder = Mutex<Scheduler?>(nil)

  /// Whether this toolchain and platform let the harness install its executors.
  static var isAvailable: Bool {
    #if compiler(>=6.3)
    if #available(macOS 26.4, iOS 26.4, watchOS 26.4, tvOS 26.4, visionOS 26.4, *) { return true }
    #endif
    return false
  }

  /// The scheduler whose test holds the capture now.
  static var holderScheduler: Scheduler? { holder.withLock { $0 } }

  /// How many jobs reached Swift's default executor (the cooperative pool) since the
  /// harness's executors were installed, counted by priority class (``PoolPriority``), each
  /// in 16 bits of its own that wrap: a worker's leak check skips probing the pool after a
  /// test that sent it nothing, and probes each priority's pool (on Linux each has threads of
  /// its own) that the test sent jobs to.
  static let poolJobs = Atomic<UInt64>(0)

  /// Counts a job of `priority` sent to the pool.
  static func countPoolJob(priority: UInt8) {
    poolJobs.wrappingAdd(PoolPriority(priority).unit, ordering: .relaxed)
  }

  /// Installs the harness's executors now, so that ``poolJobs`` counts; returns whether it
  /// does (not where the API is missing).
  static func countPoolJobs() -> Bool {
    isAvailable && installExecutors()
  }

  /// Makes `scheduler` hold the capture, and returns `true`, unless the API is missing or
  /// another test of the process holds it (tests running side by side in one process). The
  /// scheduler gives it up with ``release(_:)``.
  static func begin(for scheduler: Scheduler) -> Bool {
    guard isAvailable, installExecutors() else { return false }
    return holder.withLock { holder in
      guard holder == nil else { return false }
      holder = scheduler
      return true
    }
  }

  /// Gives the capture up, if `scheduler` holds it: later jobs go to the platform.
  static func release(_ scheduler: Scheduler) {
    holder.withLock { if $0 === scheduler { $0 = nil } }
  }

  /// Installs the harness's executors, once; returns whether they are installed.
  private static func installExecutors() -> Bool {
    #if compiler(>=6.3)
    if #available(macOS 26.4, iOS 26.4, watchOS 26.4, tvOS 26.4, visionOS 26.4, *) {
      return installed
    }
    #endif
    return false
  }

  #if compiler(>=6.3)
  @available(macOS 26.4, iOS 26.4, watchOS 26.4, tvOS 26.4, visionOS 26.4, *)
  private static let installed: Bool = {
    _createExecutors(factory: HarnessExecutorFactory.self)
    return true
  }()
  #endif
}

#if compiler(>=6.3)
/// The executors the harness installs: the platform's, with a detour into the scheduler of
/// the test holding the capture (``CaptureRoute``); the same executors as those of the library
/// `harness test --explore` preloads into a test bundle (Shared/RoutedExecutors.swift).
@available(macOS 26.4, iOS 26.4, watchOS 26.4, tvOS 26.4, visionOS 26.4, *)
private struct HarnessExecutorFactory: ExecutorFactory {
  static let main = RoutedMainExecutor<CaptureRoute>()
  static let task = RoutedTaskExecutor<CaptureRoute>()
  static var mainExecutor: any MainExecutor { main }
  static var defaultExecutor: any TaskExecutor { task }
}

/// Where the harness's executors send a job: into the scheduler of the test holding the
/// capture when it is the test's, else to the platform's executor. Each job of the default
/// executor is counted (``ConcurrencyCapture/poolJobs``).
@available(macOS 26.4, iOS 26.4, watchOS 26.4, tvOS 26.4, visionOS 26.4, *)
private enum CaptureRoute: JobRoute {
  /// With no test holding the capture (almost always), the job goes straight through.
  static func route(_ job: consuming ExecutorJob, onMainThread: Bool, platform: any Executor) {
    if !onMainThread { ConcurrencyCapture.countPoolJob(priority: job.priority.rawValue) }
    guard let scheduler = ConcurrencyCapture.holderScheduler else { return platform.enqueue(job) }
    let captured = CapturedJob(job)
    let sendBack: @Sendable () -> Void = { platform.enqueue(ExecutorJob(captured.job)) }
    if !captured.offer(to: scheduler, onMainThread: onMainThread, returnToPlatform: sendBack) { sendBack() }
  }

  static func route<C: Clock>(_ job: consuming ExecutorJob, at instant: C.Instant, tolerance: C.Duration?, clock: C,
                              platform: any TaskExecutor) {
    ConcurrencyCapture.countPoolJob(priority: job.priority.rawValue)
    let scheduler = ConcurrencyCapture.holderScheduler
    let captured = CapturedJob(job)
    let sendBack: @Sendable () -> Void = {
      enqueueOnPlatform(ExecutorJob(captured.job), at: instant, tolerance: tolerance, clock: clock, platform: platform)
    }
    guard let scheduler, let delay = delay(until: instant, of: clock, since: scheduler.itemStart),
          captured.offer(to: scheduler, onMainThread: false, due: delay, returnToPlatform: sendBack) else {
      return sendBack()
    }
  }

  /// The delay until `instant` of `clock`, counted from the start of the item running now
  /// (where the sleeping code read the clock), in whole milliseconds: the runtime hands over
  /// an instant of a real clock, so finer digits would differ from run to run. `nil` for a
  /// clock that is not the continuous or the suspending one.
  private static func delay<C: Clock>(until instant: C.Instant, of clock: C, since itemStart: ContinuousClock.Instant?) -> Duration? {
    guard let remaining = remaining(until: instant, of: clock) else { return nil }
    let elapsed = itemStart.map { $0.duration(to: .now) } ?? .zero
    let milliseconds = (remaining + elapsed).components
    let whole = milliseconds.seconds * 1_000 + milliseconds.attoseconds / 1_000_000_000_000_000
    return .milliseconds(max(0, whole))
  }
}

/// A job taken into a scheduler: how it runs, and how it goes back to the platform.
@available(macOS 26.4, iOS 26.4, watchOS 26.4, tvOS 26.4, visionOS 26.4, *)
private struct CapturedJob: Sendable {
  let job: UnownedJob
  /// The id of the job's task, or `nil` for a job that is not a task's (an actor's turn).
  let taskID: UInt64?

  init(_ job: consuming ExecutorJob) {
    self.job = UnownedJob(job)
    taskID = self.job.taskID
  }

  /// Offers the job to `scheduler`, which holds the capture; returns `false` when it is not
  /// the test's, and the caller passes it on.
  func offer(to scheduler: Scheduler, onMainThread: Bool, due delay: Duration? = nil,
             returnToPlatform: @escaping @Sendable () -> Void) -> Bool {
    let job = job
    let taskExecutor = HarnessExecutorFactory.task.asUnownedTaskExecutor()
    let work: @Sendable () -> Void
    if onMainThread {
      let mainExecutor = HarnessExecutorFactory.main.asUnownedSerialExecutor()
      work = { job.runSynchronously(isolatedTo: mainExecutor, taskExecutor: taskExecutor) }
    } else {
      work = { job.runSynchronously(on: taskExecutor) }
    }
    return scheduler.submitJob(task: taskID, onMainThread: onMainThread, delay: delay, work: work,
                               returnToPlatform: returnToPlatform)
  }
}
#endif

/// The priority classes of Swift's cooperative pool, as Dispatch runs them on Linux, each a
/// pool of threads of its own: background, utility (`.low`), default (`.medium`, and jobs of
/// no priority) and user-initiated (`.high`, and above).
enum PoolPriority: Int, CaseIterable, Sendable {
  case background, utility, medium, high

  /// The class of a job's priority (its raw value).
  init(_ priority: UInt8) {
    switch priority {
    case 0: self = .medium
    case ...TaskPriority.background.rawValue: self = .background
    case ...TaskPriority.low.rawValue: self = .utility
    case ...TaskPriority.medium.rawValue: self = .medium
    default: self = .high
    }
  }

  /// A task priority of the class.
  var taskPriority: TaskPriority {
    switch self {
    case .background: .background
    case .utility: .low
    case .medium: .medium
    case .high: .high
    }
  }

  /// One job of the class in ``ConcurrencyCapture/poolJobs``.
  var unit: UInt64 { 1 << (16 * UInt64(rawValue)) }

  /// The classes whose count differs between two readings of ``ConcurrencyCapture/poolJobs``.
  static func sentJobs(between start: UInt64, and end: UInt64) -> [PoolPriority] {
    allCases.filter { (start >> (16 * UInt64($0.rawValue))) & 0xFFFF != (end >> (16 * UInt64($0.rawValue))) & 0xFFFF }
  }

  /// How a message names the class.
  var name: String {
    switch self {
    case .background: "background"
    case .utility: "low"
    case .medium: "medium"
    case .high: "high"
    }
  }
}
