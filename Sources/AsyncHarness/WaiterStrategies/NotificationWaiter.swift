import Foundation

/// Sleeps until a notification is posted: each wake-up of the wait is posted on a private
/// `NotificationCenter`, and an observer there wakes the waiting thread, as
/// `XCTNSNotificationExpectation` is woken by the notification it observes.
public struct NotificationWaiter: Waiter {
  /// `notification`.
  public let name = "notification"

  /// The name of the notification a wait's wake-ups are posted as.
  public static let wakeNotification = Notification.Name("AsyncHarness.NotificationWaiter.wake")

  /// Creates the waiter.
  public init() {}

  /// Blocks the calling thread until `condition` is done or `deadline` passes.
  /// - Parameters:
  ///   - condition: What the wait waits for.
  ///   - deadline: When the wait gives up.
  public func block(on condition: WaitCondition, until deadline: ContinuousClock.Instant) {
    let center = NotificationCenter()
    let spot = ParkingSpot(pollsOften: condition.isPolled)
    let observer = center.addObserver(forName: Self.wakeNotification, object: nil, queue: nil) { _ in spot.wake() }
    defer { center.removeObserver(observer) }
    let token = SendableBox(center)
    condition.onWake { token.value.post(name: Self.wakeNotification, object: nil) }
    condition.blockUntilDone(deadline: deadline) { spot.sleep(until: $0) }
  }
}

extension Waiter where Self == NotificationWaiter {
  /// Sleeps until a posted notification wakes it (``NotificationWaiter``).
  public static var notification: NotificationWaiter { NotificationWaiter() }
}
