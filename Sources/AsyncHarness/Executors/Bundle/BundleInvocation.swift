#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a test bundle is started to run tests of one testing library, and how such a run
/// ends; what the library then writes on the bundle's private channel is read by
/// ``BundleChannelReader``.
///
/// When the run chose none of the tests (no `--filter` …) and an invocation runs every test
/// of its library the bundle lists, it names none, as `swift test` runs them:
///
/// - XCTest: `<bundle> Module.Class/a,Module.Class/b`, as `swift test --filter` runs them:
///   XCTest's root suite is `Selected tests`; running them all, `<bundle>` alone: XCTest's
///   suites are then `All tests` and the bundle's (`debug.xctest`), which observers the tests
///   add see.
/// - Swift Testing: `<bundle> --testing-library swift-testing --filter '^(id1|id2)$'
///   --verbosity <Int.min> --event-stream-output-path /dev/fd/3 --event-stream-version 6.3`
///   (and `--attachments-path DIR` when the run saves attachments):
///   its own event stream on the channel, and no console output of its own (the lowest
///   verbosity). Version 6.3 (``SwiftTestingRecord/runVersion``), as an older one turns off
///   the warnings that `swift test` hands a test's issue handlers; the preloaded library
///   turns its underscored fields on. Swift Testing runs the tests in its default parallel
///   run, as `swift test` does, so that it honours `.serialized`, its suites' traits and its
///   own width. Running them all, no `--filter`: Swift Testing matches every test's ID
///   against the whole expression, which took 2 s for FlyingFox's 426 tests, longer than
///   they ran.
struct BundleInvocation {
  /// The library whose tests the bundle runs.
  let library: TestLibrary
  /// How many tests of each library the bundle lists, when the run chose none of them
  /// (``Configuration/choosesTests``): an invocation that runs that many of its library runs
  /// them all, as `swift test` does, without naming them.
  var allTests: [TestLibrary: Int] = [:]
  /// The directory where Swift Testing saves what tests attach (`--attachments-path`, as
  /// `swift test --attachments-path` gives it), when the run saves attachments.
  var attachmentsPath: String?

  /// The library's name in messages.
  var libraryName: String {
    library == .xctest ? "XCTest" : "Swift Testing"
  }

  /// Whether the library runs one test at a time in a worker (XCTest does; Swift Testing runs
  /// its tests side by side).
  var runsOneTestAtATime: Bool { library == .xctest }

  /// Whether a worker that ended so while none of its tests ran had run every test it found:
  /// with status 0; with 1 only when its library told of a failure (`toldOfAFailure`), the
  /// one thing it ends so for; and Swift Testing's with 69 too (no test matched the filter).
  /// A status 1 without a failure came from code that ran after the tests (an `atexit`
  /// handler, a thread calling `exit(1)`), and `swift test` is red for it.
  func isCompleteRun(_ exit: ProcessEnding, toldOfAFailure: Bool) -> Bool {
    switch exit {
    case .exited(0): true
    case .exited(1): toldOfAFailure
    case .exited(69): library == .swiftTesting
    default: false
    }
  }

  /// Why a worker's status 1 is a failure of its own when its library told of none.
  var statusOneUnexplained: String {
    "none of the tests it ran failed, so \(libraryName) itself ends with status 0: code that ran after them (an "
      + "atexit handler, a thread calling exit) ended the process so"
  }

  /// The most bytes of test IDs one worker's list holds. The list is one argument, and Linux
  /// takes at most 128 KiB in one (`MAX_ARG_STRLEN`); Swift Testing's filter escapes each
  /// ID, which can double it.
  static let listLimit = 48 * 1024

  /// The arguments of the bundle running `tests`, `oneAtATime` or as the library runs them.
  func arguments(running tests: [ExistingTest], oneAtATime: Bool = false) -> [String] {
    let all = Set(tests.map(\.id)).count == allTests[library]
    guard library == .swiftTesting else { return all ? [] : [tests.map(\.id).joined(separator: ",")] }
    let filter = "^(" + tests.map { Self.escaped($0.id) }.joined(separator: "|") + ")$"
    return ["--testing-library", "swift-testing"] + (all ? [] : ["--filter", filter]) + (oneAtATime ? ["--no-parallel"] : [])
      + (attachmentsPath.map { ["--attachments-path", $0] } ?? [])
      + ["--verbosity", String(Int.min), "--event-stream-output-path", "/dev/fd/\(BundleChannelLibrary.channelDescriptor)",
         "--event-stream-version", SwiftTestingRecord.runVersion]
  }

  /// The variables the bundle's library is run with, as `swift test` runs it: `NO_COLOR=1`
  /// for Swift Testing.
  var environment: [String: String] {
    library == .swiftTesting ? ["NO_COLOR": "1"] : [:]
  }

  /// `text` with every character a regular expression gives a meaning to escaped.
  static func escaped(_ text: String) -> String {
    String(text.flatMap { "\\^$.|?*+()[]{}".contains($0) ? ["\\", $0] : [$0] })
  }
}

/// How a lane's test bundle workers start: the kind of worker a ``BundleExecutor`` runs
/// another package's tests in.
struct TestBundleKind: Sendable {
  /// The test bundle: on Linux, an executable.
  let bundle: String
  /// The directory its workers start in: the package's, as with `swift test`, so that tests
  /// that read files by relative paths find them.
  let directory: String
  /// The library preloaded into each worker (``BundleChannelLibrary``).
  let channelLibrary: String
  /// How many tests of each library the bundle lists, when the run chose none (``BundleInvocation/allTests``).
  var allTests: [TestLibrary: Int] = [:]
  /// The directory Swift Testing saves what tests attach in (``BundleInvocation/attachmentsPath``).
  var attachmentsPath: String?
  /// How long a stopped worker has between SIGTERM and SIGKILL.
  var gracePeriod = Duration.seconds(1)
  /// When requested, the running test's worker is stopped and the test ends as interrupted.
  let stop: StopRequest?
}

extension TestBundleKind {
  /// Starts the bundle for `tests`, all of one library, run `oneAtATime` or as the library
  /// runs them, under the schedule of `first` (the test asked for) when it has one, its
  /// preloaded library writing `marker` before each record on its channel; returns the
  /// process's watch.
  func start(_ tests: [ExistingTest], of first: Runner.PlannedTest?, oneAtATime: Bool, marker: String) throws -> WorkerWatch {
    let library = tests.first?.library ?? .xctest
    let invocation = BundleInvocation(library: library, allTests: allTests, attachmentsPath: attachmentsPath)
    let channel = try ChildProcess.makePipe()
    defer { close(channel.write) }
    let process: ChildProcess
    do {
      process = try ChildProcess(
        executable: bundle, arguments: invocation.arguments(running: tests, oneAtATime: oneAtATime),
        environment: BundleChannelLibrary.environment(library: channelLibrary, testing: library, marker: marker,
                                                      schedule: first?.schedule, saysSteps: first?.reportsWaits == true)
          .merging(invocation.environment) { $1 },
        handing: [(channel.write, BundleChannelLibrary.channelDescriptor)], directory: directory)
    } catch {
      close(channel.read)
      throw error
    }
    _ = fcntl(channel.read, F_SETFL, fcntl(channel.read, F_GETFL) | O_NONBLOCK)
    return WorkerWatch(process: process, channel: channel.read, stop: stop)
  }
}
