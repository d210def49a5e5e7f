import Foundation

/// How a run is split into shards that separate processes run: `--shard INDEX/COUNT`,
/// `--shard-by` and `--shard-timings`, or the Bazel test protocol's variables.
///
/// Every shard computes the same assignment of the selected tests to shards and keeps its
/// own part, so shards need no coordinator: only the same suites, filters and, when
/// balancing by time, the same report.
public struct Sharding: Sendable, Hashable {
  /// What goes to a shard whole.
  public enum Granularity: String, Sendable, Hashable, CaseIterable {
    /// A suite with all its tests (the default: a suite's tests may share state).
    case suite
    /// Each test on its own.
    case test
  }

  /// The shard this run keeps.
  public var shard: Shard
  /// What goes to a shard whole.
  public var granularity: Granularity
  /// The durations of a previous run (`--shard-timings`): when present, shards are balanced
  /// by time (longest first), else assigned by `StableHash`.
  public var timings: [TestTiming]?

  /// Creates the sharding that keeps `shard`.
  /// - Parameters:
  ///   - shard: the shard this run keeps.
  ///   - granularity: what goes to a shard whole; a suite by default.
  ///   - timings: a previous run's durations, to balance shards by time.
  public init(_ shard: Shard, granularity: Granularity = .suite, timings: [TestTiming]? = nil) {
    self.shard = shard
    self.granularity = granularity
    self.timings = timings
  }

  /// The key of the unit `test` belongs to: its suite's escaped name, or its ID.
  func unit(of test: TestPath) -> String {
    granularity == .suite ? test.escapedSuite : test.description
  }

  /// Assigns every one of `tests` (the whole selection, not only this shard's) to a shard.
  ///
  /// Without ``timings``, each unit (suite or test) goes to `StableHash.shard(of:count:)`
  /// of its key, whatever the other tests are. With them, units are balanced by the
  /// longest-processing-time-first rule: from the longest unit to the shortest (ties in
  /// order of their keys), each goes to the shard with the least time so far (the first of
  /// equals). A test's time is the sum of the `time` of its testcases in the report (every
  /// waiter and repetition); a test the report does not hold counts as the median of those
  /// it does (1 s when it holds none).
  /// - Parameter tests: the selected tests.
  /// - Returns: each test's shard and, when balanced by time, each shard's predicted time.
  package func assignment(of tests: [TestPath]) -> ShardAssignment {
    var units: [String: [TestPath]] = [:]
    for test in tests { units[unit(of: test), default: []].append(test) }
    var shards: [TestPath: Int] = [:]
    guard let timings else {
      for (key, members) in units {
        let owner = StableHash.shard(of: key, count: shard.count)
        for test in members { shards[test] = owner }
      }
      return ShardAssignment(shards: shards, predictedSeconds: nil, timedTests: 0)
    }
    let known = TestTiming.seconds(of: Set(tests), from: timings)
    let median = TestTiming.median(Array(known.values)) ?? 1
    let weighed = units.map { key, members in
      (key: key, members: members, seconds: members.reduce(0) { $0 + (known[$1] ?? median) })
    }.sorted { $0.seconds != $1.seconds ? $0.seconds > $1.seconds : $0.key < $1.key }
    var totals = Array(repeating: 0.0, count: max(1, shard.count))
    for unit in weighed {
      let shard = totals.indices.min { totals[$0] != totals[$1] ? totals[$0] < totals[$1] : $0 < $1 }!
      totals[shard] += unit.seconds
      for test in unit.members { shards[test] = shard + 1 }
    }
    return ShardAssignment(shards: shards, predictedSeconds: totals, timedTests: known.count)
  }
}

/// Which shard each selected test runs in (``Sharding/assignment(of:)``).
package struct ShardAssignment: Sendable, Hashable {
  /// Each test's shard, counted from 1.
  package let shards: [TestPath: Int]
  /// When balanced by time, each shard's predicted seconds (shard 1 first); `nil` when
  /// assigned by hash.
  package let predictedSeconds: [Double]?
  /// How many of the tests the timings report held.
  package let timedTests: Int
}

/// The duration of one testcase of a previous run's JUnit report (`--shard-timings`).
public struct TestTiming: Sendable, Hashable {
  /// The testcase's `classname`: ours is `Suite [waiter]`; other tools write the suite.
  public var classname: String
  /// The testcase's `name`: ours adds ` #N` for repetition N > 1.
  public var name: String
  /// The testcase's `time`.
  public var seconds: Double

  /// Creates a timing.
  public init(classname: String, name: String, seconds: Double) {
    self.classname = classname
    self.name = name
    self.seconds = seconds
  }

  /// The seconds of each of `tests` that `timings` holds, added up over its testcases.
  ///
  /// A testcase belongs to the test whose suite is its `classname`, or its `classname`
  /// without a final ` [waiter]`; and whose name is its `name`, or its `name` without a
  /// final ` #N`. Testcases of no test in `tests` are left out.
  static func seconds(of tests: Set<TestPath>, from timings: [TestTiming]) -> [TestPath: Double] {
    var seconds: [TestPath: Double] = [:]
    for timing in timings where timing.seconds.isFinite && timing.seconds >= 0 {
      let suites = [timing.classname, strippingSuffix(timing.classname, opening: " [", closing: "]")]
      let names = [timing.name, strippingSuffix(timing.name, opening: " #", closing: nil)]
      let match = suites.compactMap(\.self).lazy.flatMap { suite in
        names.compactMap(\.self).map { TestPath(suite: suite, name: $0) }
      }.first { tests.contains($0) }
      if let match { seconds[match, default: 0] += timing.seconds }
    }
    return seconds
  }

  /// `text` without a last ` [anything]` (`closing` `]`) or ` #digits` (`closing` nil), or
  /// nil when it has none.
  private static func strippingSuffix(_ text: String, opening: String, closing: Character?) -> String? {
    guard let range = text.range(of: opening, options: .backwards) else { return nil }
    let tail = text[range.upperBound...]
    if let closing {
      guard tail.last == closing else { return nil }
    } else {
      guard !tail.isEmpty, tail.allSatisfy(\.isASCII), tail.allSatisfy(\.isNumber) else { return nil }
    }
    return String(text[..<range.lowerBound])
  }

  /// The median of `values`, or nil when there are none.
  static func median(_ values: [Double]) -> Double? {
    guard !values.isEmpty else { return nil }
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
  }
}
