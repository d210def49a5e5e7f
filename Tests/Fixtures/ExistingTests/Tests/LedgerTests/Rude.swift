import Foundation

// KEEP THE LINES OF THE FAILURES IN THIS TARGET WHERE THEY ARE: the harness's tests and
// docs/RUNNING-EXISTING-TESTS.md quote them.

/// Whether the tests that crash, exit or hang may do so (`EXISTING_TESTS_RUDE=1`); without
/// it they pass, so that a plain `swift test` of the fixture ends.
let rude = ProcessInfo.processInfo.environment["EXISTING_TESTS_RUDE"] == "1"

/// Blocks the calling thread forever.
func blockForever() {
  DispatchSemaphore(value: 0).wait()
}

/// An index past the end of `array`, computed at run time.
func pastTheEnd(of array: [Int]) -> Int {
  array.count + Int(ProcessInfo.processInfo.processIdentifier % 1)
}
