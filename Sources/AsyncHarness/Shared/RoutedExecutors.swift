// The Swift concurrency executors both schedules install (`_createExecutors`, Swift 6.3),
// compiled into both from this one source: the scheduled strategy's, in the harness's own
// process (Scheduling/ConcurrencyCapture.swift, the module AsyncHarnessShared), and the
// explorer's, in a test bundle under `harness test --explore`
// (ExistingTests/BundleChannel/AsyncHarnessBundleExecutors.swift, embedded as text). Each is
// the platform's executor with every job offered first to a route of the installer's own
// (``JobRoute``): what differs between the two is only where a job goes.
#if compiler(>=6.3)
@_spi(ExperimentalCustomExecutors) @_spi(ExperimentalScheduling) import _Concurrency

/// Where the executors of ``RoutedMainExecutor`` and ``RoutedTaskExecutor`` send each job:
/// into a schedule, or to the platform's executor they hand over.
@available(macOS 26.4, iOS 26.4, watchOS 26.4, tvOS 26.4, visionOS 26.4, *)
package protocol JobRoute {
  /// Takes `job`, enqueued on the main executor (`onMainThread`) or the default one, or
  /// enqueues it on `platform`, the platform's executor of the same kind.
  static func route(_ job: consuming ExecutorJob, onMainThread: Bool, platform: any Executor)
  /// Takes `job`, due at `instant` of `clock` (a sleep), or enqueues it on `platform`, the
  /// platform's default executor (``enqueueOnPlatform(_:at:tolerance:clock:platform:)``).
  static func route<C: Clock>(_ job: consuming ExecutorJob, at instant: C.Instant, tolerance: C.Duration?, clock: C,
                              platform: any TaskExecutor)
}

@available(macOS 26.4, iOS 26.4, watchOS 26.4, tvOS 26.4, visionOS 26.4, *)
extension JobRoute {
  /// Enqueues `job` on `platform`, due at `instant` of `clock` where the platform schedules
  /// jobs, else now.
  package static func enqueueOnPlatform<C: Clock>(_ job: consuming ExecutorJob, at instant: C.Instant, tolerance: C.Duration?,
                                                  clock: C, platform: any TaskExecutor) {
    guard let scheduling = platform as? any SchedulingExecutor else { return platform.enqueue(job) }
    scheduling.enqueue(job, at: instant, tolerance: tolerance, clock: clock)
  }

  /// The time from now until `instant` of `clock`; `nil` for a clock that is neither the
  /// continuous nor the suspending one, whose sleeps a schedule leaves on real time.
  package static func remaining<C: Clock>(until instant: C.Instant, of clock: C) -> Duration? {
    guard C.self == ContinuousClock.self || C.self == SuspendingClock.self else { return nil }
    return clock.now.duration(to: instant) as? Duration
  }
}

/// The default executor: the platform's, each job and sleep offered first to `Route`.
@available(macOS 26.4, iOS 26.4, watchOS 26.4, tvOS 26.4, visionOS 26.4, *)
package final class RoutedTaskExecutor<Route: JobRoute>: TaskExecutor, SchedulingExecutor {
  private let platform = PlatformExecutorFactory.defaultExecutor

  package init() {}

  package func enqueue(_ job: consuming ExecutorJob) {
    Route.route(job, onMainThread: false, platform: platform)
  }

  package func enqueue<C: Clock>(_ job: consuming ExecutorJob, at instant: C.Instant, tolerance: C.Duration?, clock: C) {
    Route.route(job, at: instant, tolerance: tolerance, clock: clock, platform: platform)
  }

  package func enqueue<C: Clock>(_ job: consuming ExecutorJob, after delay: C.Duration, tolerance: C.Duration?, clock: C) {
    enqueue(job, at: clock.now.advanced(by: delay), tolerance: tolerance, clock: clock)
  }
}

/// The main executor: the platform's run loop, each job offered first to `Route`.
@available(macOS 26.4, iOS 26.4, watchOS 26.4, tvOS 26.4, visionOS 26.4, *)
package final class RoutedMainExecutor<Route: JobRoute>: MainExecutor {
  private let platform = PlatformExecutorFactory.mainExecutor

  package init() {}

  package func run() throws { try platform.run() }
  package func stop() { platform.stop() }
  package var isMainExecutor: Bool { true }
  package func checkIsolated() { platform.checkIsolated() }

  package func enqueue(_ job: consuming ExecutorJob) {
    Route.route(job, onMainThread: true, platform: platform)
  }
}
#endif

/// The runtime's entry point behind `ExecutorJob.description`'s `id`: the id of a job's task,
/// 0 for a job of no task. The runtime exports it (`description` calls it), and no public API
/// answers it: `ExecutorJob` says its task's id only in its description's text.
@_silgen_name("swift_task_getJobTaskId")
private func jobTaskID(_ job: UnownedJob) -> UInt64

@available(macOS 14.0, iOS 17.0, watchOS 10.0, tvOS 17.0, *)
extension UnownedJob {
  /// The runtime's id of the job's task, never reused in a process; `nil` for a job of no
  /// task (an actor's turn, a job of the runtime's own).
  package var taskID: UInt64? {
    let id = jobTaskID(self)
    return id == 0 ? nil : id
  }
}
