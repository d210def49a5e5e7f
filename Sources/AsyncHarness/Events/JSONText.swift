import Foundation

/// A JSON text written directly into a byte buffer: the writer behind ``Event/jsonLine``.
/// Objects and arrays are written through closures, so commas are never forgotten; strings
/// are escaped as RFC 8259 requires (quote, backslash and control characters), everything
/// else is written as UTF-8, copied in runs between the bytes that need escaping. One text
/// can write line after line: ``removeAll()`` keeps its storage.
struct JSONText: ~Copyable {
  private var bytes = ByteBuffer(capacity: 256)
  private var needsComma = false
  /// The last timestamp's whole second and its text, kept by ``removeAll()``.
  private var lastSecond: (second: Int64, text: [UInt8])?
  /// The most UTF-8 bytes an issue's message keeps: a longer one is written cut, ending in
  /// ``CappedText/cutNote(bytes:limit:)``; `nil` writes every message whole.
  let messageLimit: Int?

  /// Creates an empty text; `messageLimit` bounds every issue message it writes.
  init(messageLimit: Int? = nil) {
    self.messageLimit = messageLimit
  }

  /// Empties the text and keeps its storage, so the next line is written without allocating.
  mutating func removeAll() {
    bytes.removeAll()
    needsComma = false
  }

  /// How many bytes are written.
  var count: Int { bytes.count }

  /// The text written so far.
  var array: [UInt8] { bytes.withUnsafeBytes { Array($0) } }

  /// Calls `body` with the text written so far.
  func withUnsafeBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
    try bytes.withUnsafeBytes(body)
  }

  /// Ends a line: what is written next starts a new JSON text.
  mutating func newline() {
    bytes.append(0x0A)
    needsComma = false
  }

  mutating func object(_ body: (inout JSONText) -> Void) {
    separate()
    bytes.append(UInt8(ascii: "{"))
    needsComma = false
    body(&self)
    bytes.append(UInt8(ascii: "}"))
    needsComma = true
  }

  /// Writes `{` and the members `body` writes, and leaves the object open: a piece that
  /// ``object(continuing:_:)`` finishes later, in another text. Pieces follow one another
  /// without commas.
  mutating func openObject(_ body: (inout JSONText) -> Void) {
    bytes.append(UInt8(ascii: "{"))
    needsComma = false
    body(&self)
    needsComma = false
  }

  /// An object that starts with `piece` (``openObject(_:)``) and ends with the members `body`
  /// writes.
  mutating func object(continuing piece: UnsafeBufferPointer<UInt8>, _ body: (inout JSONText) -> Void) {
    separate()
    bytes.append(contentsOf: piece)
    needsComma = piece.count > 1
    body(&self)
    bytes.append(UInt8(ascii: "}"))
    needsComma = true
  }

  mutating func array<Element>(_ elements: [Element], _ write: (inout JSONText, Element) -> Void) {
    array { json in
      for element in elements { write(&json, element) }
    }
  }

  /// An array whose elements `body` writes.
  mutating func array(_ body: (inout JSONText) -> Void) {
    separate()
    bytes.append(UInt8(ascii: "["))
    needsComma = false
    body(&self)
    bytes.append(UInt8(ascii: "]"))
    needsComma = true
  }

  /// A key followed by a value that `value` writes.
  mutating func field(_ key: StaticString, _ value: (inout JSONText) -> Void) {
    separate()
    bytes.append(UInt8(ascii: "\""))
    key.withUTF8Buffer { bytes.append(contentsOf: $0) }
    bytes.append(UInt8(ascii: "\""))
    bytes.append(UInt8(ascii: ":"))
    needsComma = false
    value(&self)
    needsComma = true
  }

  mutating func field(_ key: StaticString, _ value: String) { field(key) { $0.string(value) } }
  mutating func field(_ key: StaticString, _ value: Int) { field(key) { $0.integer(value) } }
  mutating func field(_ key: StaticString, _ value: UInt64) { field(key) { $0.integer(value) } }
  mutating func field(_ key: StaticString, _ value: Double) { field(key) { $0.number(value) } }
  mutating func field(_ key: StaticString, _ value: Bool) { field(key) { $0.literal(value ? "true" : "false") } }

  /// An integer, in decimal digits.
  mutating func integer(_ value: Int) {
    separate()
    if value < 0 { bytes.append(UInt8(ascii: "-")) }
    digits(of: UInt64(value.magnitude))
    needsComma = true
  }

  /// An unsigned integer, in decimal digits.
  mutating func integer(_ value: UInt64) {
    separate()
    digits(of: value)
    needsComma = true
  }

  /// A number as Swift describes it (the shortest text that reads back as the same value); one
  /// that is not finite (never a duration) is written as 0, which JSON can hold.
  mutating func number(_ value: Double) {
    separate()
    if value.isFinite {
      var text = value.description
      text.withUTF8 { bytes.append(contentsOf: $0) }
    } else {
      bytes.append(UInt8(ascii: "0"))
    }
    needsComma = true
  }

  /// Writes `text` as it is: a JSON literal such as `true`.
  mutating func literal(_ text: StaticString) {
    text.withUTF8Buffer { bytes.append(contentsOf: $0) }
  }

  mutating func string(_ value: String) {
    separate()
    bytes.append(UInt8(ascii: "\""))
    var value = value
    value.withUTF8 { appendEscaped($0) }
    bytes.append(UInt8(ascii: "\""))
    needsComma = true
  }

  /// `first`, `separator` and `second` as one string (`Suite/test`), without joining them first.
  mutating func string(_ first: String, _ separator: StaticString, _ second: String) {
    separate()
    bytes.append(UInt8(ascii: "\""))
    var (first, second) = (first, second)
    first.withUTF8 { appendEscaped($0) }
    separator.withUTF8Buffer { appendEscaped($0) }
    second.withUTF8 { appendEscaped($0) }
    bytes.append(UInt8(ascii: "\""))
    needsComma = true
  }

  /// A string known when the harness is built: a trace event's phase.
  mutating func string(_ value: StaticString) {
    separate()
    bytes.append(UInt8(ascii: "\""))
    value.withUTF8Buffer { appendEscaped($0) }
    bytes.append(UInt8(ascii: "\""))
    needsComma = true
  }

  /// A date as ``ISO8601Timestamp`` writes it, in quotes: `"2026-11-23T08:00:00.125Z"`. The
  /// text up to the second is kept from the timestamp before, which is almost always in the
  /// same second.
  mutating func timestamp(_ date: Date) {
    separate()
    let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    let (second, millisecond) = ISO8601Timestamp.floorDivision(milliseconds, 1000)
    if lastSecond?.second != second { lastSecond = (second, ISO8601Timestamp.quotedSecond(second)) }
    lastSecond!.text.withUnsafeBufferPointer { bytes.append(contentsOf: $0) }
    bytes.append(UInt8(ascii: "."))
    bytes.append(UInt8(ascii: "0") + UInt8(millisecond / 100))
    bytes.append(UInt8(ascii: "0") + UInt8(millisecond / 10 % 10))
    bytes.append(UInt8(ascii: "0") + UInt8(millisecond % 10))
    bytes.append(UInt8(ascii: "Z"))
    bytes.append(UInt8(ascii: "\""))
    needsComma = true
  }

  /// Appends UTF-8 text with the bytes RFC 8259 forbids in a string escaped: the runs between
  /// them are copied whole.
  private mutating func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
    var run = 0
    for index in utf8.indices {
      let byte = utf8[index]
      guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
      bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run..<index]))
      bytes.append(UInt8(ascii: "\\"))
      switch byte {
      case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
      case 0x0A: bytes.append(UInt8(ascii: "n"))
      case 0x0D: bytes.append(UInt8(ascii: "r"))
      case 0x09: bytes.append(UInt8(ascii: "t"))
      default:
        bytes.append(UInt8(ascii: "u"))
        bytes.append(UInt8(ascii: "0"))
        bytes.append(UInt8(ascii: "0"))
        bytes.append(Self.hexDigit(byte >> 4))
        bytes.append(Self.hexDigit(byte & 0xF))
      }
      run = index + 1
    }
    bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run...]))
  }

  private static func hexDigit(_ value: UInt8) -> UInt8 {
    value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
  }

  /// The decimal digits of `value`, written backwards and turned around.
  private mutating func digits(of value: UInt64) {
    if value < 10 { return bytes.append(UInt8(ascii: "0") + UInt8(value)) }  // attempts, repetitions
    let start = bytes.count
    var rest = value
    repeat {
      bytes.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10))
      rest /= 10
    } while rest > 0
    bytes.reverse(from: start)
  }

  @inline(__always)
  private mutating func separate() {
    if needsComma { bytes.append(UInt8(ascii: ",")) }
  }
}

/// Bytes in memory that grows by doubling and is kept when emptied: what ``JSONText`` writes
/// into, without the uniqueness and capacity bookkeeping an array does on every append.
struct ByteBuffer: ~Copyable {
  private var base: UnsafeMutablePointer<UInt8>
  private var capacity: Int
  private(set) var count = 0

  init(capacity: Int) {
    self.capacity = max(1, capacity)
    base = .allocate(capacity: self.capacity)
  }

  deinit { base.deallocate() }

  @inline(__always)
  mutating func append(_ byte: UInt8) {
    if count == capacity { grow(toHold: count + 1) }
    base[count] = byte
    count += 1
  }

  mutating func append(contentsOf bytes: UnsafeBufferPointer<UInt8>) {
    guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
    if count + bytes.count > capacity { grow(toHold: count + bytes.count) }
    (base + count).initialize(from: source, count: bytes.count)
    count += bytes.count
  }

  /// Turns around the bytes from `start` to the end.
  mutating func reverse(from start: Int) {
    var tail = UnsafeMutableBufferPointer(start: base + start, count: count - start)
    tail.reverse()
  }

  /// Empties the buffer and keeps its memory.
  mutating func removeAll() { count = 0 }

  func withUnsafeBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
    try body(UnsafeBufferPointer(start: base, count: count))
  }

  @inline(never)
  private mutating func grow(toHold minimum: Int) {
    let grown = max(capacity * 2, minimum)
    let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
    moved.initialize(from: base, count: count)
    base.deallocate()
    base = moved
    capacity = grown
  }
}

/// Timestamps as events write them, `2026-11-23T08:00:00.125Z`, converted without a
/// formatter; reading also accepts whole seconds (schema version 1) and, through
/// `ISO8601DateFormatter`, other ISO 8601 forms.
enum ISO8601Timestamp {
  /// The opening quote and `YYYY-MM-DDTHH:MM:SS` of the whole second `second` since 1970,
  /// written digit by digit (years 0–9999); ``JSONText`` adds the milliseconds.
  static func quotedSecond(_ second: Int64) -> [UInt8] {
    let (days, seconds) = floorDivision(second, 86_400)
    let (year, month, day) = civilDate(fromDays: days)
    var text: [UInt8] = [0x22]
    text.reserveCapacity(20)
    func twoDigits(_ value: Int64) {
      text.append(UInt8(ascii: "0") + UInt8(value / 10 % 10))
      text.append(UInt8(ascii: "0") + UInt8(value % 10))
    }
    twoDigits(year / 100); twoDigits(year); text.append(UInt8(ascii: "-"))
    twoDigits(month); text.append(UInt8(ascii: "-")); twoDigits(day); text.append(UInt8(ascii: "T"))
    twoDigits(seconds / 3600); text.append(UInt8(ascii: ":")); twoDigits(seconds / 60 % 60); text.append(UInt8(ascii: ":"))
    twoDigits(seconds % 60)
    return text
  }

  static func date(from text: String) -> Date? {
    let utf8 = Array(text.utf8)
    func number(_ range: Range<Int>) -> Int64? {
      guard range.upperBound <= utf8.count else { return nil }
      var value: Int64 = 0
      for byte in utf8[range] {
        guard (0x30...0x39).contains(byte) else { return nil }
        value = value * 10 + Int64(byte - 0x30)
      }
      return value
    }
    func at(_ index: Int, _ character: Unicode.Scalar) -> Bool {
      index < utf8.count && utf8[index] == UInt8(ascii: character)
    }
    guard utf8.count >= 20, at(4, "-"), at(7, "-"), at(10, "T"), at(13, ":"), at(16, ":"),
          let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
          let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
          (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
    else { return formatted(text) }
    var milliseconds: Int64 = 0
    if utf8.count == 24, at(19, "."), at(23, "Z"), let fraction = number(20..<23) {
      milliseconds = fraction
    } else if !(utf8.count == 20 && at(19, "Z")) {
      return formatted(text)
    }
    let days = daysFromCivil(year: year, month: month, day: day)
    let total = ((days * 24 + hour) * 60 + minute) * 60 + second
    return Date(timeIntervalSince1970: Double(total) + Double(milliseconds) / 1000)
  }

  private static func formatted(_ text: String) -> Date? {
    let formatter = ISO8601DateFormatter()
    if let date = formatter.date(from: text) { return date }
    formatter.formatOptions.insert(.withFractionalSeconds)
    return formatter.date(from: text)
  }

  static func floorDivision(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
    let quotient = value >= 0 ? value / divisor : (value - divisor + 1) / divisor
    return (quotient, value - quotient * divisor)
  }

  /// Howard Hinnant's `civil_from_days`: the proleptic Gregorian date of a day count.
  private static func civilDate(fromDays days: Int64) -> (Int64, Int64, Int64) {
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthIndex = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
    let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
  }

  /// Howard Hinnant's `days_from_civil`, the inverse of ``civilDate(fromDays:)``.
  private static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }
}
