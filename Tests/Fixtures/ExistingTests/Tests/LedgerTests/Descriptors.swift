import Foundation
import Testing
import XCTest

// Tests that close every descriptor above 2, as code that detaches itself from its parent
// does, each only with EXISTING_TESTS_DESCRIPTORS=1; without it every test here passes. With
// it, under `swift test`, the closing test passes, the test after it fails at its line (`the
// ledger after the descriptors closed`), and the last one passes. Keep the failures' lines
// where they are: the harness's tests quote them.

/// Whether the tests here close every descriptor above 2 (EXISTING_TESTS_DESCRIPTORS=1).
let closesDescriptors = ProcessInfo.processInfo.environment["EXISTING_TESTS_DESCRIPTORS"] == "1"

/// Closes every descriptor from 3 to 1023 but Dispatch's own (below), when this run asks for it.
func closeEveryDescriptorAbove2() {
  guard closesDescriptors else { return }
  for descriptor in Int32(3)..<1024 where !isDispatchs(descriptor) { close(descriptor) }
}

final class ClosesDescriptorsXCTests: XCTestCase {
  func testA_ClosesEveryDescriptorAbove2() { closeEveryDescriptorAbove2() }
  func testB_FailsAfterIt() { XCTAssertFalse(closesDescriptors, "the ledger after the descriptors closed") }
  func testC_PassesAfterIt() {}
}

@Suite(.serialized) struct ClosesDescriptorsSwiftTests {
  @Test func closesEveryDescriptorAbove2() { closeEveryDescriptorAbove2() }
  @Test func failsAfterIt() { #expect(closesDescriptors == false, "the ledger after the descriptors closed") }
  @Test func passesAfterIt() {}
}

/// Whether `descriptor` is one of Dispatch's or the run loop's own (`epoll`, `eventfd`,
/// `timerfd`: an `anon_inode` link). Closing those crashes any process, `swift test`'s too,
/// whenever Dispatch's manager thread wakes after it (as for a timer XCTest armed and
/// cancelled): a race of the test's own, not what these tests are for.
func isDispatchs(_ descriptor: Int32) -> Bool {
  let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)")) ?? ""
  return link.hasPrefix("anon_inode:")
}
