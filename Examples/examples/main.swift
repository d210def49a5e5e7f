import AsyncHarness
import AsyncHarnessJUnit
import Foundation

let smoke = Suite("Smoke", waiter: .semaphore) {
  Test("background work delivered on main") { t in
    let done = t.expectation("delivered")
    let box = Box()
    t.background.async {
      let value = 42
      t.main.async {
        box.set(value)
        done.fulfill()
      }
    }
    try t.wait(for: done)
    t.expect(box.get() == 42)
  }
  Test("probe") { t in
    let box = Box()
    t.background.async { box.set(1) }
    try t.wait(until: { box.get() == 1 })
  }
  Test("notification") { t in
    let name = Notification.Name("smoke.saved")
    let saved = t.expectation(forNotification: name)
    t.background.async { NotificationCenter.default.post(name: name, object: nil) }
    try t.wait(for: saved)
  }
  Test("failing callback fails fast", .knownIssue("demonstration")) { t in
    let done = t.expectation("never")
    t.background.async { t.expect(1 + 1 == 3, "math") }
    try t.wait(for: done, timeout: .seconds(60))
  }
  Test("async") { t async throws in
    let done = t.expectation("async")
    Task { done.fulfill() }
    try await t.wait(for: done)
  }
}

final class Box: @unchecked Sendable {
  private let lock = NSLock()
  private var value = 0
  func set(_ v: Int) { lock.withLock { value = v } }
  func get() -> Int { lock.withLock { value } }
}

HarnessMain.run([smoke], junit: JUnitReporter.factory)
