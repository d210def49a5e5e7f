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
  public static func turn(until deadline: ContinuousClock.Instant) {
    let remaining = ContinuousClock().now.duration(to: deadline).timeInterval
    guard remaining > 0 else { return }
    depth.add(1, ordering: .relaxed)
    defer { depth.subtract(1, ordering: .relaxed) }
    _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: remaining))
  }

  /// Makes a ``turn(until:)`` in progress return promptly, from any thread. It queues an
  /// empty block on the main queue: unlike a run-loop stop, it is never lost when it
  /// arrives just before the loop starts.
  public static func wake() {
    DispatchQueue.main.async {}
  }

  /// Blocks the main thread on `condition`, turning the run loop until it is done or the
  /// deadline passes; polled conditions are re-evaluated every `pollInterval`.
  public static func wait(on condition: WaitCondition, until deadline: ContinuousClock.Instant,
                          pollInterval: Duration) {
    condition.onWake { wake() }
    let clock = ContinuousClock()
    while !condition.isDone() && clock.now < deadline {
      turn(until: condition.isPolled ? min(deadline, clock.now.advanced(by: pollInterval)) : deadline)
    }
  }
}
