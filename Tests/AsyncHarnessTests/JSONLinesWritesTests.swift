@testable import AsyncHarness
import Foundation
import Synchronization
import XCTest

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Issue 12, item 3: how the JSON Lines stream reaches a file. A line that test code may
/// follow is written at once; the lines between two tests are held and written with the next
/// one (one `write` a test), or by the hold timer when nothing follows, and by `finish()`.
final class JSONLinesWritesTests: XCTestCase {
  /// What one `write` call was handed: the kinds of its lines, in order.
  private final class Writes: Sendable {
    private let chunks = Mutex<[[String]]>([])
    /// Fulfilled by each write whose lines include this kind.
    let watched: (kind: String, expectation: XCTestExpectation)?
    /// Writes that include this kind fail.
    let failing: String?

    init(watching watched: (kind: String, expectation: XCTestExpectation)? = nil, failing: String? = nil) {
      self.watched = watched
      self.failing = failing
    }

    var write: @Sendable (UnsafeBufferPointer<UInt8>) throws -> Void {
      { [self] bytes in
        let text = String(decoding: bytes, as: UTF8.self)
        XCTAssertTrue(text.hasSuffix("\n"), "a write hands whole lines: \(text)")
        let kinds = text.split(separator: "\n").map { line in (try? Event(jsonLine: line).kind.name) ?? "unreadable: \(line)" }
        chunks.withLock { $0.append(kinds) }
        if let watched, kinds.contains(watched.kind) { watched.expectation.fulfill() }
        if let failing, kinds.contains(failing) { throw ReportFileError(path: "test", reason: "the disk is full") }
      }
    }

    var all: [[String]] { chunks.withLock { $0 } }
  }

  private let suite = SuiteRun(suite: "S", host: "w")
  private func test(_ name: String) -> TestID { TestID(suite: "S", name: name, host: "w") }

  private func reporter(_ writes: Writes, holdLimit: Duration? = .seconds(600)) -> JSONLinesReporter {
    JSONLinesReporter(outputLimit: ReportDefaults.outputLimit, holdLimit: holdLimit, write: writes.write, close: {})
  }

  /// A run of two tests, the second with an issue (the same events each time it is read).
  private var run: [Event] {
    let instant = Date(timeIntervalSince1970: 1_800_000_000)
    let issue = Issue(kind: .expectationFailed, message: "no")
    return [
      Event(.runStarted(RunInfo(repetitions: 1, waiters: ["w"])), timestamp: instant),
      Event(.suiteStarted(suite), timestamp: instant),
      Event(.testStarted(test("a")), timestamp: instant),
      Event(.testEnded(test("a"), TestEnd(once: TestResult(verdict: .passed), duration: 0.001)), timestamp: instant),
      Event(.testStarted(test("b")), timestamp: instant),
      Event(.issueRecorded(test("b"), issue), timestamp: instant),
      Event(.testEnded(test("b"), TestEnd(once: TestResult(verdict: .failed, issues: [issue]), duration: 0.002)), timestamp: instant),
      Event(.suiteEnded(suite, Summary(), duration: 0.003), timestamp: instant),
      Event(.runEnded(Summary(), duration: 0.004), timestamp: instant),
    ]
  }

  func testTheLinesBetweenTwoTestsGoOutWithTheNextTestStarted() throws {
    let writes = Writes()
    let reporter = reporter(writes)
    for event in run { try reporter.handle(event) }
    XCTAssertEqual(writes.all, [
      ["runStarted", "suiteStarted", "testStarted"],
      ["testEnded", "testStarted"],
      ["issueRecorded"],
      ["testEnded", "suiteEnded", "runEnded"],
    ])
    try reporter.finish()
    XCTAssertEqual(writes.all.count, 4, "finish has nothing left to write")
  }

  func testEveryLineOfARunIsWrittenAtOnceWhenNothingIsHeld() throws {
    let writes = Writes()
    let reporter = reporter(writes, holdLimit: nil)
    for event in run { try reporter.handle(event) }
    XCTAssertEqual(writes.all, run.map { [$0.kind.name] })
  }

  /// A line written through the public closure initializer comes in a call of its own.
  func testAClosureGetsOneLineACall() throws {
    let lines = Mutex<[String]>([])
    let reporter = JSONLinesReporter { line in lines.withLock { $0.append(line) } }
    for event in run { try reporter.handle(event) }
    XCTAssertEqual(lines.withLock { $0 }, run.map(\.jsonLine))
  }

  func testAHeldLineIsWrittenByTheTimerWhenNothingFollows() throws {
    let written = expectation(description: "the held testEnded is written")
    let writes = Writes(watching: ("testEnded", written))
    let reporter = reporter(writes, holdLimit: .milliseconds(20))
    for event in run.prefix(4) { try reporter.handle(event) }
    wait(for: [written], timeout: 10)
    XCTAssertEqual(writes.all, [["runStarted", "suiteStarted", "testStarted"], ["testEnded"]])
    try reporter.finish()
    XCTAssertEqual(writes.all.count, 2)
  }

  func testFinishWritesTheHeldLinesThenCloses() throws {
    let writes = Writes()
    let closed = Mutex(false)
    let reporter = JSONLinesReporter(outputLimit: ReportDefaults.outputLimit, holdLimit: .seconds(600),
                                     write: writes.write, close: { closed.withLock { $0 = true } })
    for event in run.prefix(4) { try reporter.handle(event) }
    XCTAssertEqual(writes.all.count, 1)
    try reporter.finish()
    XCTAssertEqual(writes.all.last, ["testEnded"])
    XCTAssertTrue(closed.withLock { $0 })
  }

  /// After `finish()` the descriptor is closed (its number may name another file by then):
  /// nothing more is written.
  func testNothingIsWrittenAfterFinish() throws {
    let writes = Writes()
    let reporter = reporter(writes, holdLimit: nil)
    for event in run.prefix(3) { try reporter.handle(event) }
    try reporter.finish()
    for event in run.dropFirst(3) { try reporter.handle(event) }
    try reporter.finish()
    XCTAssertEqual(writes.all, [["runStarted"], ["suiteStarted"], ["testStarted"]])
  }

  /// The timer has no caller to throw to: its failure is thrown by the next call, once.
  func testAWriteTheTimerCouldNotMakeFailsTheNextEvent() throws {
    let tried = expectation(description: "the timer tries to write the held line")
    let writes = Writes(watching: ("testEnded", tried), failing: "testEnded")
    let reporter = reporter(writes, holdLimit: .milliseconds(10))
    for event in run.prefix(4) { try reporter.handle(event) }
    wait(for: [tried], timeout: 10)
    XCTAssertThrowsError(try reporter.handle(run[4])) { error in
      XCTAssertEqual("\(error)", "cannot write the JSON Lines stream to test: the disk is full")
    }
    try reporter.handle(run[4])
    XCTAssertEqual(writes.all.last, ["testStarted"])
  }

  /// A worker's back channel holds nothing: its parent waits for each `testEnded` before it
  /// sends more tests, so a held line would stall the run.
  func testAWorkersBackChannelWritesEachLineAsItHappens() throws {
    var ends: [Int32] = [0, 0]
    XCTAssertEqual(pipe(&ends), 0)
    defer { close(ends[0]); close(ends[1]) }
    let reporter = JSONLinesReporter(descriptor: ends[1], name: "the channel", closing: false)
    for event in run.prefix(4) { try reporter.handle(event) }
    var buffer = [UInt8](repeating: 0, count: 4096)
    var received = ""
    var ready = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
    while poll(&ready, 1, 0) > 0 {
      let count = read(ends[0], &buffer, buffer.count)
      guard count > 0 else { break }
      received += String(decoding: buffer[..<count], as: UTF8.self)
    }
    XCTAssertEqual(received, run.prefix(4).map(\.jsonLine).joined())
  }

  /// Two lanes send their tests' events at once while the timer (every 50 µs) writes what is
  /// held: every line comes out whole, once, in each lane's order. Repeated, as races are.
  func testLanesAndTheTimerNeverTearOrReorderLines() throws {
    for round in 0..<200 {
      let text = Mutex("")
      let reporter = JSONLinesReporter(outputLimit: ReportDefaults.outputLimit, holdLimit: .microseconds(50),
                                       write: { bytes in text.withLock { $0 += String(decoding: bytes, as: UTF8.self) } },
                                       close: {})
      DispatchQueue.concurrentPerform(iterations: 2) { lane in
        for index in 0..<20 {
          let test = TestID(suite: "S", name: "lane \(lane) test \(index)", host: "w")
          try? reporter.handle(Event(.testStarted(test)))
          try? reporter.handle(Event(.testEnded(test, TestEnd(once: TestResult(verdict: .passed), duration: 0))))
        }
      }
      try reporter.finish()
      let lines = try text.withLock { $0 }.split(separator: "\n").map { try Event(jsonLine: $0).kind }
      XCTAssertEqual(lines.count, 80, "round \(round)")
      for lane in 0..<2 {
        let expected = (0..<20).flatMap { index in ["testStarted lane \(lane) test \(index)", "testEnded lane \(lane) test \(index)"] }
        let seen = lines.compactMap { kind -> String? in
          switch kind {
          case .testStarted(let test) where test.name.hasPrefix("lane \(lane) "): "testStarted \(test.name)"
          case .testEnded(let test, _) where test.name.hasPrefix("lane \(lane) "): "testEnded \(test.name)"
          default: nil
          }
        }
        XCTAssertEqual(seen, expected, "round \(round), lane \(lane)")
      }
    }
  }
}
