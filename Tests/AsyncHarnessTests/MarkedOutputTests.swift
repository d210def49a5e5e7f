@testable import AsyncHarness
import AsyncHarnessShared
import XCTest

/// Output cut at numbered marker lines (``MarkedOutput``), however the reads cut the stream:
/// a harness worker's output into its tests (marker N before its Nth test), a test bundle's
/// output at its channel's records (marker N before record N).
final class MarkedOutputTests: XCTestCase {
  private static let marker = Array("\u{1}AsyncHarness test starts 9f2c1a ".utf8)

  /// Marker N's line.
  private static func markerLine(_ number: Int) -> [UInt8] { marker + Array("\(number)\n".utf8) }

  /// The stream a worker writes for tests whose outputs are `outputs`: each after its marker.
  private func stream(_ outputs: [[UInt8]]) -> (bytes: [UInt8], markerStarts: [Int]) {
    var bytes: [UInt8] = []
    var starts: [Int] = []
    for (index, output) in outputs.enumerated() {
      starts.append(bytes.count)
      bytes += Self.markerLine(index + 1) + output
    }
    return (bytes, starts)
  }

  /// What each test of `outputs` gets when the stream arrives in `chunks`, read as a worker's
  /// connection reads it: the runner begins test N+1 (passing marker N+1) only after the
  /// reads reached marker N+1 (its test's reply follows its output), and at any read after.
  private func split(_ outputs: [[UInt8]], _ chunks: [ArraySlice<UInt8>],
                     using generator: inout SeededRandomGenerator) -> [[UInt8]] {
    let starts = stream(outputs).markerStarts
    var output = MarkedOutput(marker: Self.marker)
    var tests = [Array(output.release(passed: 1))]
    var read = 0
    for chunk in chunks {
      tests[tests.count - 1] += output.append(chunk, passed: tests.count)
      read += chunk.count
      while tests.count < outputs.count, read > starts[tests.count], Bool.random(using: &generator) {
        tests.append(Array(output.release(passed: tests.count + 1)))
      }
    }
    while tests.count < outputs.count { tests.append(Array(output.release(passed: tests.count + 1))) }
    tests[tests.count - 1] += output.rest()
    return tests
  }

  /// Outputs that hold what a marker starts with, bytes of it, the marker's text with no
  /// number, an unfinished marker line and binary, invalid UTF-8 bytes: each reaches its own
  /// test whole.
  private static let awkwardOutputs: [[UInt8]] = [
    Array("first test\n".utf8),
    [],
    Array("\u{1}\u{1}Async".utf8) + [0xFF, 0xFE, 0x00, 0xC3] + Array("no newline".utf8),
    marker + Array("not a marker\n".utf8),
    [0x01, 0x80, 0xBF, 0xED, 0xA0, 0x80, 0xF4, 0x90] + Array(marker.prefix(7)),
    marker + Array("123456789012345678901234567890 is no number\n".utf8),
    Array("é 🦊\n".utf8),
  ]

  func testEachTestGetsItsOwnOutputWhateverPiecesTheStreamArrivesIn() {
    let outputs = Self.awkwardOutputs
    let bytes = stream(outputs).bytes
    var generator = SeededRandomGenerator(seed: 23)
    for largest in [1, 2, 7, Self.marker.count, Self.marker.count + 2, 64, bytes.count] {
      for _ in 0..<50 {
        let chunks = bytes.randomPieces(largest: largest, using: &generator)
        XCTAssertEqual(split(outputs, chunks, using: &generator), outputs, "pieces up to \(largest) bytes")
      }
    }
  }

  /// Every place a read can end inside a marker's line: its bytes are held until the next
  /// read completes it, and are never handed out as output.
  func testAMarkerSplitAcrossTwoReadsAtEveryByte() {
    let outputs = [Array("before".utf8), Array("after".utf8)]
    let (bytes, starts) = stream(outputs)
    var generator = SeededRandomGenerator(seed: 3)
    for cut in starts[1]...(starts[1] + Self.markerLine(2).count) {
      XCTAssertEqual(split(outputs, [bytes[..<cut], bytes[cut...]], using: &generator), outputs, "cut at \(cut)")
    }
  }

  /// A marker that is the last thing read starts a test with no output yet; the bytes of a
  /// marker's start at the end of a read wait for the next read to say what they are.
  func testAMarkerAtTheVeryEnd() {
    var output = MarkedOutput(marker: Self.marker)
    XCTAssertEqual(Array(output.release(passed: 1)), [])
    let line2 = Self.markerLine(2)
    XCTAssertEqual(Array(output.append((Self.markerLine(1) + Array("text".utf8) + line2.prefix(5))[...], passed: 1)),
                   Array("text".utf8))
    XCTAssertEqual(Array(output.append(line2[5...], passed: 1)), [], "marker 2 is not passed before test 2 begins")
    XCTAssertEqual(Array(output.append(Array("two".utf8)[...], passed: 1)), [], "test 2's output waits for it")
    XCTAssertEqual(Array(output.release(passed: 2)), Array("two".utf8))
  }

  /// Output read before any marker (a worker that failed before its first test started)
  /// belongs to the running test, as it arrives.
  func testOutputWithNoMarkerIsTheRunningTests() {
    let text = Array("AsyncHarness worker: unreadable request\n".utf8) + [0x00, 0xFF]
    var output = MarkedOutput(marker: Self.marker)
    XCTAssertEqual(Array(output.append(text[...], passed: 1)), text)
    var generator = SeededRandomGenerator(seed: 5)
    var gathered: [UInt8] = []
    for piece in text.randomPieces(largest: 3, using: &generator) { gathered += output.append(piece, passed: 1) }
    XCTAssertEqual(gathered + output.rest(), text)
  }

  /// A line of a megabyte read in 64 KiB pieces, with the next test's marker in the middle of
  /// a read, is cut exactly at the marker.
  func testLongLinesAreCutExactlyAtTheMarker() {
    let long = [UInt8](repeating: UInt8(ascii: "x"), count: 1_000_000)
    let outputs = [long, long + [0x0A], Array("short".utf8)]
    let bytes = stream(outputs).bytes
    let chunks = stride(from: 0, to: bytes.count, by: 65_536).map { bytes[$0..<min(bytes.count, $0 + 65_536)] }
    var generator = SeededRandomGenerator(seed: 11)
    let tests = split(outputs, chunks, using: &generator)
    XCTAssertEqual(tests.map(\.count), outputs.map(\.count))
    XCTAssertEqual(tests, outputs)
  }

  // MARK: A bundle's records

  func testOutputBeforeAMarkerIsHandedOutOnlyOnceItsRecordIsRelayedWhateverTheReadsCutItInto() {
    let marked = "A\n\u{1}M 1\nB1\nB2\n\u{1}M 2\nC\n"
    let bytes = Array(marked.utf8)
    // Every cut of the text into two reads gives the same pieces.
    for cut in 0...bytes.count {
      var output = MarkedOutput(marker: Array("\u{1}M ".utf8))
      var beforeRecord1 = Array(output.append(bytes[..<cut], passed: 0))
      beforeRecord1 += output.append(bytes[cut...], passed: 0)
      XCTAssertEqual(String(decoding: beforeRecord1, as: UTF8.self), "A\n", "cut at \(cut)")
      XCTAssertEqual(String(decoding: output.release(passed: 1), as: UTF8.self), "B1\nB2\n", "cut at \(cut)")
      XCTAssertEqual(String(decoding: output.release(passed: 2), as: UTF8.self), "C\n", "cut at \(cut)")
    }
  }

  func testALostMarkerLeavesTheNextOnesInStep() {
    // Marker 1 never reached the output (a test had redirected it): marker 2 still cuts.
    var output = MarkedOutput(marker: Array("\u{1}M ".utf8))
    XCTAssertEqual(String(decoding: output.append(Array("A\n".utf8)[...], passed: 0), as: UTF8.self), "A\n")
    XCTAssertEqual(String(decoding: output.append(Array("B\n\u{1}M 2\nC".utf8)[...], passed: 1), as: UTF8.self), "B\n")
    XCTAssertEqual(String(decoding: output.release(passed: 2), as: UTF8.self), "C")
    // A marker of a record already relayed is dropped as it is read.
    XCTAssertEqual(String(decoding: output.append(Array("\u{1}M 2\nD\n".utf8)[...], passed: 2), as: UTF8.self), "D\n")
    XCTAssertEqual(String(decoding: output.append(Array("\u{1}M".utf8)[...], passed: 2), as: UTF8.self), "")
    XCTAssertEqual(String(decoding: output.rest(), as: UTF8.self), "\u{1}M", "the end is handed out whole")
  }

  func testOutputWithoutMarkersIsHandedOutAsRead() {
    var output = MarkedOutput(marker: Array("\u{1}M ".utf8))
    XCTAssertEqual(String(decoding: output.append(Array("A\u{1}N 1\nB".utf8)[...], passed: 0), as: UTF8.self),
                   "A\u{1}N 1\nB")
  }
}

extension Array where Element == UInt8 {
  /// The bytes cut into pieces of random sizes up to `largest`, as reads may cut a stream.
  func randomPieces(largest: Int, using generator: inout SeededRandomGenerator) -> [ArraySlice<UInt8>] {
    var pieces: [ArraySlice<UInt8>] = []
    var offset = 0
    while offset < count {
      let size = Int.random(in: 1...largest, using: &generator)
      pieces.append(self[offset..<Swift.min(count, offset + size)])
      offset += size
    }
    return pieces
  }
}
