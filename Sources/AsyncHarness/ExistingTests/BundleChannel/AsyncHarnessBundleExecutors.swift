// The Swift concurrency executors the library `harness test` preloads installs under a
// schedule (the harness's own, Shared/RoutedExecutors.swift, routed to the schedule), the
// runtime's hooks a test may install instead, and the threads the schedule runs on (see
// AsyncHarnessBundleExplorer.swift).
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

/// The executors the runtime uses once the schedule is installed: those the harness's own
/// scheduled strategy installs too (Shared/RoutedExecutors.swift), routed to the schedule.
struct ExplorerExecutors: ExecutorFactory {
  static let main = RoutedMainExecutor<ExplorerRoute>()
  static let task = RoutedTaskExecutor<ExplorerRoute>()
  static var mainExecutor: any MainExecutor { main }
  static var defaultExecutor: any TaskExecutor { task }
}

/// Every job and every sleep on the continuous and suspending clocks goes to the schedule
/// (a `@MainActor` job to run on the main thread); another clock's sleep stays on real time,
/// in the platform's executor.
enum ExplorerRoute: JobRoute {
  static func route(_ job: consuming ExecutorJob, onMainThread: Bool, platform: any Executor) {
    let job = UnownedJob(job)
    BundleExplorer.scheduler?.submit(job, task: job.taskID, onMainThread: onMainThread)
  }

  static func route<C: Clock>(_ job: consuming ExecutorJob, at instant: C.Instant, tolerance: C.Duration?, clock: C,
                              platform: any TaskExecutor) {
    guard let remaining = remaining(until: instant, of: clock) else {
      return enqueueOnPlatform(job, at: instant, tolerance: tolerance, clock: clock, platform: platform)
    }
    let parts = remaining.components
    let job = UnownedJob(job)
    BundleExplorer.scheduler?.submit(job, task: job.taskID, onMainThread: false,
                                     delay: max(0, parts.seconds * 1_000_000_000 + parts.attoseconds / 1_000_000_000))
  }
}
#endif
