@testable import AsyncHarness
import AsyncHarnessShared
import XCTest

/// A worker's output is stored once as whole lines without splitting a character, and its
/// tail is kept for a crash report.
final class WorkerOutputTests: XCTestCase {
  /// A worker's output stored once (`WorkerOutputLog`) is what decoding the whole stream
  /// gives, wherever the reads cut a character, valid or not: a line is stored once whole,
  /// and the line being printed when an attempt ends is read where it is.
  func testTheLogNeverSplitsACharacterAndLosesNoByte() {
    let line = Array("a é € 🦊 z".utf8) + [0xFF, 0xC3, 0x41, 0xE2, 0x82, 0xF0, 0x9F, 0xA6, 0x00, 0xED, 0xA0, 0x80, 0xC3]
    let bytes = line + [0x0A] + line + [0x0A] + Array("last 🦊".utf8)
    var generator = SeededRandomGenerator(seed: 7)
    for round in 0..<300 {
      var log = WorkerOutputLog()
      for piece in bytes.randomPieces(largest: 4, using: &generator) { _ = log.add(piece, shared: false) }
      let text = log.pieces(from: 0).joined() + (log.unfinishedLine(shared: false) ?? "")
      XCTAssertEqual(text, String(decoding: bytes, as: UTF8.self), "round \(round)")
      XCTAssertEqual(log.pieces(from: 0).map { $0.hasSuffix("\n") }, Array(repeating: true, count: log.end), "only whole lines")
    }
  }

  /// Lines printed while several tests ran are marked once; forgotten pieces are not read again.
  func testTheLogMarksSharedLinesAndForgetsWhatNoTestNeeds() {
    var log = WorkerOutputLog()
    XCTAssertTrue(log.add(Array("alone\n".utf8)[...], shared: false))
    XCTAssertFalse(log.add(Array("beside".utf8)[...], shared: true), "no whole line yet")
    XCTAssertTrue(log.add(Array(" others\nnext".utf8)[...], shared: true))
    XCTAssertEqual(Array(log.pieces(from: 0)), ["alone\n", "[shared] beside others\n"])
    XCTAssertEqual(log.unfinishedLine(shared: true), "[shared] next")
    log.drop(before: 1)
    XCTAssertEqual(Array(log.pieces(from: 0)), ["[shared] beside others\n"])
    log.endLine()
    XCTAssertNil(log.unfinishedLine(shared: false))
    XCTAssertEqual(log.end, 2)
  }

  /// The tail a crash report shows: the last 20 lines, without the stack trace the runtime
  /// prints after a fatal error, so it ends with the `Fatal error` line.
  func testTheTailEndsWithTheFatalErrorLine() {
    var tail = OutputTail()
    let lines = (1...30).map { "line \($0)\n" }.joined() + "Fatal error: boom\nCurrent stack trace:\n0 frame\n1 frame\n"
    tail.append(Array(lines.utf8)[...])
    XCTAssertEqual(tail.tail, ((12...30).map { "line \($0)" } + ["Fatal error: boom"]).joined(separator: "\n"))
    // An attempt's own tail holds nothing printed before it started.
    tail = OutputTail()
    tail.append(Array("before\n".utf8)[...])
    let own = tail.total
    tail.append(Array("mine\n".utf8)[...])
    XCTAssertEqual(tail.tail(since: own), "mine")
    XCTAssertEqual(tail.tail(since: 0), "before\nmine")
  }
}
