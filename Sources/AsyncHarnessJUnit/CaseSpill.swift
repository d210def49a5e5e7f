import AsyncHarness
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The ended testcases of an open suite that left memory, in order: a suite of a million
/// tests is written with its counts first, so its testcases wait somewhere until it ends,
/// and here they wait on disk.
///
/// The file is created beside the report and unlinked at once: it never shows in the
/// directory and vanishes with the process, however the run ends. Each testcase is one
/// length-prefixed record of its fields; ``forEach(naming:_:)`` reads them back in the order
/// they were appended (their order in the suite), as many times as the suite's writing needs.
final class CaseSpill {
  /// How many testcases the file holds.
  private(set) var count = 0
  /// The order of the last testcase appended: the ones appended next come after it.
  private(set) var lastOrder = 0
  private let descriptor: Int32
  /// The report the file serves, named in errors.
  private let report: String
  /// Records not written to the file yet.
  private var pending: [UInt8] = []
  private var size = 0
  private static let chunk = 1 << 20

  /// Creates the file in `directory`, for the report at `report`.
  /// - Throws: ``JUnitError/callFailed(call:path:reason:)`` when it cannot be created.
  init(directory: String, report: String) throws {
    var template = Array("\(directory)/.asyncharness-testcases-XXXXXX".utf8CString)
    descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    self.report = report
    guard descriptor >= 0 else {
      throw JUnitError.callFailed(call: "mkstemp", path: report, reason: ReportDestination.systemError())
    }
    _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
    template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
  }

  deinit { close(descriptor) }

  /// Adds a testcase after the ones the file holds.
  func append(_ testCase: TestCase) throws {
    var record = RecordWriter()
    record.write(testCase)
    var length = RecordWriter()
    length.write(record.bytes.count)
    pending += length.bytes
    pending += record.bytes
    count += 1
    lastOrder = testCase.order
    if pending.count >= Self.chunk { try flush() }
  }

  /// Reads every testcase back, in order, naming each with `name`.
  func forEach(naming name: (TestID) -> CappedName, _ body: (TestCase) throws -> Void) throws {
    try flush()
    var offset = 0
    var bytes: [UInt8] = []
    var start = 0
    var buffer = [UInt8](repeating: 0, count: Self.chunk)
    while true {
      // A whole record from `start`, or read more.
      var cursor = start
      if let length = RecordReader.length(in: bytes, at: &cursor), bytes.count - cursor >= length {
        var reader = RecordReader(bytes: bytes[cursor..<(cursor + length)])
        try body(try reader.testCase(naming: name, report: report))
        start = cursor + length
        continue
      }
      guard offset < size else {
        guard start == bytes.count else { throw corrupt() }
        return
      }
      let read = pread(descriptor, &buffer, buffer.count, off_t(offset))
      guard read > 0 else { throw JUnitError.callFailed(call: "pread", path: report, reason: ReportDestination.systemError()) }
      offset += read
      bytes = Array(bytes[start...]) + buffer[..<read]
      start = 0
    }
  }

  private func flush() throws {
    var written = 0
    while written < pending.count {
      let count = pending[written...].withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, off_t(size + written)) }
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else { throw JUnitError.callFailed(call: "pwrite", path: report, reason: ReportDestination.systemError()) }
      written += count
    }
    size += written
    pending.removeAll(keepingCapacity: true)
  }

  private func corrupt() -> JUnitError {
    JUnitError.callFailed(call: "reading the testcases kept on disk", path: report, reason: "a record is cut short")
  }
}

/// Writes a testcase's fields: integers as LEB128, strings as their length and UTF-8 bytes,
/// optional values after a presence byte.
private struct RecordWriter {
  private(set) var bytes: [UInt8] = []

  mutating func write(_ value: Int) {
    var value = UInt64(bitPattern: Int64(value))
    repeat {
      bytes.append(UInt8(value & 0x7F) | (value > 0x7F ? 0x80 : 0))
      value >>= 7
    } while value > 0
  }

  mutating func write(_ value: String) {
    write(value.utf8.count)
    bytes += value.utf8
  }

  mutating func write(_ value: Double) {
    withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes += $0 }
  }

  mutating func write(_ value: Bool) { bytes.append(value ? 1 : 0) }

  mutating func write<T>(_ value: T?, _ write: (inout Self, T) -> Void) {
    self.write(value != nil)
    if let value { write(&self, value) }
  }

  mutating func write(_ test: TestID) {
    write(test.suite)
    write(test.name)
    write(test.host)
    write(test.repetition)
    write(test.attempt)
    write(test.schedule) { $0.write($1) }
  }

  mutating func write(_ issue: Issue) {
    write(issue.kind.rawValue)
    write(issue.message)
    write(issue.sourceLocation) { record, location in
      record.write(location.fileID)
      record.write(location.filePath)
      record.write(location.line)
      record.write(location.column)
    }
  }

  mutating func write(_ result: TestResult) {
    write(result.verdict.rawValue)
    write(result.reason) { $0.write($1) }
    write(result.issues.count)
    for issue in result.issues { write(issue) }
    write(result.scheduleTrace) { record, trace in
      record.write(trace.steps)
      record.write(Int(trace.fingerprint))
      record.write(trace.firstOutsideStep) { $0.write($1) }
    }
  }

  mutating func write(_ testCase: TestCase) {
    write(testCase.order)
    write(testCase.test)
    write(testCase.duration)
    write(testCase.result)
    write(testCase.output.map { XMLText($0).string }) { $0.write($1) }
    write(testCase.lateIssues.count)
    for issue in testCase.lateIssues { write(issue) }
    write(testCase.retriedAttempts.count)
    for attempt in testCase.retriedAttempts { write(attempt) }
  }
}

/// Reads what ``RecordWriter`` wrote.
private struct RecordReader {
  private let bytes: ArraySlice<UInt8>
  private var cursor: Int
  private var cutShort = false

  init(bytes: ArraySlice<UInt8>) {
    self.bytes = bytes
    cursor = bytes.startIndex
  }

  /// The length that starts at `cursor` in `bytes`, moving past it; `nil` when it is not all there.
  static func length(in bytes: [UInt8], at cursor: inout Int) -> Int? {
    var value: UInt64 = 0
    var shift: UInt64 = 0
    while cursor < bytes.count {
      let byte = bytes[cursor]
      cursor += 1
      value |= UInt64(byte & 0x7F) << shift
      if byte & 0x80 == 0 { return Int(truncatingIfNeeded: value) }
      shift += 7
    }
    return nil
  }

  private mutating func byte() -> UInt8 {
    guard cursor < bytes.endIndex else {
      cutShort = true
      return 0
    }
    defer { cursor += 1 }
    return bytes[cursor]
  }

  mutating func int() -> Int {
    var value: UInt64 = 0
    var shift: UInt64 = 0
    while shift < 64 {
      let byte = byte()
      value |= UInt64(byte & 0x7F) << shift
      if byte & 0x80 == 0 { break }
      shift += 7
    }
    return Int(truncatingIfNeeded: value)
  }

  mutating func string() -> String {
    let count = int()
    guard count >= 0, bytes.endIndex - cursor >= count else {
      cutShort = true
      return ""
    }
    defer { cursor += count }
    return String(decoding: bytes[cursor..<(cursor + count)], as: UTF8.self)
  }

  mutating func double() -> Double {
    var bits: UInt64 = 0
    for shift in stride(from: 0, to: 64, by: 8) { bits |= UInt64(byte()) << UInt64(shift) }
    return Double(bitPattern: bits)
  }

  mutating func bool() -> Bool { byte() != 0 }

  mutating func optional<T>(_ read: (inout Self) -> T) -> T? {
    bool() ? read(&self) : nil
  }

  mutating func test() -> TestID {
    TestID(suite: string(), name: string(), host: string(), repetition: int(), attempt: int(),
           schedule: optional { $0.string() })
  }

  mutating func issue() -> Issue {
    let kind = Issue.Kind(rawValue: string()) ?? .warning
    return Issue(kind: kind, message: string(), sourceLocation: optional { record in
      SourceLocation(fileID: record.string(), filePath: record.string(), line: record.int(), column: record.int())
    })
  }

  mutating func result() -> TestResult {
    let verdict = Verdict(rawValue: string()) ?? .errored
    let reason = optional { $0.string() }
    let issues = (0..<max(0, int())).map { _ in issue() }
    let trace = optional { record in
      ScheduleTrace(steps: record.int(), fingerprint: UInt32(truncatingIfNeeded: record.int()),
                    firstOutsideStep: record.optional { $0.int() })
    }
    return TestResult(verdict: verdict, reason: reason, issues: issues, scheduleTrace: trace)
  }

  mutating func testCase(naming name: (TestID) -> CappedName, report: String) throws -> TestCase {
    let order = int()
    let test = test()
    var testCase = TestCase(test: test, order: order, name: name(test), duration: double(), result: result(), output: nil)
    testCase.output = optional { record in
      // Already sanitized and capped: kept whole.
      var output = XMLText.captured(limit: .max)
      output.append(record.string())
      return output
    }
    testCase.lateIssues = (0..<max(0, int())).map { _ in issue() }
    testCase.retriedAttempts = try (0..<max(0, int())).map { _ in try self.testCase(naming: name, report: report) }
    guard !cutShort else {
      throw JUnitError.callFailed(call: "reading the testcases kept on disk", path: report, reason: "a record is cut short")
    }
    return testCase
  }
}
