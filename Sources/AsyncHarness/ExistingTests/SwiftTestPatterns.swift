/// `--filter` and `--skip` as `swift test` reads them for a package's own tests: each a regular
/// expression (Swift's `Regex` syntax) that a test's ID contains, anywhere in it. The ID is the
/// one `swift test` matches: `Module.Class/method` for XCTest (SwiftPM matches that alone), and
/// for Swift Testing the test's full ID, `Module.Suite/name()/File.swift:line:column`, or the ID
/// of any suite around it (`Module.Suite`, `Module.Suite/Nested`), as Swift Testing selects a
/// suite with every test in it. `id:` before a pattern is dropped, as Swift Testing drops it.
///
/// A test is kept as ``Configuration/keeps(filters:skips:matching:)`` says.
struct SwiftTestPatterns: Sendable {
  /// The compiled `--filter` patterns; empty selects every test.
  nonisolated(unsafe) private let filters: [Regex<AnyRegexOutput>]
  /// The compiled `--skip` patterns.
  nonisolated(unsafe) private let skips: [Regex<AnyRegexOutput>]

  /// Compiles the patterns; one that is not a regular expression matches its own text (the
  /// command line rejects it first: ``validate(_:flag:)``).
  init(filters: [String], skips: [String]) {
    self.filters = filters.map(Self.compiled)
    self.skips = skips.map(Self.compiled)
  }

  /// Checks that each pattern of `flag` is a regular expression.
  /// - Throws: a message naming the flag, the pattern and what is wrong with it.
  static func validate(_ patterns: [String], flag: String) throws(PatternError) {
    for pattern in patterns {
      do {
        _ = try Regex(withoutPrefix(pattern))
      } catch {
        throw PatternError(description: "\(flag) \"\(pattern)\" is not a regular expression: \(error)")
      }
    }
  }

  /// A pattern that is not a regular expression.
  struct PatternError: Error, CustomStringConvertible {
    let description: String
  }

  /// Whether `test` runs: a filter matches it (or there is none), and no skip does.
  func selects(_ test: ExistingTest) -> Bool {
    let ids = Self.ids(of: test)
    let matches = { (regex: Regex<AnyRegexOutput>) in ids.contains { $0.contains(regex) } }
    return Configuration.keeps(filters: filters, skips: skips, matching: matches)
  }

  /// The IDs a pattern is matched against: the test's, and for Swift Testing each suite's around it.
  static func ids(of test: ExistingTest) -> [String] {
    guard test.library == .swiftTesting, test.suite.contains(".") else { return [test.id] }
    // `Module.Suite/Nested`: the suites `Module.Suite` and `Module.Suite/Nested`.
    let components = test.suite.split(separator: "/", omittingEmptySubsequences: false)
    return components.indices.map { components[...$0].joined(separator: "/") } + [test.id]
  }

  private static func compiled(_ pattern: String) -> Regex<AnyRegexOutput> {
    let text = withoutPrefix(pattern)
    return (try? Regex(text)) ?? Regex(Regex<Substring>(verbatim: text))
  }

  private static func withoutPrefix(_ pattern: String) -> String {
    pattern.hasPrefix("id:") ? String(pattern.dropFirst(3)) : pattern
  }
}
