@testable import AsyncHarness
import Dispatch
import Foundation
import Synchronization
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// How the leak check tells a thread a test left running from one that sleeps: by its state
/// in `/proc`, which a spinning thread keeps even while a loaded machine makes it wait for a
/// processor (the CPU it uses alone then says too little).
final class LeakCheckTests: XCTestCase {
  #if os(Linux)
  /// The calling thread's ID, as `/proc` names it (`/proc/thread-self` links `PID/task/TID`).
  private static func ownThreadID() -> Int32? {
    var buffer = [CChar](repeating: 0, count: 64)
    let count = readlink("/proc/thread-self", &buffer, buffer.count - 1)
    guard count > 0 else { return nil }
    return Int32(String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
      .split(separator: "/").last ?? "")
  }

  func testASpinningThreadIsRunnableAndASleepingOneNotWhateverItsName() throws {
    let ids = Mutex<(spinning: Int32?, sleeping: Int32?)>((nil, nil))
    let stop = Atomic(false)
    let started = DispatchSemaphore(value: 0)
    let wake = DispatchSemaphore(value: 0)
    let ended = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
      ids.withLock { $0.spinning = Self.ownThreadID() }
      started.signal()
      while !stop.load(ordering: .relaxed) {}
      ended.signal()
    }
    Thread.detachNewThread {
      // A name that holds what the state field looks like.
      try? "a) R (b".write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
      ids.withLock { $0.sleeping = Self.ownThreadID() }
      started.signal()
      wake.wait()
      ended.signal()
    }
    started.wait()
    started.wait()
    let (spinning, sleeping) = ids.withLock { $0 }
    let spinner = try XCTUnwrap(spinning)
    let sleeper = try XCTUnwrap(sleeping)
    // The sleeper may not have reached its wait yet: its state follows its name's last `)`.
    func stat(_ id: Int32) -> String { (try? String(contentsOfFile: "/proc/self/task/\(id)/stat", encoding: .utf8)) ?? "" }
    while !stat(sleeper).contains("(b) S ") { usleep(100) }  // deliberate: only /proc says a thread sleeps; nothing announces it
    for round in 0..<200 {
      XCTAssertTrue(LeakCheck.isRunnable(spinner), "round \(round)")
      XCTAssertFalse(LeakCheck.isRunnable(sleeper), "round \(round)")
    }
    stop.store(true, ordering: .relaxed)
    wake.signal()
    ended.wait()
    ended.wait()
    XCTAssertFalse(LeakCheck.isRunnable(-1), "no such thread")
  }
  #endif
}
