import AsyncHarnessShared
import Dispatch
import Synchronization
import XCTest

/// A job's task, as both schedules tell jobs apart (`UnownedJob.taskID`,
/// Shared/RoutedExecutors.swift): the runtime's id, the very one `ExecutorJob.description`
/// spells (none for a job of no task), one a task.
final class JobTaskIDTests: XCTestCase {
  /// Runs each job on Dispatch, noting what its description says and what `taskID` says.
  private final class NotingExecutor: TaskExecutor {
    let seen = Mutex<[(description: String, taskID: UInt64?)]>([])

    func enqueue(_ job: consuming ExecutorJob) {
      let description = job.description
      let job = UnownedJob(job)
      seen.withLock { $0.append((description, job.taskID)) }
      let executor = asUnownedTaskExecutor()
      DispatchQueue.global().async { job.runSynchronously(on: executor) }
    }
  }

  func testATasksJobsAreKnownByTheIdTheirDescriptionSpells() async {
    let executor = NotingExecutor()
    await Task(executorPreference: executor) { await Task.yield() }.value
    await Task(executorPreference: executor) { await Task.yield() }.value
    let seen = executor.seen.withLock { $0 }
    XCTAssertGreaterThanOrEqual(seen.count, 4, "each task's start and its resumption after the yield")
    // A job of no task (the runtime's own, as an actor's turn) says none, as its description does.
    for job in seen {
      XCTAssertEqual(job.description, "ExecutorJob(id: \(job.taskID.map(String.init) ?? "nil"))")
    }
    XCTAssertEqual(Set(seen.compactMap(\.taskID)).count, 2, "two tasks, two ids: \(seen)")
  }
}
