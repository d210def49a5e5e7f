import Dispatch
import Foundation
import Synchronization
import Testing
import XCTest

// Correct tests that wait on real work the schedule does not run (a Dispatch timer, a thread
// reading a file, a queue fulfilling an expectation, a child process's exit, a DispatchIO read
// of a pipe), that check how long a sleep took, or that install their own executor hook and
// check the order it gives. Each passes under
// `swift test`, and must pass in every order `harness test --explore` tries.

/// Reads `path` on a thread of its own and hands back how many bytes it holds.
func countBytesOnAThread(of path: String) async -> Int {
  await withCheckedContinuation { continuation in
    let thread = Thread {
      continuation.resume(returning: FileManager.default.contents(atPath: path)?.count ?? 0)
    }
    thread.start()
  }
}

/// A value handed back by a Dispatch timer `seconds` from now.
func answerFromADispatchTimer(after seconds: Double) async -> String {
  await withCheckedContinuation { continuation in
    DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { continuation.resume(returning: "ready") }
  }
}

/// The exit status of a child process that sleeps `seconds`, waited for on a thread of its own
/// as swift-subprocess waits for its children: polling the child's pidfd with no timeout, so
/// that only the child's exit, from outside the process, ends the wait.
func exitOfAChildWatchedThroughItsPidfd(sleeping seconds: String) async -> Int32 {
  typealias PidfdOpen = @convention(c) (pid_t, UInt32) -> Int32
  guard let open = dlsym(dlopen(nil, RTLD_NOW), "pidfd_open").map({ unsafeBitCast($0, to: PidfdOpen.self) }) else {
    return -2
  }
  var pid: pid_t = 0
  var argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sleep"), strdup(seconds), nil]
  defer { argv.forEach { free($0) } }
  guard posix_spawn(&pid, "/bin/sleep", nil, nil, &argv, environ) == 0 else { return -1 }
  let child = pid
  let pidfd = open(child, 0)
  return await withCheckedContinuation { continuation in
    let thread = Thread {
      var watched = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
      _ = poll(&watched, 1, -1)
      var status: Int32 = 0
      _ = waitpid(child, &status, 0)
      close(pidfd)
      continuation.resume(returning: status)
    }
    thread.start()
  }
}

/// The lines a thread writes to a pipe, read through DispatchIO: Dispatch's own queues carry
/// the read (DispatchIO sends blocks to them with `dispatch_async`, as a test would), and the
/// handler runs on a queue of the caller's once the thread closed the pipe.
func linesReadThroughDispatchIO(_ done: @escaping @Sendable (Int) -> Void) {
  var descriptors: [Int32] = [0, 0]
  _ = pipe(&descriptors)
  let (reader, writer) = (descriptors[0], descriptors[1])
  let channel = DispatchIO(type: .stream, fileDescriptor: reader, queue: .global()) { _ in close(reader) }
  let read = Mutex(0)
  channel.read(offset: 0, length: Int.max, queue: DispatchQueue(label: "lines.read")) { finished, data, _ in
    read.withLock { $0 += data?.filter { $0 == UInt8(ascii: "\n") }.count ?? 0 }
    guard finished else { return }
    channel.close()
    done(read.withLock { $0 })
  }
  Thread {
    for line in 0..<5 {
      _ = "line \(line)\n".withCString { write(writer, $0, strlen($0)) }
      usleep(10_000)  // deliberate: the lines come apart, each a read of its own
    }
    close(writer)
  }.start()
}

final class RealWorkXCTests: XCTestCase {
  func testADispatchIOReadIsAwaited() async {
    let read = expectation(description: "read")
    linesReadThroughDispatchIO { lines in
      XCTAssertEqual(lines, 5)
      read.fulfill()
    }
    await fulfillment(of: [read], timeout: 10)
  }

  func testADispatchIOReadIsWaitedFor() {
    let read = expectation(description: "read")
    linesReadThroughDispatchIO { lines in
      XCTAssertEqual(lines, 5)
      read.fulfill()
    }
    wait(for: [read], timeout: 10)
  }

  func testAnExpectationFulfilledByADispatchTimerIsAwaited() async {
    let loaded = expectation(description: "loaded")
    DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) { loaded.fulfill() }
    await fulfillment(of: [loaded], timeout: 5)
  }

  func testAFileReadOnAThreadIsAwaited() async {
    let bytes = await countBytesOnAThread(of: #filePath)
    XCTAssertGreaterThan(bytes, 0)
  }

  /// A synchronous body that looks at a value until a deadline on the clock, running the main
  /// run loop between its looks, as Nimble's `toAlways` and `toEventually` do in a synchronous
  /// test, while a block it sent to the main queue for later changes the value. Its looks keep
  /// the main thread busy: it never sleeps in the run loop.
  func testASynchronousBodyPollingTheMainRunLoopIsGivenItsTime() {
    let value = Atomic(1)
    DispatchQueue.main.asyncAfter(deadline: .now() + 0.1) { value.store(2, ordering: .relaxed) }
    let deadline = Date().addingTimeInterval(1)
    while Date() < deadline {
      XCTAssertGreaterThan(value.load(ordering: .relaxed), 0)
      RunLoop.main.run(until: Date())
    }
    XCTAssertEqual(value.load(ordering: .relaxed), 2)
  }

  func testASleepTakesTheTimeItSays() async throws {
    let start = ContinuousClock.now
    let date = Date()
    try await Task.sleep(for: .milliseconds(300))  // deliberate: the sleep whose length the test checks
    XCTAssertGreaterThanOrEqual(ContinuousClock.now - start, .milliseconds(300))
    XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(date), 0.3)
  }
}

@Suite struct RealWorkTests {
  @Test func aDispatchIOReadIsAwaited() async {
    #expect(await withCheckedContinuation { continuation in linesReadThroughDispatchIO { continuation.resume(returning: $0) } } == 5)
  }

  @Test func anAnswerFromADispatchTimerIsAwaited() async {
    #expect(await answerFromADispatchTimer(after: 0.4) == "ready")
  }

  @Test func aChildProcessExitIsAwaited() async {
    #expect(await exitOfAChildWatchedThroughItsPidfd(sleeping: "0.5") == 0)
  }

  @Test func aSleepTakesTheTimeItSays() async throws {
    let start = SuspendingClock.now
    let uptime = DispatchTime.now()
    try await Task.sleep(for: .milliseconds(300))  // deliberate: the sleep whose length the test checks
    #expect(SuspendingClock.now - start >= .milliseconds(300))
    #expect(DispatchTime.now().uptimeNanoseconds - uptime.uptimeNanoseconds >= 300_000_000)
  }
}

/// Runs `body` with every job of the global executor sent to the main actor, in the order sent,
/// as swift-concurrency-extras' `withMainSerialExecutor` does (through the runtime's hook).
func withMainSerialExecutor(_ body: () async -> Void) async {
  typealias Original = @convention(thin) (UnownedJob) -> Void
  typealias Hook = @convention(thin) (UnownedJob, Original) -> Void
  let hook = dlsym(dlopen(nil, 0), "swift_task_enqueueGlobal_hook")!.assumingMemoryBound(to: Hook?.self)
  hook.pointee = { job, _ in MainActor.shared.enqueue(job) }
  defer { hook.pointee = nil }
  await body()
}

/// The order tasks ran in.
final class RunOrder: Sendable {
  private let ran = Mutex<[Int]>([])
  func append(_ index: Int) { ran.withLock { $0.append(index) } }
  var order: [Int] { ran.withLock { $0 } }
}

@Suite struct OwnExecutorHookTests {
  /// Detached tasks run in the order they were made: the order the test's own hook gives.
  @Test func detachedTasksRunInTheOrderTheHookGives() async {
    let order = RunOrder()
    await withMainSerialExecutor {
      let tasks = (1...4).map { index in Task.detached { order.append(index) } }
      for task in tasks { await task.value }
    }
    #expect(order.order == [1, 2, 3, 4])
  }
}
