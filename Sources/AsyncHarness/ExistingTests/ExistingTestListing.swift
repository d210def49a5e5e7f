import AsyncHarnessShared

extension ExistingTest {
  /// The tests of `<bundle> --list-tests` (XCTest): a header line (`Listing 14 tests in
  /// debug.xctest:`), an empty line, then one `Module.Class/method` a line, as many as the
  /// header says. What the bundle printed before the header or after those lines (a library's
  /// banner as it loads, an `atexit` handler's words) is its own output, not the listing.
  /// - Returns: The tests, in the listing's order.
  /// - Throws: ``ExistingTestsListingError`` naming the first line that is none of these.
  static func xctestListing(_ text: String) throws -> [ExistingTest] {
    var tests: [ExistingTest] = []
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    let header = lines.firstIndex { listedCount(inHeader: $0) != nil }
    let count = header.flatMap { listedCount(inHeader: lines[$0]) }
    for (index, line) in lines.enumerated().dropFirst(header.map { $0 + 1 } ?? 0) {
      if let count, tests.count == count { break }
      if line.isEmpty { continue }
      let parts = line.split(separator: "/", omittingEmptySubsequences: false)
      guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, !line.contains(" ") else {
        throw ExistingTestsListingError(reason: "line \(index + 1) is not Module.Class/method: \(line)")
      }
      tests.append(ExistingTest(
        library: .xctest, suite: String(parts[0]), name: String(parts[1]), id: String(line), isParameterized: false))
    }
    return tests
  }

  /// How many tests XCTest's header line (`Listing 14 tests in debug.xctest:`, `Listing 1
  /// test in …:`) says follow; `nil` for any other line.
  private static func listedCount(inHeader line: Substring) -> Int? {
    guard line.hasPrefix("Listing "), line.hasSuffix(":") else { return nil }
    let words = line.split(separator: " ")
    guard words.count >= 4, ["test", "tests"].contains(words[2]), words[3] == "in" else { return nil }
    return Int(words[1])
  }

  /// The tests of the event stream that `<bundle> --testing-library swift-testing
  /// --list-tests --event-stream-output-path FILE --event-stream-version 0` writes: one
  /// `{"kind":"test","payload":{…},"version":0}` record a line, suites and functions, in no
  /// stable order. Records of other kinds are skipped.
  /// - Returns: The test functions, each with its enclosing suite (a type of test functions
  ///   without `@Suite` is one, as Swift Testing runs it, though the stream declares none), in declaration order
  ///   (by file, line and column), which is the order `--no-parallel` runs them in.
  /// - Throws: ``ExistingTestsListingError`` naming the first line that is not a version 0
  ///   record or a `test` record that lacks a field.
  static func swiftTestingListing(_ stream: String) throws -> [ExistingTest] {
    var suites: [String: String?] = [:]
    var functions: [ExistingTest] = []
    var decoder = SwiftTestingDecoder()
    for (index, line) in stream.split(separator: "\n").enumerated() where !line.allSatisfy(\.isWhitespace) {
      let problem = { (what: String) in ExistingTestsListingError(reason: "line \(index + 1) \(what)") }
      guard let value = JSONValue.parse(line.utf8), let fields = try? JSONFields(value) else {
        throw problem("is not a JSON object")
      }
      guard (try? fields.number("version", as: Int.self)) == 0 else { throw problem("is not a version 0 record") }
      let record: SwiftTestingRecord
      do {
        record = try SwiftTestingRecord(fields)
      } catch {
        throw problem("is a test record that cannot be read: \(error)")
      }
      // The meaning of each record is the one decoder's, as a run's records are read.
      guard case .declared(let declared)? = decoder.read(record) else { continue }
      if declared.isSuite {
        suites[declared.id] = declared.displayName
        continue
      }
      guard let name = declared.name, let location = declared.location else {
        throw problem("is a test record that cannot be read: it has no \(declared.name == nil ? "name" : "sourceLocation")")
      }
      functions.append(ExistingTest(
        library: .swiftTesting, suite: "", name: name, displayName: declared.displayName, id: declared.id,
        isParameterized: declared.isParameterized, sourceLocation: location))
    }
    // A type of test functions without `@Suite` is a suite too, as Swift Testing runs it.
    for type in functions.compactMap({ SwiftTestingRecord.type(ofFunction: $0.id, named: $0.name) }) where suites[type] == nil {
      suites[type] = .some(nil)
    }
    return functions.sorted { declarationOrder($0) < declarationOrder($1) }.map { function in
      var test = function
      let suite = SwiftTestingRecord.enclosingSuite(of: function.id, among: suites.keys)
      test.suite = suite ?? SwiftTestingRecord.module(ofTestAt: function.sourceLocation, id: function.id)
      test.suiteDisplayName = suite.flatMap { suites[$0] ?? nil }
      return test
    }
  }

  /// `tests`, a Swift Testing listing, each with whether it is serialized (``isSerialized``)
  /// and the outermost serialized suite around it (``serializedSuite``) as `declarations` say: the records the preloaded library wrote during
  /// the listing (``ChannelRecord/declared(test:suite:serialized:)``, then
  /// ``ChannelRecord/discovered(tests:)`` with their number). A test is serialized when it or a
  /// suite around it (one whose ID and a slash begin its own) carries `.serialized`.
  /// - Returns: `tests` unchanged (none known serialized or not) unless the records are whole,
  ///   as many as their end says, and declare exactly the listed tests: what the library could
  ///   not find is not guessed.
  static func withSerialization(_ declarations: String, of tests: [ExistingTest]) -> [ExistingTest] {
    var declared: [String: (suite: Bool, serialized: Bool)] = [:]
    var count: Int?
    for line in declarations.split(separator: "\n") {
      switch try? ChannelRecord(decoding: Array(line.utf8)[...]) {
      case .declared(let test, let suite, let serialized)? where count == nil: declared[test] = (suite, serialized)
      case .discovered(let tests)? where count == nil: count = tests
      default: return tests
      }
    }
    let functions = declared.filter { !$0.value.suite }
    guard count == declared.count, Set(functions.keys) == Set(tests.map(\.id)) else { return tests }
    let serializedSuites = declared.filter { $0.value.suite && $0.value.serialized }.keys
    return tests.map { test in
      var test = test
      // The shortest ID around the test is the outermost suite.
      test.serializedSuite = serializedSuites.filter { test.id.hasPrefix($0 + "/") }.min { $0.count < $1.count }
      test.isSerialized = functions[test.id]?.serialized == true || test.serializedSuite != nil
      return test
    }
  }

  /// The key that sorts tests in the order they are declared: file, line, column.
  private static func declarationOrder(_ test: ExistingTest) -> (String, Int, Int) {
    (test.sourceLocation?.fileID ?? "", test.sourceLocation?.line ?? 0, test.sourceLocation?.column ?? 0)
  }
}
