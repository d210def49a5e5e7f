@testable import AsyncHarness
import AsyncHarnessShared
import XCTest

/// The output splitter cuts a worker's output stream into tests at the marker line the worker
/// writes as each test starts, however the reads cut the stream; a worker's output is stored
/// once as whole lines without splitting a character, and its tail is kept for a crash report.
final class OutputSplitterTests: XCTestCase {
  private static let marker = Array("\u{1}AsyncHarness test starts 9f2c1a\n".utf8)

  /// What each test of `chunks` gets, reading them as the executor does: a test starts
  /// (``OutputSplitter/startNextTest()``), its output is what the reads hand out until the
  /// next test's marker was read.
  private func split(_ chunks: [ArraySlice<UInt8>]) -> [[UInt8]] {
    var splitter = OutputSplitter(marker: Self.marker)
    var tests = [Array(splitter.startNextTest())]
    for chunk in chunks {
      tests[tests.count - 1] += splitter.append(chunk)
      while splitter.reachedNextTest { tests.append(Array(splitter.startNextTest())) }
    }
    return tests
  }

  /// The stream a worker writes for tests whose outputs are `outputs`: each after its marker.
  private func stream(_ outputs: [[UInt8]]) -> [UInt8] {
    outputs.flatMap { Self.marker + $0 }
  }

  /// `bytes` cut into pieces of random sizes up to `largest`.
  private func pieces(_ bytes: [UInt8], largest: Int, using generator: inout SeededRandomGenerator) -> [ArraySlice<UInt8>] {
    var pieces: [ArraySlice<UInt8>] = []
    var offset = 0
    while offset < bytes.count {
      let size = Int.random(in: 1...largest, using: &generator)
      pieces.append(bytes[offset..<min(bytes.count, offset + size)])
      offset += size
    }
    return pieces
  }

  /// Outputs that hold what a marker starts with, bytes of it, an unfinished marker line and
  /// binary, invalid UTF-8 bytes: each reaches its own test whole.
  private static let awkwardOutputs: [[UInt8]] = [
    Array("first test\n".utf8),
    [],
    Array("\u{1}\u{1}Async".utf8) + [0xFF, 0xFE, 0x00, 0xC3] + Array("no newline".utf8),
    Array(marker.dropLast()) + Array(" not a marker\n".utf8),
    [0x01, 0x80, 0xBF, 0xED, 0xA0, 0x80, 0xF4, 0x90] + Array(marker.prefix(7)),
    Array("é 🦊\n".utf8),
  ]

  func testEachTestGetsItsOwnOutputWhateverPiecesTheStreamArrivesIn() {
    let outputs = Self.awkwardOutputs
    let bytes = stream(outputs)
    var generator = SeededRandomGenerator(seed: 23)
    for largest in [1, 2, 7, Self.marker.count, Self.marker.count + 1, 64, bytes.count] {
      for _ in 0..<50 {
        XCTAssertEqual(split(pieces(bytes, largest: largest, using: &generator)), outputs, "pieces up to \(largest) bytes")
      }
    }
  }

  /// Every place a read can end inside a marker: the marker's bytes are held until the next
  /// read completes it, and are never handed out as output.
  func testAMarkerSplitAcrossTwoReadsAtEveryByte() {
    let outputs = [Array("before".utf8), Array("after".utf8)]
    let bytes = stream(outputs)
    let second = outputs[0].count + Self.marker.count
    for cut in second...(second + Self.marker.count) {
      XCTAssertEqual(split([bytes[..<cut], bytes[cut...]]), outputs, "cut at \(cut)")
    }
  }

  /// A marker that is the last thing read starts a test with no output yet; the bytes of a
  /// marker's start at the end of a read wait for the next read to say what they are.
  func testAMarkerAtTheVeryEnd() {
    XCTAssertEqual(split([stream([Array("only".utf8), []])[...]]), [Array("only".utf8), []])
    var splitter = OutputSplitter(marker: Self.marker)
    XCTAssertEqual(Array(splitter.startNextTest()), [])
    XCTAssertEqual(Array(splitter.append((Self.marker + Array("text".utf8) + Self.marker.prefix(5))[...])),
                   Array("text".utf8))
    XCTAssertFalse(splitter.reachedNextTest)
    XCTAssertEqual(Array(splitter.append(Self.marker[5...])), [])
    XCTAssertTrue(splitter.reachedNextTest)
  }

  /// Output read before any marker (a worker that failed before its first test started)
  /// belongs to the running test, as it arrives.
  func testOutputWithNoMarkerIsTheRunningTests() {
    let text = Array("AsyncHarness worker: unreadable request\n".utf8) + [0x00, 0xFF]
    var splitter = OutputSplitter(marker: Self.marker)
    _ = splitter.startNextTest()
    XCTAssertEqual(Array(splitter.append(text[...])), text)
    XCTAssertFalse(splitter.reachedNextTest)
    var generator = SeededRandomGenerator(seed: 5)
    XCTAssertEqual(split(pieces(text, largest: 3, using: &generator)), [text])
  }

  /// A line of a megabyte read in 64 KiB pieces, with the next test's marker in the middle of
  /// a read, is cut exactly at the marker.
  func testLongLinesAreCutExactlyAtTheMarker() {
    let long = [UInt8](repeating: UInt8(ascii: "x"), count: 1_000_000)
    let outputs = [long, long + [0x0A], Array("short".utf8)]
    let bytes = stream(outputs)
    let chunks = stride(from: 0, to: bytes.count, by: 65_536).map { bytes[$0..<min(bytes.count, $0 + 65_536)] }
    XCTAssertEqual(split(chunks).map(\.count), outputs.map(\.count))
    XCTAssertEqual(split(chunks), outputs)
  }

  /// A worker's output stored once (`WorkerOutputLog`) is what decoding the whole stream
  /// gives, wherever the reads cut a character, valid or not: a line is stored once whole,
  /// and the line being printed when an attempt ends is read where it is.
  func testTheLogNeverSplitsACharacterAndLosesNoByte() {
    let line = Array("a é € 🦊 z".utf8) + [0xFF, 0xC3, 0x41, 0xE2, 0x82, 0xF0, 0x9F, 0xA6, 0x00, 0xED, 0xA0, 0x80, 0xC3]
    let bytes = line + [0x0A] + line + [0x0A] + Array("last 🦊".utf8)
    var generator = SeededRandomGenerator(seed: 7)
    for round in 0..<300 {
      var log = WorkerOutputLog()
      for piece in pieces(bytes, largest: 4, using: &generator) { _ = log.add(piece, shared: false) }
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
