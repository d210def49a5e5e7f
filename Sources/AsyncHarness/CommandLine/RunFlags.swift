import ArgumentParser
import Foundation

/// The flags of a run that a package's own tests (`harness test`) share with a suites
/// executable: what runs (filters, `--only`, shards, repetitions, retries), how long a test
/// may take, how many workers, and the reports. ``HarnessOptions`` adds those of harness
/// suites alone; `harness test` adds its package and build.
struct RunFlags: ParsableArguments {
  @Option(help: ArgumentHelp("Run only tests whose Suite/test path contains this text, or tag:NAME (repeatable). "
    + "harness test reads it as swift test does: a regular expression a test's ID contains.", valueName: "text"))
  var filter: [String] = []

  @Option(help: ArgumentHelp("Leave out the tests this would select as --filter (repeatable).", valueName: "text"))
  var skip: [String] = []

  @Flag(help: "List the selected tests' IDs (Suite/test, one a line) and exit.")
  var list = false

  @Flag(help: "Accept a selection with no test as an empty, passing run (by default it is an error).")
  var allowEmpty = false

  @Option(name: .customLong("repeat"), help: ArgumentHelp("Run each test N times.", valueName: "N"))
  var repetitions = 1

  @Flag(help: "With --repeat, stop after the first repetition that fails.")
  var untilFailure = false

  @Option(help: ArgumentHelp("Run a test that fails or errors again, up to N more times; one that then passes is flaky.", valueName: "N"))
  var retries = 0

  @Flag(help: "Fail the run (exit status 1) when a test was flaky: failed, then passed on a retry.")
  var failOnFlaky = false

  @Option(help: ArgumentHelp("Shuffle tests within each suite; without a seed, a random one is printed.", valueName: "seed"))
  var shuffle: UInt64?

  @Option(help: ArgumentHelp("Write the event stream as JSON Lines to this file.", valueName: "path"))
  var json: String?

  @Option(help: ArgumentHelp("Write a JUnit XML report to this file.", valueName: "path"))
  var junit: String?

  @Option(help: ArgumentHelp("Write the run as Chrome trace-event JSON (Perfetto, chrome://tracing) to this file when it ends: a track per lane, a slice per attempt.", valueName: "path"))
  var trace: String?

  @Option(name: .customLong("report-html"), help: ArgumentHelp("Write the run as one self-contained HTML page to this file when it ends: summary, failures with their output, flaky and slowest tests, a timeline per lane.", valueName: "path"))
  var reportHTML: String?

  @Option(help: ArgumentHelp("With --junit: the profile, standard (the default) or github (adds file and line attributes).", valueName: "name"))
  var junitProfile: String?

  @Option(help: ArgumentHelp("The longest a test may run, in seconds (fractions allowed), or none for no limit (default: \(Int(TimeLimit.defaultSeconds))).", valueName: "seconds|none"))
  var timeLimit: String?

  @Option(help: ArgumentHelp("Announce a test still running after this many seconds (and each multiple) as SLOW.", valueName: "seconds"))
  var slow: Double?

  @Option(help: ArgumentHelp("Run tests in N worker processes at once; a suite runs whole in one of them, unless its tests run in parallel (harness test may cut a long XCTest class, by the last run's times).", valueName: "N"))
  var workers = 1

  // Schedules: applied in Scheduling/RunFlags+Schedules.swift.
  @Option(help: ArgumentHelp("Run each test under N schedules (seeds 1 to N) and report each test's pass rate: a harness suite's under the scheduled waiter, a package's own tests' Swift concurrency in an order each seed chooses, on virtual time (harness test).", valueName: "N"))
  var explore: Int?

  @Option(help: ArgumentHelp("With --explore: how the schedules pick the next work item, random (a random walk) or pctD (PCT for bugs of depth D, 1 to 9); default: the scheduled waiter's own, random for a package's own tests.", valueName: "policy"))
  var explorePolicy: String?

  @Option(help: ArgumentHelp("Rerun exactly the schedule of a replay token a failing test printed (SEED:POLICY:TEST, then the steps it took, :STEPS-FINGERPRINT), for that test only; a replay that takes other steps says where and why.", valueName: "token"))
  var schedule: String?

  // Sharding: applied in Sharding/RunFlags+Sharding.swift.
  @Option(help: ArgumentHelp("With --list: text (one test ID a line, the default) or json (one object a line: id, suite, name, tags, file, line).", valueName: "text|json"))
  var format: ListFormat?

  @Option(help: ArgumentHelp("Run only the test with this ID, Suite/test as --list prints it (repeatable).", valueName: "id"))
  var only: [String] = []

  @Option(help: ArgumentHelp("Run only the tests whose IDs this file lists, one a line.", valueName: "path"))
  var onlyFrom: String?

  @Flag(help: "Run only the tests that failed or errored in the last run (a suites executable records it in .build/harness/, harness test beside the test bundle), under that run's flags unless new ones are given.")
  var rerunFailed = false

  @Option(help: ArgumentHelp("Run only shard INDEX of COUNT, counted from 1 (1/3, 2/3, 3/3).", valueName: "index/count"))
  var shard: String?

  @Option(help: ArgumentHelp("With --shard: what goes to a shard whole, suite (the default) or test.", valueName: "suite|test"))
  var shardBy: Sharding.Granularity?

  @Option(help: ArgumentHelp("With --shard: balance shards by the test times of this JUnit report of an earlier run. "
                             + "With --workers N, harness test balances its workers by them (else by its last run's).",
                             valueName: "path"))
  var shardTimings: String?

  func validate() throws {
    guard repetitions >= 1 else { throw ValidationError("--repeat must be at least 1, not \(repetitions)") }
    guard retries >= 0 else { throw ValidationError("--retries must be 0 or more, not \(retries)") }
    guard workers >= 1 else { throw ValidationError("--workers must be at least 1, not \(workers)") }
    try validateSharding()
    try validateSchedules()
    _ = try TimeLimit(timeLimit)
    if let slow, !(slow > 0 && slow.isFinite) {
      throw ValidationError("--slow must be a positive number of seconds, not \(slow)")
    }
  }

  /// The run's configuration as these flags make it (every waiter's defaults otherwise).
  func configuration() throws -> Configuration {
    var configuration = Configuration()
    configuration.filters = filter
    configuration.skips = skip
    configuration.allowsEmptySelection = allowEmpty
    configuration.repetitions = repetitions
    configuration.untilFailure = untilFailure
    configuration.retries = retries
    configuration.shuffleSeed = shuffle
    configuration.timeLimit = try TimeLimit(timeLimit).duration
    configuration.slowThreshold = slow.map { .milliseconds(Int64(($0 * 1000).rounded())) }
    configuration.reportsWaits = trace != nil
    configuration.explorations = explore
    configuration.explorationPolicy = explorePolicy.flatMap(SchedulePolicy.init)
    configuration.replay = schedule.flatMap(ScheduleToken.init)
    return configuration
  }
}
