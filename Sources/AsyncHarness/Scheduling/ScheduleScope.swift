import Foundation

/// The scheduled strategy's scope around one test: on the main thread, where main-actor
/// jobs can run, the test's `async` code runs as a task of its schedule, driven by a
/// ``ScheduleDriver`` that holds the process's capture of Swift concurrency; elsewhere, or
/// where the capture cannot be taken, it declines and the code runs on Swift's own
/// executors as outside work. Whatever ran, the schedule's trace says what steps the test took.
struct ScheduleScope: WaiterScope {
  let scheduler: Scheduler
  /// The driver of the test's `async` code; `nil` off the main thread.
  let driver: ScheduleDriver?

  init(scheduler: Scheduler, quietPeriod: Duration) {
    self.scheduler = scheduler
    driver = Thread.isMainThread ? ScheduleDriver(scheduler: scheduler, quietPeriod: quietPeriod) : nil
  }

  func runAsyncCode(until deadline: ContinuousClock.Instant, finished: WaitCondition,
                    start: @escaping @Sendable () -> Void) -> AsyncCodeRun {
    guard let driver, ConcurrencyCapture.begin(for: scheduler) else { return .declined }
    let drive = driver.run(until: deadline, finished: finished, start: start)
    scheduler.returnLeftoverJobs()
    guard case .stuck(let virtualTime) = drive else { return .ran }
    return .stuck(Issue(kind: .deadlock, message: Self.stuckMessage(at: virtualTime, quietPeriod: driver.quietPeriod),
                        sourceLocation: finished.sourceLocation))
  }

  var trace: ScheduleTrace? { scheduler.trace }

  /// What a test says when its scheduled `async` code is suspended on what nothing can resume.
  static func stuckMessage(at virtualTime: Duration, quietPeriod: Duration) -> String {
    "The async code is suspended and nothing can resume it: no job of the schedule is runnable or due, no harness wait is pending, and no work arrived from outside the schedule in a quiet period of \(quietPeriod.secondsDescription) seconds; it awaits something nobody will do (a continuation never resumed, a stream never finished, a task that is never cancelled); stopped at \(virtualTime.secondsDescription) seconds of virtual time"
  }
}
