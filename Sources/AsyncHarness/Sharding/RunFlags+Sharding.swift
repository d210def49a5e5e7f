import ArgumentParser
import Foundation

extension RunFlags {
  /// How `--list` writes the selected tests.
  enum ListFormat: String, CaseIterable, ExpressibleByArgument {
    /// One test ID a line (``TestPath``).
    case text
    /// One JSON object a line: `id`, `suite`, `name`, `tags`, `file` and `line`.
    case json
  }

  /// Checks the sharding flags on their own.
  func validateSharding() throws {
    if format != nil, !list { throw ValidationError("--format applies to --list only") }
    if let shard { _ = try Self.shard(parsing: shard) }
  }

  /// Reads `--shard INDEX/COUNT`.
  /// - Throws: `ValidationError` with the message a user reads.
  static func shard(parsing text: String) throws -> Shard {
    let parts = text.split(separator: "/", omittingEmptySubsequences: false)
    guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]) else {
      throw ValidationError("--shard \"\(text)\" is not INDEX/COUNT, e.g. --shard 1/3")
    }
    guard count >= 1 else { throw ValidationError("--shard \(text): COUNT must be at least 1") }
    if index == 0 {
      throw ValidationError("--shard \(text): shards are counted from 1 (1/\(count) to \(count)/\(count)); "
        + "add 1 to an index counted from 0, such as CIRCLE_NODE_INDEX")
    }
    guard (1...count).contains(index) else { throw ValidationError("--shard \(text): INDEX must be from 1 to \(count)") }
    return Shard(index: index, count: count)
  }

  /// Fills in, from the Bazel test protocol's variables, what the flags leave out: the
  /// JUnit report (when the executable has JUnit support) and the filter.
  mutating func adopt(_ bazel: BazelTestProtocol, hasJUnit: Bool) {
    if junit == nil, hasJUnit { junit = bazel.xmlOutputFile }
    if filter.isEmpty, only.isEmpty, onlyFrom == nil, let testFilter = bazel.testFilter { filter = [testFilter] }
  }

  /// Applies `--only`, `--only-from`, `--shard` (or the protocol's shard variables),
  /// `--shard-by` and `--shard-timings`, whose times also balance the lanes of `--workers N`
  /// (``Configuration/lastDurations``).
  /// - Throws: ``UsageError`` for an ID that is malformed or names no test of `catalog`, a
  ///   file that cannot be read, `--shard-by` without a shard, `--shard-timings` without a
  ///   shard (or, for another package's tests, several workers), or `--shard-timings` without
  ///   JUnit support; what `junit` throws reading the report.
  /// - Returns: a warning when the `--shard-timings` report holds none of the selected tests.
  func applySharding(to configuration: inout Configuration, catalog: Catalog, bazel: BazelTestProtocol,
                     junit: JUnitSupport?) throws -> String? {
    let known = catalog.testPaths
    var only: Set<TestPath> = []
    for id in self.only {
      let test: TestPath
      do { test = try TestPath(parsing: id) } catch { throw UsageError("--only: \(error)") }
      guard known.contains(test) else { throw UsageError("--only \"\(id)\": no such test (--list shows the test IDs)") }
      only.insert(test)
    }
    if let onlyFrom { only.formUnion(try Self.tests(listedIn: onlyFrom, known: known)) }
    if !self.only.isEmpty || onlyFrom != nil { configuration.only = only }

    let shard = try self.shard.map(Self.shard(parsing:)) ?? bazel.shard()
    if shard == nil {
      if shardBy != nil { throw UsageError("--shard-by needs --shard INDEX/COUNT") }
      // Only another package's tests are balanced over the workers (``LaneBalance``).
      if shardTimings != nil && (workers < 2 || !catalog.suites.isEmpty) {
        throw UsageError("--shard-timings needs --shard INDEX/COUNT (or, for harness test, --workers N)")
      }
    }
    let timings = try shardTimings.map { path in
      guard let junit else {
        throw UsageError("--shard-timings needs the AsyncHarnessJUnit product: call HarnessMain.run(suites, junit: JUnitReporter.factory)")
      }
      return try junit.timings(path)
    }
    if let timings, workers > 1 {
      configuration.lastDurations = RecordedDurations(tests: TestTiming.seconds(of: known, from: timings))
    }
    guard let shard else { return nil }
    let selected = configuration.selection(of: catalog).flatMap { group, tests in
      tests.map { TestPath(suite: group.name, name: $0.name) }
    }
    configuration.sharding = Sharding(shard, granularity: shardBy ?? .suite, timings: timings)
    guard let timings, let path = shardTimings, TestTiming.seconds(of: Set(selected), from: timings).isEmpty else { return nil }
    return "--shard-timings \(path) holds none of the \(selected.count) selected tests: "
      + "each counts as 1 s, so shards are balanced by test count"
  }

  /// The tests a `--only-from` file lists: one ID a line (LF or CRLF); blank lines are skipped.
  private static func tests(listedIn path: String, known: Set<TestPath>) throws -> [TestPath] {
    guard access(path, R_OK) == 0, let data = FileManager.default.contents(atPath: path) else {
      throw UsageError("--only-from \(path): cannot read the file: \(ReportDestination.systemError())")
    }
    guard let text = String(data: data, encoding: .utf8) else { throw UsageError("--only-from \(path): the file is not UTF-8 text") }
    var tests: [TestPath] = []
    // An ID never holds a raw line break (``TestPath`` escapes them), so any ends a line.
    for (number, line) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
      guard !line.isEmpty else { continue }
      let test: TestPath
      do { test = try TestPath(parsing: String(line)) } catch { throw UsageError("--only-from \(path):\(number + 1): \(error)") }
      guard known.contains(test) else {
        throw UsageError("--only-from \(path):\(number + 1): no test \"\(line)\" (--list shows the test IDs)")
      }
      tests.append(test)
    }
    return tests
  }

  /// What `--list` prints for `selection`: one test ID a line, or one JSON object a line.
  func listing(of selection: [(group: Catalog.Group, tests: [Catalog.Item])]) -> String {
    var text = ""
    for (group, tests) in selection {
      for test in tests {
        let id = TestPath(suite: group.name, name: test.name)
        guard format == .json else {
          text += "\(id)\n"
          continue
        }
        var json = JSONText()
        json.object { json in
          json.field("id", id.description)
          json.field("suite", group.name)
          json.field("name", test.name)
          json.field("tags") { $0.array(test.tags) { json, tag in json.string(tag) } }
          json.field("file", test.sourceLocation.path)
          json.field("line", test.sourceLocation.line)
        }
        json.newline()
        text += String(decoding: json.array, as: UTF8.self)
      }
    }
    return text
  }
}
