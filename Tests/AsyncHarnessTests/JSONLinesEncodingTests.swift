import AsyncHarness
import Foundation
import HarnessTestSupport
import XCTest

/// The JSON Lines encoder copies text in runs between the bytes it must escape and writes each
/// line into storage the reporter reuses, keeping the last timestamp's text up to the second:
/// these pin the escapes byte by byte, the runs at their edges, text far longer than the
/// buffer starts with, lines written one after another through the same buffer, numbers and
/// timestamps.
final class JSONLinesEncodingTests: XCTestCase {
  private let test = TestID(suite: "S", name: "t", host: "semaphore")
  private let instant = Date(timeIntervalSince1970: 1_800_000_000)

  /// The `output` value of an `outputCaptured` line for `text`, as written between its quotes.
  private func escaped(_ text: String) -> String {
    let line = Event(.outputCaptured(test, text), timestamp: instant).jsonLine
    let prefix = #"{"kind":"outputCaptured","output":""#
    let suffix = #"","test":{"attempt":1,"name":"t","repetition":1,"suite":"S","waiter":"semaphore"},"timestamp":"2027-01-15T08:00:00.000Z","version":3}"# + "\n"
    XCTAssertTrue(line.hasPrefix(prefix) && line.hasSuffix(suffix), line)
    return String(line.dropFirst(prefix.count).dropLast(suffix.count))
  }

  func testEveryControlCharacterQuoteAndBackslashIsEscaped() {
    let controls = String(decoding: Array(0..<0x20) as [UInt8], as: UTF8.self)
    XCTAssertEqual(escaped(controls), #"\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\u0008\t\n\u000b\u000c\r\u000e\u000f"#
      + #"\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001a\u001b\u001c\u001d\u001e\u001f"#)
    XCTAssertEqual(escaped(#"say "hi" \ bye"#), #"say \"hi\" \\ bye"#)
  }

  func testEverythingElseIsWrittenAsItsOwnUTF8() {
    let printable = String(decoding: Array(0x20...0x7F).filter { $0 != 0x22 && $0 != 0x5C } as [UInt8], as: UTF8.self)
    XCTAssertEqual(escaped(printable), printable)
    // C1 controls, the line and paragraph separators, noncharacters, the last scalar,
    // combining marks, a flag, and what invalid UTF-8 turns into (U+FFFD).
    let unicode = "\u{80}\u{9F} \u{2028}\u{2029} \u{FFFE}\u{FFFF} \u{10FFFF} e\u{301} 🇫🇷 "
      + String(decoding: [0xFF, 0xC3, 0x28, 0xED, 0xA0, 0x80] as [UInt8], as: UTF8.self)
    XCTAssertEqual(Array(escaped(unicode).utf8), Array(unicode.utf8))
  }

  /// Escapes at the start and end of the text, side by side, alone, and nothing at all.
  func testEscapesAtTheEdgesOfTheRunsBetweenThem() {
    let cases = [
      ("", ""), ("\"", #"\""#), ("\\", #"\\"#), ("\n", #"\n"#),
      ("\"abc", #"\"abc"#), ("abc\\", #"abc\\"#), ("\"\\\n\t\r\u{1}", #"\"\\\n\t\r\u0001"#),
      ("a\"b\\c", #"a\"b\\c"#), ("é\"🦊\\", #"é\"🦊\\"#), ("\\\\\"\"", #"\\\\\"\""#),
    ]
    for (text, expected) in cases {
      XCTAssertEqual(escaped(text), expected, text.debugDescription)
    }
  }

  /// A quote or backslash right before, at and after the sizes a buffer grows through, in
  /// text up to 1 MiB: escaped where they are, the rest copied whole, and read back the same.
  func testQuotesAndBackslashesAroundBufferSizesInLongText() throws {
    for size in [255, 256, 257, 4095, 4096, 4097, 65_535, 65_536, 65_537, 1_048_576] {
      var bytes = [UInt8](repeating: UInt8(ascii: "x"), count: size)
      var expected: [UInt8] = []
      for position in Set([0, 1, size / 2, size - 2, size - 1, 127, 128, 255, 256, 4095, 4096, 65_535, 65_536])
      where position < size {
        bytes[position] = position % 2 == 0 ? UInt8(ascii: "\"") : UInt8(ascii: "\\")
      }
      for byte in bytes {
        if byte != UInt8(ascii: "x") { expected.append(UInt8(ascii: "\\")) }
        expected.append(byte)
      }
      let text = String(decoding: bytes, as: UTF8.self)
      XCTAssertEqual(Array(escaped(text).utf8), expected, "\(size) bytes")
      let event = Event(.outputCaptured(test, text), timestamp: instant)
      XCTAssertEqual(try Event(jsonLine: event.jsonLine), event, "\(size) bytes")
    }
  }

  /// The reporter encodes each line in the storage the one before used: a short line after a
  /// long one keeps nothing of it, and every line is the event's own.
  func testLinesWrittenOneAfterAnotherShareNothing() throws {
    let written = WrittenText()
    let reporter = JSONLinesReporter(write: written.write)
    let texts = [String(repeating: "\"long\\", count: 20_000), "short", "", String(repeating: "é\n", count: 300), "z"]
    let events = texts.map { Event(.outputCaptured(test, $0), timestamp: instant) }
      + [Event(.testEnded(test, TestEnd(once: TestResult(verdict: .passed), duration: 0.5)), timestamp: instant)]
    for event in events { try reporter.handle(event) }
    XCTAssertEqual(written.lines, events.map(\.jsonLine))
    XCTAssertEqual(try written.lines.map { try Event(jsonLine: $0) }, events)
  }

  /// Integers are written digit by digit, durations as Swift describes them, and a duration
  /// that is not finite as 0.
  func testNumbers() throws {
    let location = SourceLocation(fileID: "F.swift", filePath: "/F.swift", line: Int.min, column: Int.max)
    let issue = Issue(kind: .warning, message: "m", sourceLocation: location)
    let line = Event(.issueRecorded(test, issue), timestamp: instant).jsonLine
    XCTAssertTrue(line.contains(#""sourceLocation":{"column":9223372036854775807,"fileID":"F.swift","filePath":"/F.swift","line":-9223372036854775808}"#), line)
    let seeds: [UInt64] = [0, 7, 10, UInt64.max]
    for seed in seeds {
      let line = Event(.runStarted(RunInfo(harnessVersion: "1", seed: seed, waiters: [])), timestamp: instant).jsonLine
      XCTAssertTrue(line.contains(#""seed":\#(seed),"#), line)
    }
    let durations: [(Double, String)] = [
      (0, "0.0"), (1e-7, "1e-07"), (0.1, "0.1"), (12345.678, "12345.678"), (-2.5, "-2.5"),
      (.nan, "0"), (.infinity, "0"), (-.infinity, "0"),
    ]
    for (duration, expected) in durations {
      let line = Event(.runEnded(Summary(), duration: duration), timestamp: instant).jsonLine
      XCTAssertTrue(line.hasPrefix(#"{"duration":\#(expected),"kind":"runEnded""#), line)
    }
  }

  /// Timestamps one after another through one reporter: within a second, across seconds,
  /// days and years, backwards, before 1970 and at the end of year 9999.
  func testTimestampsThroughOneReporter() throws {
    let stamps: [(TimeInterval, String)] = [
      (1_800_000_000, "2027-01-15T08:00:00.000Z"), (1_800_000_000.999, "2027-01-15T08:00:00.999Z"),
      (1_800_000_001, "2027-01-15T08:00:01.000Z"), (1_800_000_000.5, "2027-01-15T08:00:00.500Z"),
      (1_800_000_000.5 + 86_400, "2027-01-16T08:00:00.500Z"), (951_782_400.042, "2000-02-29T00:00:00.042Z"),
      (0, "1970-01-01T00:00:00.000Z"), (-0.5, "1969-12-31T23:59:59.500Z"),
      (253_402_300_799.999, "9999-12-31T23:59:59.999Z"), (1_800_000_000, "2027-01-15T08:00:00.000Z"),
    ]
    let written = WrittenText()
    let reporter = JSONLinesReporter(write: written.write)
    for (seconds, _) in stamps {
      try reporter.handle(Event(.testStarted(test), timestamp: Date(timeIntervalSince1970: seconds)))
    }
    XCTAssertEqual(written.lines.count, stamps.count)
    for (line, (seconds, expected)) in zip(written.lines, stamps) {
      XCTAssertTrue(line.contains(#""timestamp":"\#(expected)","#), line)
      XCTAssertEqual(try Event(jsonLine: line).timestamp.timeIntervalSince1970, seconds, accuracy: 0.0005, line)
    }
  }
}
