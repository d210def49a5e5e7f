import Dispatch
import Orders
import Synchronization
import Testing
import XCTest

// The tests a team writes for callback code on Dispatch queues: each bug's test fails only in
// some orders of its Dispatch blocks; its fixed twin's test passes in every order. Under plain
// `swift test` the bugs almost never show.

final class DispatchOrdersXCTests: XCTestCase {
  /// The theme kept once every save was written, as an expectation says.
  private func keptTheme(_ preferences: Preferences) async -> String {
    preferences.save(theme: "light")
    preferences.save(theme: "dark")
    let written = expectation(description: "written")
    preferences.whenWritten { written.fulfill() }
    await fulfillment(of: [written], timeout: 5)
    return preferences.savedTheme
  }

  /// The first answer of `lookup`, as an expectation says.
  private func firstAnswer(_ lookup: Lookup) async -> String? {
    let found = expectation(description: "found")
    let value = Mutex<String?>(nil)
    lookup.value(for: "title") { answer in
      value.withLock { $0 = answer }
      found.fulfill()
    }
    await fulfillment(of: [found], timeout: 5)
    return value.withLock { $0 }
  }

  func testTheLastThemeSavedIsKept() async {
    let kept = await keptTheme(Preferences())
    XCTAssertEqual(kept, "dark")
  }

  func testTheLastThemeSavedInOrderIsKept() async {
    let kept = await keptTheme(Preferences(writesInOrder: true))
    XCTAssertEqual(kept, "dark")
  }

  func testTheCachedValueWins() async {
    let answer = await firstAnswer(Lookup(cached: "edited"))
    XCTAssertEqual(answer, "edited")
  }

  func testTheCachedValueAskedFirstWins() async {
    let answer = await firstAnswer(Lookup(cached: "edited", askingCacheFirst: true))
    XCTAssertEqual(answer, "edited")
  }
}

@Suite struct DispatchOrdersTests {
  /// The theme kept once every save was written.
  private func keptTheme(_ preferences: Preferences) async -> String {
    preferences.save(theme: "light")
    preferences.save(theme: "dark")
    await withCheckedContinuation { continuation in preferences.whenWritten { continuation.resume() } }
    return preferences.savedTheme
  }

  /// The first answer of `lookup`.
  private func firstAnswer(_ lookup: Lookup) async -> String {
    await withCheckedContinuation { continuation in lookup.value(for: "title") { continuation.resume(returning: $0) } }
  }

  @Test func theLastThemeSavedIsKept() async {
    #expect(await keptTheme(Preferences()) == "dark")
  }

  @Test func theLastThemeSavedInOrderIsKept() async {
    #expect(await keptTheme(Preferences(writesInOrder: true)) == "dark")
  }

  @Test func theCachedValueWins() async {
    #expect(await firstAnswer(Lookup(cached: "edited")) == "edited")
  }

  @Test func theCachedValueAskedFirstWins() async {
    #expect(await firstAnswer(Lookup(cached: "edited", askingCacheFirst: true)) == "edited")
  }
}

/// A correct test that sends a thousand blocks to a serial queue and awaits the last: what one
/// block under the schedule costs (the benchmark's part 11), in every order the same sum.
@Suite struct DispatchCostTests {
  @Test func aThousandBlocksRunInTheOrderSent() async {
    let queue = DispatchQueue(label: "cost.serial")
    let order = RunOrder()
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      for index in 1...1_000 { queue.async { order.append(index) } }
      queue.async { continuation.resume() }
    }
    #expect(order.order == Array(1...1_000))
  }
}
