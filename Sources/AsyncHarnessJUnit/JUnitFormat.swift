import AsyncHarness
import Foundation

/// How numbers, dates and counts are written, shared by the reporter and merging.
enum JUnitFormat {
  /// `seconds` with exactly three decimals and no exponent, independent of the locale, as
  /// `%.3f` in the POSIX locale writes it. Negative, NaN and infinite durations are written
  /// as `0.000`; absurdly large ones are capped at a thousand years.
  static func time(_ seconds: Double) -> String {
    guard seconds.isFinite, seconds > 0 else { return "0.000" }
    let millis = UInt64(min((seconds * 1000).rounded(), 31_557_600_000_000))
    // Written digit by digit (at most 11 before the point): every testcase has a time.
    return String(unsafeUninitializedCapacity: 16) { text in
      var count = 0
      var whole = millis / 1000
      repeat {
        text[count] = UInt8(ascii: "0") + UInt8(whole % 10)
        whole /= 10
        count += 1
      } while whole > 0
      var digits = UnsafeMutableBufferPointer(rebasing: text[..<count])
      digits.reverse()
      text[count] = UInt8(ascii: ".")
      let fraction = millis % 1000
      text[count + 1] = UInt8(ascii: "0") + UInt8(fraction / 100)
      text[count + 2] = UInt8(ascii: "0") + UInt8(fraction / 10 % 10)
      text[count + 3] = UInt8(ascii: "0") + UInt8(fraction % 10)
      return count + 4
    }
  }

  /// The name of a report's `<testsuites>`: `AsyncHarness`, or `AsyncHarness (shard I/N)`
  /// for a shard's, which ``mergeJUnitReports(_:into:duplicates:expectShards:)`` checks.
  static func reportName(shard: Shard?) -> String {
    shard.map { "AsyncHarness (shard \($0))" } ?? "AsyncHarness"
  }

  /// The shard a report's name (``reportName(shard:)``) gives, or nil.
  static func shard(fromReportName name: String) -> Shard? {
    guard name.hasPrefix("AsyncHarness (shard "), name.hasSuffix(")") else { return nil }
    let parts = name.dropFirst("AsyncHarness (shard ".count).dropLast().split(separator: "/")
    guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]) else { return nil }
    return Shard(index: index, count: count)
  }

  /// An ISO 8601 `xs:dateTime` in UTC, e.g. `2026-11-22T04:21:49Z`.
  static func timestamp(_ date: Date) -> String {
    date.formatted(Date.ISO8601FormatStyle())
  }
}

/// The count attributes of a `<testsuite>` or `<testsuites>`, computed from the testcases
/// actually written: `tests` counts every testcase, the others count the testcases holding
/// a `<failure>`, `<error>` or `<skipped>` element.
struct JUnitCounts {
  var tests = 0
  var failures = 0
  var errors = 0
  var skipped = 0

  /// Counts one testcase whose result element (if any) is named `element`.
  mutating func count(resultElement element: String?) {
    tests += 1
    switch element {
    case "failure": failures += 1
    case "error": errors += 1
    case "skipped": skipped += 1
    default: break
    }
  }

  /// Adds another suite's counts.
  mutating func add(_ other: JUnitCounts) {
    tests += other.tests
    failures += other.failures
    errors += other.errors
    skipped += other.skipped
  }
}
