import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The tests a worker runs side by side (``WorkerRequest/start(_:)``): each `async` test in a
/// task of its own, whose task-locals carry the test's record, so its issues, waits and
/// expectations stay its own. Meanwhile the main thread turns its run loop (the tests'
/// `@MainActor` code and main-queue work run there) and reads the next requests; each test's
/// reply is sent when it ends, in whichever order they end.
final class SideBySideTests: Sendable {
  private let channel: WorkerChannel
  private let running = Atomic<Int>(0)
  /// Wakes the main thread's run loop when a request can be read.
  private let readable: ChannelReadiness

  init(channel: WorkerChannel) {
    self.channel = channel
    readable = ChannelReadiness(descriptor: channel.descriptor)
  }

  /// Whether a test started side by side has not ended.
  var areRunning: Bool { running.load(ordering: .acquiring) > 0 }

  /// Starts `test` (the test `ref`) in a task of its own; its reply is sent when it ends.
  func start(_ planned: Runner.PlannedTest, ref: Int, executor: InProcessExecutor) {
    running.add(1, ordering: .acquiringAndReleasing)
    channel.testStarts()
    Task { [self] in
      let (end, exceededTimeLimit) = await CrashNotice.$current.withValue(CrashNotice(ref: ref)) {
        await executor.attemptSideBySide(planned, events: EventSink { [channel] in channel.send($0, ref: ref) })
      }
      let duration = if case .returned(let duration, _) = end { duration } else { 0.0 }
      channel.send(.returned(planned.id, duration: duration, trace: nil, paused: false,
                             retire: exceededTimeLimit ? .exceededTimeLimit : nil))
      running.subtract(1, ordering: .acquiringAndReleasing)
      DispatchQueue.main.async {}  // the main thread sees that it ended
    }
  }

  /// Turns the main run loop until a request can be read on the channel or no test runs side
  /// by side; returns whether one can be read.
  func awaitRequest() -> Bool {
    while areRunning {
      readable.arm()
      var descriptor = pollfd(fd: channel.descriptor, events: Int16(POLLIN), revents: 0)
      if poll(&descriptor, 1, 0) > 0 { return true }
      _ = RunLoop.main.run(mode: .default, before: .distantFuture)
    }
    return false
  }

  /// Turns the main run loop until every test started side by side ended: a test that blocks
  /// runs alone.
  func awaitNoneRunning() {
    while areRunning { _ = RunLoop.main.run(mode: .default, before: .distantFuture) }
  }
}

/// Wakes the main thread's run loop (an empty main-queue block) once the channel can be read,
/// after each ``arm()``: a read source that disarms itself as it fires.
private final class ChannelReadiness: Sendable {
  private let source: SendableBox<any DispatchSourceRead>
  private let armed = Mutex(false)

  init(descriptor: Int32) {
    let source = SendableBox(DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: .global()))
    self.source = source
    source.value.setEventHandler { [self] in
      armed.withLock { armed in
        if armed { self.source.value.suspend() }
        armed = false
      }
      DispatchQueue.main.async {}
    }
    source.value.activate()
    source.value.suspend()
  }

  /// The next time the channel can be read, the main run loop wakes.
  func arm() {
    armed.withLock { armed in
      if !armed { source.value.resume() }
      armed = true
    }
  }
}
