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

/// Closes every descriptor from 3 to 1023, when this run asks for it.
func closeEveryDescriptorAbove2() {
  guard closesDescriptors else { return }
  for descriptor in Int32(3)..<1024 { close(descriptor) }
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
