import AsyncHarness
import Stories

/// The feed both tests use, as an app's singleton would be.
private let sharedFeed = UpdateFeed()

/// The late signal: the first test leaves its subscription behind; the second test's
/// update also reaches it, after the first test ended. That fulfillment is reported
/// against the first test (as a late signal, which does not fail it) and never counts in
/// the second test.
let lateSignalSuite = Suite("Stories.LateSignal") {
  Test("leaves its subscription behind") { t in
    let received = t.expectation("update received")
    sharedFeed.subscribe { _ in received.fulfill() }  // never unsubscribed: the bug
    sharedFeed.publish("first", on: t.background)
    try t.wait(for: received)
  }

  Test("is not satisfied by the previous test's late fulfillment") { t in
    defer { sharedFeed.removeAllSubscribers() }
    let received = t.expectation("update received")
    sharedFeed.subscribe { _ in received.fulfill() }
    sharedFeed.publish("second", on: t.background)
    try t.wait(for: received)
    t.expectEqual(received.fulfillmentCount, 1)
  }
}
