// The Swift concurrency executors the library `harness test` preloads installs under a
// schedule, the runtime's hooks a test may install instead, and the threads the schedule
// runs on (see AsyncHarnessBundleExplorer.swift).
#if os(Linux) && compiler(>=6.3)
@_spi(ExperimentalCustomExecutors) @_spi(ExperimentalScheduling) import _Concurrency
import Dispatch
import Glibc

/// The runtime's hooks a test installs to run Swift concurrency its own way
/// (`swift_task_enqueueGlobal_hook`, as `withMainSerialExecutor` of swift-concurrency-extras
/// does): a test that installed one asks for its own order, which the schedule then leaves it.
enum ExecutorHooks {
  private static let names: [String] = ["swift_task_enqueueGlobal_hook", "swift_task_enqueueGlobalWithDelay_hook",
                                         "swift_task_enqueueGlobalWithDeadline_hook", "swift_task_enqueueMainExecutor_hook"]
  /// The addresses of the hooks' variables.
  private static let hooks: [UInt] = names.compactMap { name in
    dlsym(UnsafeMutableRawPointer(bitPattern: 0), name).map { UInt(bitPattern: $0) }
  }

  /// Whether one of the hooks is installed now.
  static var installed: Bool {
    hooks.contains { UnsafeRawPointer(bitPattern: $0)?.load(as: UnsafeRawPointer?.self) != nil }
  }
}

/// A mark a thread sets on itself.
final class ThreadMark: Sendable {
  private let key: pthread_key_t

  init() {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    self.key = key
  }

  var isSet: Bool { pthread_getspecific(key) != nil }
  func set() { pthread_setspecific(key, UnsafeRawPointer(bitPattern: 1)) }

  /// Runs `body` with the mark set on this thread, then leaves it as it was (set still on a
  /// thread that had it: the scheduler's, which runs blocks itself).
  func whileSet(_ body: () -> Void) {
    let wasSet = isSet
    set()
    body()
    if !wasSet { pthread_setspecific(key, nil) }
  }
}

/// A detached thread running a closure.
enum ExplorerThread {
  private final class Body {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
  }

  static func start(_ run: @escaping @Sendable () -> Void) {
    var thread = pthread_t()
    let body = Unmanaged.passRetained(Body(run)).toOpaque()
    pthread_create(&thread, nil, { raw in
      Unmanaged<Body>.fromOpaque(raw!).takeRetainedValue().run()
      return nil
    }, body)
    pthread_detach(thread)
  }
}

/// The executors the runtime uses once the schedule is installed.
struct ExplorerExecutors: ExecutorFactory {
  static let main = ExplorerMainExecutor()
  static let task = ExplorerTaskExecutor()
  static var mainExecutor: any MainExecutor { main }
  static var defaultExecutor: any TaskExecutor { task }
}

/// The default executor: every job and sleep goes to the schedule.
final class ExplorerTaskExecutor: TaskExecutor, SchedulingExecutor {
  private let platform = PlatformExecutorFactory.defaultExecutor

  func enqueue(_ job: consuming ExecutorJob) {
    let task = ExplorerScheduler.task(of: job)
    BundleExplorer.scheduler?.submit(UnownedJob(job), task: task, onMainThread: false)
  }

  func enqueue<C: Clock>(_ job: consuming ExecutorJob, at instant: C.Instant, tolerance: C.Duration?, clock: C) {
    guard let delay = ExplorerScheduler.delay(until: instant, of: clock) else {
      // Another clock's sleep stays on real time, in the platform's executor.
      if let scheduling = platform as? any SchedulingExecutor {
        return scheduling.enqueue(job, at: instant, tolerance: tolerance, clock: clock)
      }
      return platform.enqueue(job)
    }
    let task = ExplorerScheduler.task(of: job)
    BundleExplorer.scheduler?.submit(UnownedJob(job), task: task, onMainThread: false, delay: delay)
  }

  func enqueue<C: Clock>(_ job: consuming ExecutorJob, after delay: C.Duration, tolerance: C.Duration?, clock: C) {
    enqueue(job, at: clock.now.advanced(by: delay), tolerance: tolerance, clock: clock)
  }
}

/// The main executor: the platform's run loop, with `@MainActor` jobs going to the schedule,
/// which runs each on the main thread.
final class ExplorerMainExecutor: MainExecutor {
  private let platform = PlatformExecutorFactory.mainExecutor

  func run() throws { try platform.run() }
  func stop() { platform.stop() }
  var isMainExecutor: Bool { true }
  func checkIsolated() { platform.checkIsolated() }

  func enqueue(_ job: consuming ExecutorJob) {
    let task = ExplorerScheduler.task(of: job)
    BundleExplorer.scheduler?.submit(UnownedJob(job), task: task, onMainThread: true)
  }
}
#endif
