import Foundation

/// The Bazel test protocol, read from the environment a test runner starts the suites
/// executable in, so that a run under `bazel test` needs no flags.
///
/// - `TEST_TOTAL_SHARDS` and `TEST_SHARD_INDEX` (counted from 0), or their aliases
///   `GTEST_TOTAL_SHARDS` and `GTEST_SHARD_INDEX`: the shard, as `--shard INDEX+1/TOTAL`.
/// - `TEST_SHARD_STATUS_FILE`: touched at the start, telling Bazel that the executable
///   shards.
/// - `XML_OUTPUT_FILE`: the JUnit report, as `--junit PATH` (when the executable has JUnit
///   support).
/// - `TEST_PREMATURE_EXIT_FILE`: created at the start and removed when the run ends
///   normally (whatever its status), so a crash or a signal leaves it behind.
/// - `TESTBRIDGE_TEST_ONLY` (`bazel test --test_filter=…`): a filter, as `--filter TEXT`.
/// - `TEST_TMPDIR`: the run's temporary directory: `TMPDIR` is set to it (when not set), so
///   workers and tests write their temporary files there.
///
/// Flags given on the command line take precedence over the variables.
struct BazelTestProtocol {
  let shardStatusFile: String?
  let xmlOutputFile: String?
  let prematureExitFile: String?
  let testFilter: String?
  private let environment: [String: String]

  /// Keeps the variables that are set and not empty.
  init(environment: [String: String]) {
    self.environment = environment.filter { !$0.value.isEmpty }
    shardStatusFile = self.environment["TEST_SHARD_STATUS_FILE"]
    xmlOutputFile = self.environment["XML_OUTPUT_FILE"]
    prematureExitFile = self.environment["TEST_PREMATURE_EXIT_FILE"]
    testFilter = self.environment["TESTBRIDGE_TEST_ONLY"]
  }

  /// The shard the variables name, as ``Sharding`` counts it (index from 1), or nil.
  /// - Throws: ``UsageError`` naming the variable when one of the pair is missing, the count
  ///   is not a whole number of at least 1, or the index is not from 0 to count − 1.
  func shard() throws -> Shard? {
    let prefix = environment["TEST_TOTAL_SHARDS"] != nil || environment["TEST_SHARD_INDEX"] != nil ? "TEST" : "GTEST"
    let totalName = "\(prefix)_TOTAL_SHARDS", indexName = "\(prefix)_SHARD_INDEX"
    switch (environment[totalName], environment[indexName]) {
    case (nil, nil):
      return nil
    case (let total?, nil):
      throw UsageError("\(totalName)=\(total) is set but \(indexName) is not")
    case (nil, let index?):
      throw UsageError("\(indexName)=\(index) is set but \(totalName) is not")
    case (let total?, let index?):
      guard let count = Int(total), count >= 1 else {
        throw UsageError("\(totalName)=\"\(total)\" is not a number of shards (a whole number, at least 1)")
      }
      guard let zeroBased = Int(index), (0..<count).contains(zeroBased) else {
        throw UsageError("\(indexName)=\"\(index)\" is not a shard of \(count): it is counted from 0, so 0 to \(count - 1)")
      }
      return Shard(index: zeroBased + 1, count: count)
    }
  }

  /// Sets `TMPDIR` to `TEST_TMPDIR` when only the latter is set, for this process and the
  /// workers it starts. Call it at the start of the process, before any thread is started.
  static func adoptTemporaryDirectory() {
    let environment = ProcessInfo.processInfo.environment
    if let directory = environment["TEST_TMPDIR"], !directory.isEmpty, environment["TMPDIR"] == nil {
      setenv("TMPDIR", directory, 1)
    }
  }

  /// Marks the start of a run: touches `TEST_SHARD_STATUS_FILE` and creates
  /// `TEST_PREMATURE_EXIT_FILE`.
  func runStarted() {
    for path in [shardStatusFile, prematureExitFile].compactMap(\.self) where !FileManager.default.fileExists(atPath: path) {
      _ = FileManager.default.createFile(atPath: path, contents: nil)
    }
  }

  /// Marks a normal end: removes `TEST_PREMATURE_EXIT_FILE`. A run stopped by a signal keeps it.
  func runEnded() {
    if let prematureExitFile { try? FileManager.default.removeItem(atPath: prematureExitFile) }
  }
}
