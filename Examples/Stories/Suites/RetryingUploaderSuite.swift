import AsyncHarness
import ExampleSupport
import Stories

/// A 30 s back-off: under the scheduled strategy `asyncAfter` runs on virtual time, so the
/// test keeps the production delay and still takes milliseconds. On real time it shortens
/// the delay, or every other strategy would sit out two back-offs.
let retryingUploaderSuite = Suite("Stories.RetryingUploader") {
  Test("retries after the back-off until the server accepts") { t in
    let backOff: Duration = t.clock is VirtualClock ? .seconds(30) : .milliseconds(30)
    let uploader = RetryingUploader(queue: t.queue("uploads"), backOff: backOff) { attempt in attempt == 3 }
    let finished = t.expectation("upload finished")
    let succeeded = Locked(false)
    uploader.upload { success in
      succeeded.set(success)
      finished.fulfill()
    }
    try t.wait(for: finished, timeout: backOff * 3)
    t.expect(succeeded.value, "the third attempt succeeds")
    t.expectEqual(uploader.attemptCount, 3)
  }

  Test("gives up after the last attempt") { t in
    let backOff: Duration = t.clock is VirtualClock ? .seconds(30) : .milliseconds(30)
    let uploader = RetryingUploader(queue: t.queue("uploads"), backOff: backOff) { _ in false }
    let finished = t.expectation("upload finished")
    let succeeded = Locked(true)
    uploader.upload(limit: 2) { success in
      succeeded.set(success)
      finished.fulfill()
    }
    try t.wait(for: finished, timeout: backOff * 3)
    t.expect(!succeeded.value, "it reports the failure")
    t.expectEqual(uploader.attemptCount, 2)
  }
}
