@_spi(ForToolsIntegrationOnly) import AsyncHarness
import Foundation

// MARK: 12. Reading JSON

/// Three kinds of line a run reads by the thousand, each read by the harness's own reader as
/// a run reads it, by the same reader building only the JSON value tree, by Foundation's
/// `JSONDecoder` into `Decodable` structs of the fields the harness reads, and by
/// `JSONSerialization` (a tree of Foundation objects, no field read): nanoseconds per line,
/// the fastest of 3 passes over `counts.jsonLines` lines, and each reader against the fastest
/// of its kind.
func measureReadingJSON(_ counts: Counts, _ report: Report) {
  let count = counts.jsonLines
  report.section("12. Reading JSON: \(count) lines of each kind, as a run reads them (ns per line, fastest of 3 passes)")
  // Each kind's lines, the harness's reader of them (given a line as text and as bytes), and
  // `JSONDecoder` into its fields.
  let kinds: [(name: String, lines: [String], ours: String, read: (String, [UInt8]) throws -> Void,
               decode: (JSONDecoder, Data) throws -> Void)] = [
    ("event lines", eventLines(count), "Event(jsonLine:)", { text, _ in _ = try Event(jsonLine: text) },
     { _ = try $0.decode(DecodedEvent.self, from: $1) }),
    ("worker marks", markLines(count), "TimelineMark(line:)", { _, bytes in
      guard try JSONLineReading.mark(bytes) else { throw NotRead() }
    }, { _ = try $0.decode(DecodedMark.self, from: $1) }),
    ("Swift Testing records", swiftTestingLines(count), "SwiftTestingRecord(line:)",
     { _, bytes in _ = try JSONLineReading.swiftTestingRecord(bytes) }, { _ = try $0.decode(DecodedRecord.self, from: $1) }),
  ]
  print("kind of line            reader                            bytes   ns/line      lines/s  × fastest  failed")
  for kind in kinds {
    let bytes = kind.lines.map { Array($0.utf8) }
    let data = bytes.map { Data($0) }
    let decoder = JSONDecoder()
    let readers: [(String, () -> Int)] = [
      (kind.ours, { zip(kind.lines, bytes).count { (try? kind.read($0, $1)) == nil } }),
      ("the same reader, tree only", { bytes.count { !JSONLineReading.tree($0) } }),
      ("JSONDecoder, the same fields", { data.count { (try? kind.decode(decoder, $0)) == nil } }),
      ("JSONSerialization, tree only", { data.count { (try? JSONSerialization.jsonObject(with: $0)) == nil } }),
    ]
    let figures = readers.map { name, readAll in (name, fastestPass(lines: count, readAll)) }
    let fastest = figures.map(\.1.nanoseconds).min() ?? .nan
    let averageBytes = bytes.reduce(0) { $0 + $1.count } / max(1, bytes.count)
    for (name, figure) in figures {
      print(kind.name.padding(toLength: 23, withPad: " ", startingAt: 0) + " "
        + name.padding(toLength: 32, withPad: " ", startingAt: 0)
        + String(format: " %6d %9.0f %12.0f %9.2f× %7d", averageBytes, figure.nanoseconds, 1e9 / figure.nanoseconds,
                 figure.nanoseconds / fastest, figure.failed))
    }
    fflush(nil)
    let foundation = figures.dropFirst(2).min { $0.1.nanoseconds < $1.1.nanoseconds }!
    report.add(Row(label: "reading JSON · \(kind.name)", ours: figures[0].1.nanoseconds,
                   anchorLabel: "\(foundation.0)", anchor: foundation.1.nanoseconds, unit: "ns"))
  }
}

/// A line a reader refused.
private struct NotRead: Error {}

/// Nanoseconds per line of the fastest of 3 passes of `readAll` over `lines` lines, and how
/// many lines it refused (each pass refuses the same).
private func fastestPass(lines: Int, _ readAll: () -> Int) -> (nanoseconds: Double, failed: Int) {
  var best = UInt64.max
  var failed = 0
  for _ in 0..<3 {
    let start = monotonicNanos()
    failed = readAll()
    best = min(best, monotonicNanos() - start)
  }
  return (Double(best) / Double(lines), failed)
}

/// `count` event lines as a worker sends them and a run reads them: each test's
/// `testStarted` and `testEnded`, and for one test in ten an `issueRecorded` before its end,
/// the test failing.
private func eventLines(_ count: Int) -> [String] {
  var lines: [String] = []
  lines.reserveCapacity(count)
  var at = Date(timeIntervalSince1970: 1_795_680_000)
  var index = 0
  while lines.count < count {
    let test = TestID(suite: "MessageLoaderTests", name: "loadsMessage\(index)WithinItsDeadline", host: "semaphore")
    let fails = index % 10 == 9
    let issue = Issue(kind: .expectationFailed, message: "expected \"hello\" after 0.25 s, got \"\" (test \(index))",
                      sourceLocation: SourceLocation(fileID: "LoaderTests/MessageLoaderTests.swift",
                                                     filePath: "/home/dev/Loader/Tests/LoaderTests/MessageLoaderTests.swift",
                                                     line: 40 + index % 200, column: 7))
    var events = [Event(.testStarted(test), timestamp: at, lane: index % 2)]
    if fails { events.append(Event(.issueRecorded(test, issue), timestamp: at + 0.0007)) }
    let result = TestResult(verdict: fails ? .failed : .passed, issues: fails ? [issue] : [])
    events.append(Event(.testEnded(test, TestEnd(once: result, duration: 0.0012, lane: index % 2)), timestamp: at + 0.0012))
    lines += events.map { String($0.jsonLine.dropLast()) }
    at += 0.002
    index += 1
  }
  return Array(lines.prefix(count))
}

/// `count` marks as a worker that reports waits writes them: a wait's end, then a schedule
/// step, in turn.
private func markLines(_ count: Int) -> [String] {
  (0..<count).map { index in
    let at = 1_795_680_000_125_431 + index * 37
    return index % 2 == 0
      ? #"{"mark":"wait","protocol":7,"ref":\#(index / 8),"at":\#(at),"awaited":"expectation \"loaded \#(index)\"","outcome":"completed","durationNanoseconds":\#(2_500_000 + index)}"#
      : #"{"mark":"step","protocol":7,"ref":\#(index / 8),"at":\#(at),"step":\#(index % 1000),"ran":"task #\#(index % 7)","virtualTimeNanoseconds":\#(index * 1000)}"#
  }
}

/// `count` records of a Swift Testing event stream (version 0), as a test bundle writes them
/// (docs/RUNNING-EXISTING-TESTS.md): each test declared (`kind` `test`), then its
/// `testStarted`, `testCaseStarted`, `testCaseEnded` and `testEnded` events, and for one
/// test in ten an `issueRecorded` with its backtrace.
private func swiftTestingLines(_ count: Int) -> [String] {
  var lines: [String] = []
  lines.reserveCapacity(count)
  var index = 0
  while lines.count < count {
    let line = 20 + index % 300
    let id = "LedgerTests.LedgerSuite/balanceAfterDeposit\(index)()/LedgerSwiftTests.swift:\(line):4"
    let location = #"{"_filePath":"/home/dev/Ledger/Tests/LedgerTests/LedgerSwiftTests.swift","column":4,"fileID":"LedgerTests/LedgerSwiftTests.swift","line":\#(line)}"#
    let instant = #"{"absolute":\#(1124.870436233 + Double(index) / 1000),"since1970":\#(1795647983.7690282 + Double(index) / 1000)}"#
    func event(_ kind: String, _ text: String, _ extra: String = "") -> String {
      #"{"kind":"event","payload":{\#(extra)"instant":\#(instant),"kind":"\#(kind)","messages":[\#(text)],"testID":"\#(id)"},"version":0}"#
    }
    let name = "balanceAfterDeposit\(index)()"
    lines.append(#"{"kind":"test","payload":{"id":"\#(id)","isParameterized":false,"kind":"function","name":"\#(name)","sourceLocation":\#(location)},"version":0}"#)
    lines.append(event("testStarted", #"{"symbol":"default","text":"Test \#(name) started."}"#))
    lines.append(event("testCaseStarted", "", #""_testCase":{"displayName":"","id":"test case \#(index)"},"#))
    if index % 10 == 9 {
      let backtrace = (0..<12).map { String(94_823_612_416_000 + $0 * 4096 + index) }.joined(separator: ",")
      let issue = #""_comments":[],"_sourceLocation":\#(location),"issue":{"_backtrace":[\#(backtrace)],"isKnown":false,"sourceLocation":\#(location)},"#
      lines.append(event("issueRecorded", #"{"symbol":"fail","text":"Expectation failed: (ledger.balance → \#(index)) == \#(index + 1)"}"#, issue))
    }
    lines.append(event("testCaseEnded", "", #""_testCase":{"displayName":"","id":"test case \#(index)"},"#))
    lines.append(event("testEnded", #"{"symbol":"pass","text":"Test \#(name) passed after 0.001 seconds."}"#))
    index += 1
  }
  return Array(lines.prefix(count))
}

/// An event line's fields as ``Event/init(jsonLine:)`` reads them, for `JSONDecoder`.
private struct DecodedEvent: Decodable {
  struct Test: Decodable {
    var suite: String, name: String, waiter: String, repetition: Int, attempt: Int?, schedule: String?
  }
  struct Location: Decodable {
    var fileID: String, filePath: String, line: Int, column: Int
  }
  struct Issue: Decodable {
    var kind: String, message: String, sourceLocation: Location?
  }
  struct Attempt: Decodable {
    var attempt: Int, outcome: String, duration: Double, issues: Int, lane: Int?, scheduleTrace: String?
  }
  var version: Int
  var timestamp: String
  var kind: String
  var test: Test?
  var issue: Issue?
  var verdict: String?
  var reason: String?
  var attempts: [Attempt]?
  var lane: Int?
}

/// A mark's fields, for `JSONDecoder`.
private struct DecodedMark: Decodable {
  var mark: String
  var `protocol`: Int
  var ref: Int
  var at: Int64
  var awaited: String?
  var outcome: String?
  var durationNanoseconds: Int64?
  var step: Int?
  var ran: String?
  var virtualTimeNanoseconds: Int64?
}

/// The fields of a Swift Testing record that `SwiftTestingRecord` reads, for `JSONDecoder`.
private struct DecodedRecord: Decodable {
  struct Location: Decodable {
    var fileID: String, _filePath: String?, line: Int, column: Int
  }
  struct Instant: Decodable { var since1970: Double }
  struct Message: Decodable { var symbol: String, text: String }
  struct ThrownError: Decodable { var description: String? }
  struct RecordedIssue: Decodable {
    var isKnown: Bool?, severity: String?, sourceLocation: Location?, _error: ThrownError?
  }
  struct TestCase: Decodable { var displayName: String? }
  struct Payload: Decodable {
    var id: String?, kind: String?, name: String?, sourceLocation: Location?, instant: Instant?, testID: String?
    var messages: [Message]?, issue: RecordedIssue?, _comments: [String]?, _testCase: TestCase?
  }
  var version: Int
  var kind: String
  var payload: Payload
}
