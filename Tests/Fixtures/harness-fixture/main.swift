import AsyncHarness
import AsyncHarnessJUnit
import Foundation

// A suites executable for the tests that end a run early: `passes` passes; `blocks` writes
// "blocking" to standard output and waits until the process is ended from outside.
let suites = [
  Suite("Fixture") {
    Test("passes") { t in t.expect(true) }
    Test("blocks") { _ in
      FileHandle.standardOutput.write(Data("blocking\n".utf8))
      DispatchSemaphore(value: 0).wait()
    }
  },
]
HarnessMain.run(suites, junit: JUnitReporter.factory)
