import CoreFoundation
import Dispatch
import Foundation
import Synchronization

/// Turns the main run loop while a test waits on the main thread, so work sent to
/// `DispatchQueue.main`, `OperationQueue.main` or the main actor runs during the wait.
///
/// Waiter strategies use it on the main thread; third-party strategies can too.
public enum MainThreadPump {
  /// How deeply the main thread is inside ``turn(until:)``; above zero, code running on the
  /// main thread is a callout of the run loop, which cannot turn the loop again.
  private static let depth = Atomic<Int>(0)

  /// Whether the calling thread is the main thread and free to turn the run loop: not
  /// inside a block the run loop is running.
  public static var canPump: Bool {
    Thread.isMainThread && depth.load(ordering: .relaxed) == 0
  }

  /// Whether the calling code runs inside a callout of a run loop turned by the harness
  /// (a main-queue block run while a test waits). A blocking wait there cannot make the
  /// run loop turn; it must `await` instead.
  public static var isInsideCallout: Bool {
    Thread.isMainThread && depth.load(ordering: .relaxed) > 0
  }

  /// Runs the main run loop once: returns after a source (such as a main-queue block) ran,
  /// or at the deadline. Call only where ``canPump`` is true.
  ///
  /// The deadline is a timer kept on the main run loop and re-armed for each turn, and the
  /// run itself has no timeout: a run loop timeout makes and cancels a dispatch timer
  /// source every turn, which costs ~100 µs of CPU a turn on Linux (about twice what this
  /// costs), and a wait turns the run loop each time main-queue work or a wake-up arrives.
  public static func turn(until deadline: ContinuousClock.Instant) {
    let remaining = ContinuousClock().now.duration(to: deadline).timeInterval
    guard remaining > 0 else { return }
    depth.add(1, ordering: .relaxed)
    defer { depth.subtract(1, ordering: .relaxed) }
    DeadlineTimer.main.arm(after: remaining)
    defer { DeadlineTimer.main.disarm() }
    _ = CFRunLoopRunInMode(DeadlineTimer.mode, DeadlineTimer.noTimeout, true)
  }

  /// Runs the work the main run loop has ready (main-queue blocks, main-actor jobs, due
  /// timers) without blocking. Call only where ``canPump`` is true.
  public static func runReadyWork() {
    depth.add(1, ordering: .relaxed)
    defer { depth.subtract(1, ordering: .relaxed) }
    _ = CFRunLoopRunInMode(DeadlineTimer.mode, 0, false)
  }

  /// Makes a ``turn(until:)`` in progress return promptly, from any thread. It queues an
  /// empty block on the main queue: unlike a run-loop stop, it is never lost when it
  /// arrives just before the loop starts.
  public static func wake() {
    DispatchQueue.main.async {}
  }

  /// Blocks the main thread on `condition` until it is done or the deadline passes, so
  /// that main-queue work runs meanwhile: a wait woken by events sleeps in the run loop; a
  /// polled one (every one, with `pollsEverything`, which also ignores wake-ups) is
  /// re-evaluated on `schedule` and runs the run loop's ready work at each evaluation.
  public static func wait(on condition: WaitCondition, until deadline: ContinuousClock.Instant,
                          schedule: PollSchedule = .standard, pollsEverything: Bool = false) {
    condition.blockParked(deadline: deadline, schedule: schedule, pollsEverything: pollsEverything)
  }
}

/// The timer that ends a turn of the main run loop at its deadline, by stopping the run.
///
/// It repeats every millisecond while armed: should it fire inside a run loop that a
/// main-queue block ran itself (nested in the harness's turn), that inner run is stopped
/// instead, and the next firing stops the harness's own.
private final class DeadlineTimer: @unchecked Sendable {
  /// A run "without timeout" for `CFRunLoopRunInMode`: past its interval limit it makes no
  /// timeout timer.
  static let noTimeout: CFTimeInterval = 1e10

  /// The run loop mode the harness turns: the default one, as `RunLoop.run` does.
  static var mode: CFRunLoopMode {
    #if canImport(Darwin)
    CFRunLoopMode.defaultMode
    #else
    kCFRunLoopDefaultMode
    #endif
  }

  /// The main run loop's timer. `@unchecked Sendable`: it is only armed and disarmed on the
  /// main thread, inside ``MainThreadPump/turn(until:)``.
  static let main = DeadlineTimer()

  private let timer: CFRunLoopTimer

  private init() {
    let runLoop = CFRunLoopGetMain()
    timer = CFRunLoopTimerCreateWithHandler(kCFAllocatorDefault, Self.farFuture, 0.001, 0, 0) { _ in
      CFRunLoopStop(runLoop)
    }
    CFRunLoopAddTimer(runLoop, timer, Self.mode)
  }

  private static var farFuture: CFAbsoluteTime { CFAbsoluteTimeGetCurrent() + 1e9 }

  func arm(after seconds: Double) {
    CFRunLoopTimerSetNextFireDate(timer, CFAbsoluteTimeGetCurrent() + seconds)
  }

  func disarm() {
    CFRunLoopTimerSetNextFireDate(timer, Self.farFuture)
  }
}
