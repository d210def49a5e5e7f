import Foundation
import Nimble

/// Wake latency of Nimble's `await expect { }.toEventually` (its synchronous form is
/// deprecated) in a task while the main thread turns its run loop, over a flag set in the
/// background; Nimble's assertions go to a recorder, not to XCTest.
@MainActor
func nimbleWakeLatency(waits: Int, signaller: Signaller) -> (LatencyStats, failures: Int) {
  let log = SampleLog(capacity: waits)
  let failures = inTask {
    let recorder = AssertionRecorder()
    await withAssertionHandler(recorder) {
      for _ in 0..<waits {
        let flag = Flag()
        signaller.fire { flag.set() }
        await expect { flag.isSet }.toEventually(beTrue(), timeout: .seconds(5))
        log.add(signaller.elapsedSinceFired())
      }
    }
    return recorder.assertions.filter { !$0.success }.count
  }
  return (LatencyStats(nanoseconds: log.all), failures)
}

/// CPU seconds `toEventually` burns while waiting `seconds` for a
/// condition that never holds.
@MainActor
func nimbleIdleCPU(waiting seconds: Double) -> Double {
  let before = processCPUSeconds()
  inTask {
    await withAssertionHandler(AssertionRecorder()) {
      await expect { false }.toEventually(beTrue(), timeout: .milliseconds(Int(seconds * 1000)))
    }
  }
  return processCPUSeconds() - before
}
