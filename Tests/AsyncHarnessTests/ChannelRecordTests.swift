import AsyncHarnessShared
import XCTest

/// The records of the channel between `harness test` and the library it preloads into a test
/// bundle: every kind written by the one encoder and read back by the one decoder, whatever
/// its strings hold; the line format pinned; a record of another version or kind refused by
/// name; a broken line refused, never a crash.
final class ChannelRecordTests: XCTestCase {
  /// One record of each kind, and of each variant of a kind.
  private static let everyKind: [ChannelRecord] = [
    .classStarted("Module.Class"),
    .classEnded("Module.Class"),
    .started(test: "Module.Class/testA"),
    .issue(test: "M.C/testA", message: "XCTAssertEqual failed: (\"1\") is not equal to (\"2\")",
           place: .file("/p/Tests/F.swift", line: 12)),
    .issue(test: "M.C/testA", message: "threw error \"E\"", place: .thrown),
    .issue(test: "M.C/testA", message: "a failure", place: .unknown),
    .ended(test: "M.C/testA", outcome: .passed, duration: 0.001_25, failures: 0, unexpected: 0),
    .ended(test: "M.C/testA", outcome: .failed, duration: 12.5, failures: 3, unexpected: 1),
    .ended(test: "M.C/testA", outcome: .skipped(reason: "not on this machine"), duration: 0, failures: 0, unexpected: 0),
    .ended(test: "M.C/testA", outcome: .skipped(reason: ""), duration: 1e-7, failures: 0, unexpected: 0),
    .children([]),
    .children(["4242 (sleep 60)", "4243 (/bin/sh -c \"echo hi\")"]),
    .schedule(steps: 0, hash: 0, jobs: 0, outside: 0, firstOutsideStep: nil, escapedAt: nil, hookedAt: nil),
    .schedule(steps: 1_024, hash: .max, jobs: 77, outside: 3, firstOutsideStep: 5, escapedAt: 900, hookedAt: 901),
    .step(3, ran: "task #2 on the main actor", virtualTime: 1_500_000_000),
    .stuck(virtualTime: .max),
    .declared(test: "M.Suite/f()/F.swift:3:4", suite: false, serialized: false),
    .declared(test: "M.Suite", suite: true, serialized: true),
    .discovered(tests: 2),
  ]

  func testEveryKindIsReadBackAsItWasWritten() throws {
    XCTAssertEqual(Set(Self.everyKind.map(\.kind)).count, 11, "a kind of record is missing here")
    for record in Self.everyKind {
      XCTAssertEqual(try ChannelRecord(decoding: record.encoded()[...]), record)
    }
  }

  /// The format, pinned: the version first, then the record's name, then its fields.
  func testALineIsTheVersionTheNameAndTheFieldsWithoutSpaces() {
    XCTAssertEqual(String(decoding: ChannelRecord.started(test: "M.C/testA").encoded(), as: UTF8.self),
                   #"{"v":1,"record":"started","test":"M.C/testA"}"#)
    XCTAssertEqual(String(decoding: ChannelRecord.issue(test: "M.C/t", message: "m", place: .file("/F.swift", line: 3)).encoded(),
                          as: UTF8.self),
                   #"{"v":1,"record":"issue","test":"M.C/t","message":"m","file":"/F.swift","line":3}"#)
    XCTAssertEqual(String(decoding: ChannelRecord.ended(test: "M.C/t", outcome: .skipped(reason: "r"), duration: 0.5, failures: 0,
                                                        unexpected: 0).encoded(), as: UTF8.self),
                   #"{"v":1,"record":"ended","test":"M.C/t","outcome":"skipped","duration":0.5,"failures":0,"unexpected":0,"#
                     + #""skipReason":"r"}"#)
    XCTAssertEqual(String(decoding: ChannelRecord.schedule(steps: 4, hash: 0xAB, jobs: 2, outside: 1, firstOutsideStep: 2,
                                                           escapedAt: nil, hookedAt: nil).encoded(), as: UTF8.self),
                   #"{"v":1,"record":"schedule","steps":4,"hash":"ab","jobs":2,"outside":1,"firstOutsideStep":2}"#)
    XCTAssertEqual(String(decoding: ChannelRecord.children(["1 (a)", "2 (b)"]).encoded(), as: UTF8.self),
                   #"{"v":1,"record":"children","processes":["1 (a)","2 (b)"]}"#)
    XCTAssertEqual(String(decoding: ChannelRecord.declared(test: "M.S", suite: true, serialized: true).encoded(), as: UTF8.self),
                   #"{"v":1,"record":"declared","test":"M.S","suite":true,"serialized":true}"#)
  }

  /// Quotes, backslashes, every control character, NUL, DEL, separators JSON leaves alone,
  /// characters beyond the BMP, what was invalid UTF-8, and a 2 MB name: each read back
  /// exactly, on one line.
  func testAnyStringIsWrittenOnOneLineAndReadBackExactly() throws {
    let controls = String(String.UnicodeScalarView((0..<0x20).map { Unicode.Scalar(UInt8($0)) }))
    let hostile = [
      "", "\"", "\\", #"\""#, #"\\\""#, controls, "a\0b", "\u{7F}", "line\nbreak\r\n", "\u{2028}\u{2029}", "é e\u{301} 😀 👩‍👩‍👧",
      String(decoding: [0x61, 0xFF, 0xC3, 0x28, 0xED, 0xA0, 0x80, 0x62], as: UTF8.self), "{\"v\":2}", "\\u0041",
      String(repeating: "MyModule.MyClass/test_" + "\"\\\n😀", count: 75_000),
    ]
    for text in hostile {
      for record: ChannelRecord in [.started(test: text), .issue(test: text, message: text, place: .file(text, line: -1)),
                                    .ended(test: text, outcome: .skipped(reason: text), duration: 0, failures: 0, unexpected: 0),
                                    .children([text, text]), .step(1, ran: text, virtualTime: 0), .classStarted(text)] {
        let line = record.encoded()
        XCTAssertFalse(line.contains { $0 < 0x20 }, "a control byte is written raw in \(record.kind)")
        XCTAssertEqual(try ChannelRecord(decoding: line[...]), record, "\(record.kind) of \(text.prefix(40).debugDescription)")
      }
    }
    XCTAssertGreaterThan(hostile.last!.utf8.count, 2 * 1024 * 1024)
  }

  /// What JSON allows and the encoder never writes is read too: `\/`, `\b`, `\f`, `\u` escapes
  /// (a surrogate pair as its one character; a surrogate alone is refused, as the core's
  /// `JSONReader` refuses it: one source reads both), and raw bytes that are not UTF-8 as U+FFFD.
  func testEscapesTheEncoderNeverWritesAndInvalidUTF8AreRead() throws {
    let read = { (line: [UInt8]) in try ChannelRecord(decoding: line[...]) }
    XCTAssertEqual(try read(Array(#"{"v":1,"record":"started","test":"a\/b\b\f\u0041\u00e9\ud83d\ude00"}"#.utf8)),
                   .started(test: "a/b\u{8}\u{C}Aé😀"))
    for alone in [#"\ud800x"#, #"\udc00"#, #"\ud800\u0041"#, #"\u12"#, #"\q"#] {
      XCTAssertThrowsError(try read(Array(#"{"v":1,"record":"started","test":"\#(alone)"}"#.utf8)), alone) {
        XCTAssertEqual($0 as? ChannelRecordError, .malformed("a string holds an escape JSON does not know, or a surrogate alone"))
      }
    }
    XCTAssertEqual(try read(Array(#"{"v":1,"record":"started","test":"a"#.utf8) + [0xFF, 0xFE] + Array(#"b"}"#.utf8)),
                   .started(test: "a\u{FFFD}\u{FFFD}b"))
    // Members it does not know are skipped; null is a missing optional member.
    XCTAssertEqual(try read(Array(#"{"v":1,"record":"issue","later":[],"test":"t","message":"m","thrown":null}"#.utf8)),
                   .issue(test: "t", message: "m", place: .unknown))
  }

  func testARecordOfAnotherVersionOrAnUnknownKindIsRefusedByName() {
    func refusal(_ line: String) -> ChannelRecordError? {
      do {
        _ = try ChannelRecord(decoding: Array(line.utf8)[...])
        return nil
      } catch {
        return error
      }
    }
    XCTAssertEqual(refusal(#"{"v":2,"record":"started","test":"t"}"#), .unknownVersion("2"))
    XCTAssertEqual(refusal(#"{"v":"1","record":"started","test":"t"}"#), .unknownVersion(#""1""#))
    XCTAssertEqual(refusal(#"{"v":2,"anything":{"at":["all"]}}"#), .unknownVersion("2"), "a later version's shape is not read")
    XCTAssertEqual(refusal(#"{"record":"started","test":"t"}"#), .unknownVersion(""), "a record from before versions")
    XCTAssertEqual(refusal(#"{"v":1,"record":"paused","test":"t"}"#), .unknownKind("paused"))
    XCTAssertEqual("\(ChannelRecordError.unknownVersion("2"))",
                   "a record of version 2, which this harness does not read (it reads version 1: the library is not the harness's own)")
    XCTAssertEqual("\(ChannelRecordError.unknownVersion(""))",
                   "a record without a version, which this harness does not read (it reads version 1: the library is not the harness's own)")
    XCTAssertEqual("\(ChannelRecordError.unknownKind("paused"))",
                   #"a record of an unknown kind, "paused" (version 1 has no such record)"#)
    // Swift Testing's own records share the channel: they are not the library's.
    XCTAssertEqual(refusal(#"{"kind":"event","payload":{"kind":"runStarted"},"version":0}"#), .notARecord)
    XCTAssertEqual(refusal(""), .notARecord)
    // Malformed records, by what is wrong.
    XCTAssertEqual(refusal(#"{"v":1,"record":"started"}"#), .malformed(#"the started record lacks a string "test""#))
    XCTAssertEqual(refusal(#"{"v":1,"record":"step","step":1.5,"ran":"r","virtualTime":0}"#),
                   .malformed(#"the step record's "step" is not an integer"#))
    XCTAssertEqual(refusal(#"{"v":1,"test":"t"}"#), .malformed(#"it has no string "record" naming it"#))
    XCTAssertEqual(refusal(#"{"v":1,"record":"started","test":"t"} "#), .malformed("the object does not end where the line does"))
    XCTAssertEqual(refusal(#"{"v":1,"record":"ended","test":"t","outcome":"won","duration":0,"failures":0,"unexpected":0}"#),
                   .malformed(#"the ended record's outcome "won" is none of passed, failed, skipped"#))
    XCTAssertEqual(refusal(#"{"v":1,"record":"started","test":"a"# + "\n" + #"b"}"#),
                   .malformed("a string holds a control character unescaped"))
  }

  /// Every cut of every record, and lines with bytes changed at random, are read or refused:
  /// the decoder never traps on what a dying bundle leaves half written.
  func testEveryCutAndChangedLineIsReadOrRefusedWithoutATrap() {
    var generator = SeededRandomGenerator(seed: 52)
    for record in Self.everyKind {
      let line = record.encoded()
      for cut in 0..<line.count {
        XCTAssertThrowsError(try ChannelRecord(decoding: line[..<cut]), "cut at \(cut) of \(record.kind)")
      }
      for _ in 0..<200 {
        var changed = line
        for _ in 0...Int(generator.next() % 3) {
          changed[Int(generator.next() % UInt64(changed.count))] = UInt8(truncatingIfNeeded: generator.next())
        }
        _ = try? ChannelRecord(decoding: changed[...])
      }
    }
  }
}
