import AsyncHarness
import AsyncHarnessTesting
import Dispatch
import Testing

/// The Swift Testing bridge: the harness's waits inside `@Test` functions, issues recorded
/// as Swift Testing issues.
@Suite struct SwiftTestingBridgeTests {
  @Test(.waiter(.semaphore)) func traitChoosesTheWaiter() async {
    let result = await withHarness { t in
      #expect(t.waiter.name == "semaphore")
      let done = t.expectation("done")
      DispatchQueue.global().async { done.fulfill() }
      try await t.wait(for: done)
    }
    #expect(result.verdict == .passed)
    #expect(result.issues.isEmpty)
  }

  @Test func harnessFailuresBecomeSwiftTestingIssues() async {
    await withKnownIssue("the harness records its failure as a Swift Testing issue") {
      let result = await withHarness(waiter: .probePoller) { t in
        try await t.wait(until: { false }, timeout: .milliseconds(20))
      }
      #expect(result.verdict == .failed)
      #expect(result.issues.map(\.message) == ["Exceeded timeout of 0.02 seconds waiting until the condition held"])
    } matching: { issue in
      issue.comments.map(\.rawValue) == ["Exceeded timeout of 0.02 seconds waiting until the condition held"]
    }
  }
}
