import AsyncHarness
import Foundation
import Stories

private let counted = Notification.Name("Stories.counted")

/// The flaky demonstration runs only when asked: `EXAMPLES_FLAKY=1`.
private let runsFlakyDemonstration = ProcessInfo.processInfo.environment["EXAMPLES_FLAKY"] != nil

/// flaky: sleeps instead of waiting. It passes when the `Task` happened to run during the
/// sleep and fails when the machine is busy. See it fail with
/// `EXAMPLES_FLAKY=1 swift run examples --filter sleeps --repeat 2000` in `Examples/`.
private let sleepingTest: @Sendable (TestContext) throws -> Void = { t in
  let center = NotificationCenter()
  let counter = NotificationCounter(counting: counted, on: center, delivery: .task)
  center.post(name: counted, object: nil)
  Thread.sleep(forTimeInterval: 0.000_05) // deliberate flaky demonstration: sleeps instead of waiting
  t.expectEqual(counter.value, 1)
}

/// A view model counting a notification: synchronously (no wait), and through a `Task`
/// (a wait is needed: a probe or the view model's own notification).
let notificationCounterSuite = Suite("Stories.NotificationCounter") {
  Test("counts in the observer: no waiting") { t in
    let center = NotificationCenter()
    let counter = NotificationCounter(counting: counted, on: center, delivery: .synchronous)
    center.post(name: counted, object: nil)
    center.post(name: counted, object: nil)
    t.expectEqual(counter.value, 2)
  }

  Test("counts through a Task: wait with a probe") { t in
    let center = NotificationCenter()
    let counter = NotificationCounter(counting: counted, on: center, delivery: .task)
    center.post(name: counted, object: nil)
    try t.wait(until: { counter.value == 1 })
  }

  Test("counts through a Task: wait for the view model's notification") { t in
    let center = NotificationCenter()
    let counter = NotificationCounter(counting: counted, on: center, delivery: .task)
    let updated = t.expectation(forNotification: NotificationCounter.didUpdate, object: counter, center: center)
    center.post(name: counted, object: nil)
    try t.wait(for: updated)
    t.expectEqual(counter.value, 1)
  }

  Test("counts through a Task: async wait") { t async throws in
    let center = NotificationCenter()
    let counter = NotificationCounter(counting: counted, on: center, delivery: .task)
    center.post(name: counted, object: nil)
    center.post(name: counted, object: nil)
    try await t.wait(until: { counter.value == 2 })
  }

  Test("counts through a Task: sleeps instead of waiting",
       traits: runsFlakyDemonstration ? [] : [.skip("flaky by design: sleeps instead of waiting; EXAMPLES_FLAKY=1 runs it")],
       body: sleepingTest)
}
