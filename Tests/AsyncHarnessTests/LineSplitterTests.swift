@testable import AsyncHarness
import AsyncHarnessShared
import XCTest

/// The worker channel's line splitter: lines come out whole and in order, however the reads
/// cut the stream.
final class LineSplitterTests: XCTestCase {
  func testLinesComeOutWholeWhateverPiecesTheyArriveIn() {
    let lines = ["first", "", "a longer line with spaces", "é", String(repeating: "x", count: 5_000), "last"]
    let stream = Array(lines.joined(separator: "\n").utf8) + [0x0A]
    var generator = SeededRandomGenerator(seed: 11)
    for _ in 0..<200 {
      var splitter = LineSplitter()
      var seen: [String] = []
      var offset = 0
      while offset < stream.count {
        let size = Int.random(in: 1...300, using: &generator)
        splitter.append(stream[offset..<min(stream.count, offset + size)])
        offset += size
        while let line = splitter.next() { seen.append(String(decoding: line, as: UTF8.self)) }
      }
      XCTAssertEqual(seen, lines)
    }
  }

  func testAnIncompleteLineWaitsForItsNewline() {
    var splitter = LineSplitter()
    splitter.append(Array("no newline yet".utf8)[...])
    XCTAssertNil(splitter.next())
    splitter.append(Array(", now\nnext".utf8)[...])
    XCTAssertEqual(splitter.next().map { String(decoding: $0, as: UTF8.self) }, "no newline yet, now")
    XCTAssertNil(splitter.next())
  }

  func testATwoMegabyteLineReadInSixtyFourKilobytePiecesIsOneLine() {
    let line = [UInt8](repeating: UInt8(ascii: "n"), count: 2_000_000) + [0x0A]
    var splitter = LineSplitter()
    var found: [Int] = []
    for start in stride(from: 0, to: line.count, by: 65_536) {
      splitter.append(line[start..<min(line.count, start + 65_536)])
      while let next = splitter.next() { found.append(next.count) }
    }
    XCTAssertEqual(found, [2_000_000])
  }

  /// Binary bytes (NUL, a carriage return, invalid UTF-8) belong to their line like any
  /// other: only the newline cuts.
  func testBinaryBytesStayInTheirLine() {
    let line: [UInt8] = [0x00, 0xFF, 0xC3, 0x0D, 0x01, 0xED, 0xA0, 0x80]
    var splitter = LineSplitter()
    splitter.append((line + [0x0A] + line + [0x0A])[...])
    XCTAssertEqual(splitter.next().map(Array.init), line)
    XCTAssertEqual(splitter.next().map(Array.init), line)
    XCTAssertNil(splitter.next())
  }

  /// A line handed out keeps its bytes when a later read makes the splitter drop what it
  /// handed out.
  func testALineHandedOutStaysWholeWhenMoreIsRead() {
    var splitter = LineSplitter()
    splitter.append(Array("one\ntwo\n".utf8)[...])
    let lines = [splitter.next(), splitter.next()]
    splitter.append(Array("three\n".utf8)[...])
    XCTAssertEqual(lines.map { $0.map { String(decoding: $0, as: UTF8.self) } }, ["one", "two"])
    XCTAssertEqual(splitter.next().map { String(decoding: $0, as: UTF8.self) }, "three")
  }
}
