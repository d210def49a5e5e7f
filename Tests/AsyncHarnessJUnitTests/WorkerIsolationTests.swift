@_spi(ForToolsIntegrationOnly) import AsyncHarness
import Foundation
import HarnessTestSupport
import XCTest

/// Issue 9, worker processes and time limits: the `harness-fixture` executable's `Crashes`
/// suite, whose tests end their process in every way a test can, run as a real child
/// process in the default `--isolation worker`. Each crash ends only its own test, with a
/// message naming the signal or exit status and the output's tail; every other result is
/// kept, and the JUnit report is complete and valid with exact totals.
final class WorkerIsolationTests: ReportTestCase {
  /// Runs the fixture to its end and returns its exit status and console output.
  private func runFixture(_ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, output: String) {
    let run = try runToEnd(try harnessFixture(), arguments,
                           environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
    return (run.status, run.output)
  }

  /// A test that forks, then crashes, leaves a child holding the worker's channel and output:
  /// the worker ends at its exit all the same, the child is stopped with its process group,
  /// and the test gets its crash and a warning naming the leak.
  func testACrashedWorkerWhoseForkHoldsItsChannelEndsAtItsExit() throws {
    for isolation in ["worker", "test"] {
      let run = try runToEnd(try harnessFixture(), ["--isolation", isolation, "--filter", "Forks/", "--json", path("events.jsonl")],
                             limit: 60)
      XCTAssertEqual(run.status, 1, run.output + run.errors)
      let result = try XCTUnwrap(results()["crashes after forking"], isolation)
      XCTAssertEqual(result.verdict, .errored)
      XCTAssertEqual(result.issues.map(\.kind), [.leaked, .crashed], isolation)
      XCTAssertEqual(result.issues.first?.message, "Leaked work: a process the tests started still held the worker process's "
        + "output open after it exited; it was stopped with the worker process's process group")
      XCTAssertTrue(result.issues.last?.message.hasPrefix("Crashed: the worker process running the test ended with signal SIGILL "
        + "(illegal instruction); its last output:") ?? false, "\(result.issues)")
    }
  }

  /// A test leaves behind work that crashes its worker after it returned, while the lane
  /// waits for a test in another worker (side by side): as `swift test` is red when such work
  /// crashes its process, the run fails outside every test, naming the test that ended last
  /// in the crashed worker, while both tests keep their passes. Repeated: the crash and the
  /// lane's wait race.
  func testACrashLeftBehindInAWorkerTheLaneDoesNotWaitForFailsTheRun() throws {
    for round in 0..<5 {
      let left = path("left-\(round)")
      try FileManager.default.createDirectory(atPath: left, withIntermediateDirectories: true)
      let run = try runFixture(["--filter", "LeftBehind", "--json", path("events.jsonl")], environment: ["FIXTURE_LEFT_DIR": left])
      XCTAssertEqual(run.status, 1, run.output)
      XCTAssertEqual(try results().mapValues(\.verdict), ["leaves a crash behind": .passed, "sets off the crash and waits for it": .passed])
      let failures = try outsideFailures()
      XCTAssertEqual(failures.count, 1, run.output)
      let failure = try XCTUnwrap(failures.first)
      XCTAssertEqual(failure.place, .process)
      XCTAssertEqual(failure.suite, SuiteRun(suite: "LeftBehind", host: "expectation"))
      XCTAssertEqual(failure.suspects, ["LeftBehind/leaves a crash behind"])
      XCTAssertEqual(failure.issue.kind, .crashed)
      XCTAssertTrue(failure.issue.message.hasPrefix("The worker process ended with signal SIGILL (illegal instruction) while "
        + "none of its tests ran, after LeftBehind/leaves a crash behind returned: work a test left behind ended it; its "
        + "last output:\n"), failure.issue.message)
      XCTAssertTrue(failure.issue.message.contains("Fatal error: the crash a test left behind"), failure.issue.message)
      XCTAssertTrue(run.output.contains("LeftBehind [expectation] the test process: The worker process ended with signal SIGILL"),
                    run.output)
    }
  }

  /// A test leaves behind a handler that crashes its worker as it exits: the worker, told to
  /// stop at the run's end (or after each test with `--isolation test`), crashes on its way
  /// out. `swift test` is red when its process crashes at exit; so is the run, outside every
  /// test, while the test keeps its pass.
  func testAWorkerThatCrashesAsItIsStoppedFailsTheRun() throws {
    for isolation in ["worker", "test"] {
      let run = try runFixture(["--isolation", isolation, "--filter", "ExitCrash/", "--json", path("events.jsonl")],
                               environment: ["FIXTURE_EXIT_CRASH": "1"])
      XCTAssertEqual(run.status, 1, run.output)
      XCTAssertEqual(try results().mapValues(\.verdict), ["crashes at exit": .passed], isolation)
      let failures = try outsideFailures()
      XCTAssertEqual(failures.map(\.suspects), [["ExitCrash/crashes at exit"]], isolation)
      XCTAssertTrue(failures.first?.issue.message.hasPrefix("The worker process ended with signal SIGABRT (aborted) while none of "
        + "its tests ran, after ExitCrash/crashes at exit returned: work a test left behind ended it; ") == true,
        "\(isolation): \(failures)")
    }
  }

  /// Every `outsideFailure` of the JSON Lines file.
  private func outsideFailures() throws -> [OutsideFailure] {
    try String(contentsOfFile: path("events.jsonl"), encoding: .utf8).split(separator: "\n").compactMap { line in
      if case .outsideFailure(let failure) = try Event(jsonLine: line).kind { failure } else { nil }
    }
  }

  /// Every `testEnded` of the JSON Lines file, by test name.
  private func results() throws -> [String: TestResult] {
    let text = try String(contentsOfFile: path("events.jsonl"), encoding: .utf8)
    var results: [String: TestResult] = [:]
    for (test, result, _) in try EventRecorder(jsonLines: text).results { results[test.name] = result }
    return results
  }

  func testEachCrashEndsOnlyItsOwnTestAndTheReportIsComplete() throws {
    try assertEachCrashEndsOnlyItsOwnTest([])
  }

  /// `--isolation test`: the same results, each test in a process of its own.
  func testEachCrashEndsOnlyItsOwnTestInAProcessPerTest() throws {
    try assertEachCrashEndsOnlyItsOwnTest(["--isolation", "test"])
  }

  /// `--isolation test` starts a process for every test; `worker` runs them in one.
  func testAProcessPerTestIsolatesTests() throws {
    for (isolation, processes) in [("test", 3), ("worker", 1)] {
      let run = try runFixture(["--isolation", isolation, "--filter", "Processes/", "--json", path("events.jsonl")])
      XCTAssertEqual(run.status, 0, run.output)
      let text = try String(contentsOfFile: path("events.jsonl"), encoding: .utf8)
      var pids: Set<String> = []
      for line in text.split(separator: "\n") {
        if case .outputCaptured(_, let output) = try Event(jsonLine: line).kind { pids.insert(output) }
      }
      XCTAssertEqual(pids.count, processes, "\(isolation): \(pids)")
    }
  }

  /// `--isolation test` starts the next test's worker while a test runs: the second test's
  /// process started before the first test ended (it sleeps 300 ms), and no worker is left
  /// running after the run (the unused spare is stopped).
  func testAProcessPerTestStartsTheNextWorkerWhileATestRuns() throws {
    #if os(Linux)
    for _ in 0..<3 {
      // The run's workers are told from other runs' (tests side by side) by a variable they inherit.
      let mark = UUID().uuidString
      let run = try runFixture(["--isolation", "test", "--filter", "Spare/", "--json", path("events.jsonl")],
                               environment: ["FIXTURE_RUN": mark])
      XCTAssertEqual(run.status, 0, run.output)
      var output: [String: String] = [:]
      for line in try String(contentsOfFile: path("events.jsonl"), encoding: .utf8).split(separator: "\n") {
        if case .outputCaptured(let test, let text) = try Event(jsonLine: line).kind { output[test.name, default: ""] += text }
      }
      let ended = try XCTUnwrap(Int(output["sleeps, then prints the time"]?.dropFirst("ended at ".count).dropLast() ?? ""), "\(output)")
      let started = try XCTUnwrap(Int(output["prints when its process started"]?.dropFirst("started at ".count).dropLast() ?? ""), "\(output)")
      XCTAssertLessThan(started, ended, "the second test's worker started while the first ran")
      XCTAssertEqual(try workers(of: try harnessFixture(), markedWith: mark), [], "no worker outlives the run")
    }
    #else
    throw XCTSkip("reads process start times from /proc")
    #endif
  }

  /// The processes running `executable` as a worker with `FIXTURE_RUN=mark` (the run's), from
  /// `/proc` (Linux).
  private func workers(of executable: URL, markedWith mark: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: "/proc").filter { $0.allSatisfy(\.isNumber) }.filter { pid in
      guard let command = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"),
        let environment = FileManager.default.contents(atPath: "/proc/\(pid)/environ"),
        environment.split(separator: 0).contains(Data("FIXTURE_RUN=\(mark)".utf8))
      else { return false }
      let arguments = command.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
      return arguments.contains("--harness-worker") && arguments.first.map {
        URL(fileURLWithPath: $0).resolvingSymlinksInPath().path == executable.resolvingSymlinksInPath().path
      } == true
    }
  }

  private func assertEachCrashEndsOnlyItsOwnTest(_ isolation: [String]) throws {
    let run = try runFixture(isolation + ["--filter", "Crashes/", "--time-limit", "1", "--junit", path("report.xml"),
                                          "--json", path("events.jsonl")])
    XCTAssertEqual(run.status, 1, run.output)
    XCTAssertTrue(run.output.contains("Result: 3 passed, 10 failed, 0 skipped in "), run.output)
    let results = try results()
    XCTAssertEqual(results.count, 13, "every test ended: \(results.keys.sorted())")
    for name in ["passes first", "prints 50 MB", "passes last"] {
      XCTAssertEqual(results[name]?.verdict, .passed, name)
    }
    XCTAssertEqual(results["fails"]?.verdict, .failed)

    let fixtureFile = "harness_fixture/main.swift"
    let crashes: [(test: String, ending: String, tail: String)] = [
      ("fatal error", "signal SIGILL (illegal instruction)", "about to fail\n\(fixtureFile):30: Fatal error: the fixture's fatal error"),
      ("precondition", "signal SIGILL (illegal instruction)", "\(fixtureFile):34: Precondition failed: the invariant broke"),
      ("segmentation fault", "signal SIGSEGV (segmentation fault)", ""),
      ("bus error", "signal SIGBUS (bus error)", ""),
      ("abort", "signal SIGABRT (aborted)", ""),
      ("exit 3", "exit status 3", ""),
      ("records, then crashes", "signal SIGILL (illegal instruction)",
       "written to standard error\n\(fixtureFile):45: Fatal error: after the failure"),
    ]
    for crash in crashes {
      let result = try XCTUnwrap(results[crash.test], crash.test)
      XCTAssertEqual(result.verdict, .errored, crash.test)
      let issue = try XCTUnwrap(result.issues.last, crash.test)
      XCTAssertEqual(issue.kind, .crashed, crash.test)
      XCTAssertEqual(issue.message, "Crashed: the worker process running the test ended with \(crash.ending)"
        + (crash.tail.isEmpty ? "; it printed nothing" : "; its last output:\n\(crash.tail)"), crash.test)
      XCTAssertEqual(issue.sourceLocation?.fileName, "main.swift", crash.test)
    }
    XCTAssertEqual(results["records, then crashes"]?.issues.first?.message, "Expectation failed: recorded before the crash",
                   "what the test recorded before it crashed is kept")
    for (name, tail) in [("hangs outside a wait", "; its last output:\nspinning"), ("blocks on a semaphore", "; it printed nothing")] {
      let issue = try XCTUnwrap(results[name]?.issues.last, name)
      XCTAssertEqual(issue.kind, .timeLimitExceeded, name)
      XCTAssertEqual(issue.message, "Test exceeded its time limit of 1 seconds outside any wait the harness could end, "
        + "so its worker process was stopped with SIGTERM" + tail, name)
    }
    try assertCheckerPasses(path("report.xml"), ["--expect-tests", "13", "--expect-failures", "1", "--expect-errors", "9",
                                                 "--expect-skipped", "0"])
  }

  /// In this process (`--isolation none`) a crash ends the run, and the JSON Lines stream is
  /// what is left: it holds every line up to the crash, the ended test's result and, last,
  /// the `testStarted` that names the test that crashed (the lines between two tests are held
  /// only until the next test starts).
  func testAnInProcessCrashLeavesAStreamEndingWithTheCrashingTest() throws {
    let run = try runFixture(["--isolation", "none", "--filter", "Crashes/passes first", "--filter", "Crashes/fatal error",
                              "--json", path("events.jsonl")])
    XCTAssertNotEqual(run.status, 0, run.output)
    let text = try String(contentsOfFile: path("events.jsonl"), encoding: .utf8)
    XCTAssertTrue(text.hasSuffix("\n"), "the stream ends with a whole line: \(text)")
    let kinds = try text.split(separator: "\n").map { line -> String in
      switch try Event(jsonLine: line).kind {
      case .testStarted(let test): "testStarted \(test.name)"
      case .testEnded(let test, let result): "testEnded \(test.name) \(result.verdict)"
      case let kind: kind.name
      }
    }
    XCTAssertEqual(kinds, ["runStarted", "suiteStarted", "testStarted passes first", "testEnded passes first passed",
                           "testStarted fatal error"])
  }

  /// Output goes to the test that wrote it, bounded: 50 MB of prints leave 1 MiB in the
  /// stream, then a note of what was cut.
  func testOutputIsCapturedPerTestAndBounded() throws {
    let run = try runFixture(["--filter", "Crashes/prints 50 MB", "--json", path("events.jsonl")])
    XCTAssertEqual(run.status, 0, run.output)
    XCTAssertFalse(run.output.contains("xxxx"), "the test's output is captured, not printed")
    let text = try String(contentsOfFile: path("events.jsonl"), encoding: .utf8)
    var kept = 0
    var notes: [String] = []
    for line in text.split(separator: "\n") {
      guard case .outputCaptured(let test, let output) = try Event(jsonLine: line).kind else { continue }
      XCTAssertEqual(test.name, "prints 50 MB")
      if output.hasPrefix("\n[AsyncHarness:") { notes.append(output) } else { kept += output.utf8.count }
    }
    XCTAssertEqual(kept, 1_048_576)
    XCTAssertEqual(notes, ["\n[AsyncHarness: 51380224 more bytes cut here; the report keeps at most 1048576 bytes per text]"])
  }

  /// A worker is sent the next tests before the running one ends: 300 tests that print to
  /// standard output and standard error (a partial line last) each keep exactly their own
  /// output, and after each failing test (every seventh) the tests sent ahead still run,
  /// each once, in order.
  func testTestsSentAheadKeepTheirOwnOutputAndRunOnce() throws {
    let run = try runFixture(["--filter", "Pipeline/", "--json", path("events.jsonl")])
    XCTAssertEqual(run.status, 1, run.output)
    XCTAssertTrue(run.output.contains("Result: 257 passed, 43 failed, 0 skipped in "), run.output)
    let text = try String(contentsOfFile: path("events.jsonl"), encoding: .utf8)
    var output: [String: String] = [:]
    var started: [String] = []
    for line in text.split(separator: "\n") {
      switch try Event(jsonLine: line).kind {
      case .outputCaptured(let test, let text): output[test.name, default: ""] += text
      case .testStarted(let test): started.append(test.name)
      default: break
      }
    }
    XCTAssertEqual(started, (0..<300).map { "test \($0)" })
    for number in 0..<300 {
      XCTAssertEqual(output["test \(number)"], "\(number) out\n\(number) err\n\(number) tail", "test \(number)")
    }
  }

  /// `--workers 2`: suites run in two workers at once and give the same results as one
  /// worker; each test keeps its own output, and the JUnit report groups them by suite with
  /// exact totals.
  func testTwoWorkersGiveTheSameResultsAsOne() throws {
    var verdicts: [[String: Verdict]] = []
    for workers in ["1", "2"] {
      let run = try runFixture(["--workers", workers, "--filter", "Crashes/", "--filter", "Pipeline/", "--filter", "Processes/",
                                "--time-limit", "1", "--junit", path("report.xml"), "--json", path("events.jsonl")])
      XCTAssertEqual(run.status, 1, run.output)
      XCTAssertTrue(run.output.contains("Result: 263 passed, 53 failed, 0 skipped in "), run.output)
      XCTAssertTrue(run.output.contains("\nSuite      expectation\n---------  ------------\nCrashes    3/13 FAIL\n"
        + "Processes  3/3\nPipeline   257/300 FAIL\n"), run.output)
      let text = try String(contentsOfFile: path("events.jsonl"), encoding: .utf8)
      var results: [String: Verdict] = [:]
      var output: [String: String] = [:]
      for line in text.split(separator: "\n") {
        switch try Event(jsonLine: line).kind {
        case .testEnded(let test, let result): results[test.path] = result.verdict
        case .outputCaptured(let test, let text) where test.suite == "Pipeline": output[test.name, default: ""] += text
        default: break
        }
      }
      verdicts.append(results)
      for number in 0..<300 {
        XCTAssertEqual(output["test \(number)"], "\(number) out\n\(number) err\n\(number) tail", "test \(number)")
      }
      try assertCheckerPasses(path("report.xml"), ["--expect-tests", "316", "--expect-failures", "44",
                                                   "--expect-errors", "9", "--expect-skipped", "0"])
    }
    XCTAssertEqual(verdicts[0].count, 316)
    XCTAssertEqual(verdicts[0], verdicts[1])
  }

  /// A runner may hand over other steps than those it said come next (a retry after a
  /// failure, a step left out): the executor runs exactly what it is given, each test with
  /// its own output, and nothing it was not.
  func testAStepOtherThanTheOnesPreparedRunsAloneAndInOrder() throws {
    let names = (0..<6).map { "test \($0)" }
    // The fixture declares its Pipeline suite seventh: steps name their test by position.
    let suites = (0..<6).map { Suite("before \($0)") {} } + [Suite("Pipeline") { names.map { Test($0) { _ in } } }]
    let plan = try Runner.Plan(suites: suites, configuration: Configuration(), registry: .builtIn)
    let steps = plan.plannedTests(of: plan.entries[0], repetition: 1)
    let executor = WorkerExecutor(executable: try harnessFixture().path)
    let recorder = EventRecorder()
    // 0, then 3 (a failure: the worker drops what was sent ahead), 3 again (a retry), 5
    // (skipping 4, sent ahead), 1.
    let order = [0, 3, 3, 5, 1]
    executor.prepare(steps)
    var ends: [AttemptEnd] = []
    var failed: [Bool] = []
    for index in order {
      recorder.handle(Event(.testStarted(steps[index].id), lane: 1))  // as the runner announces it
      let issues = recorder.events.count
      ends.append(executor.run(steps[index], events: EventSink { recorder.handle($0) }))
      failed.append(recorder.events[issues...].contains { if case .issueRecorded = $0.kind { true } else { false } })
    }
    executor.finish()
    XCTAssertEqual(ends.map { if case .returned = $0 { true } else { false } }, [true, true, true, true, true])
    XCTAssertEqual(failed, [false, true, true, false, false])
    // A run that stops after a step (an interrupt between tests) leaves the worker holding the
    // steps sent ahead: it is stopped at once, which is no failure of the run.
    let stopped = WorkerExecutor(executable: try harnessFixture().path)
    let stoppedEvents = EventRecorder()
    stopped.prepare(steps)
    let first = stopped.run(steps[0], events: EventSink { stoppedEvents.handle($0) })
    guard case .returned = first else { return XCTFail("\(first)") }
    stopped.finish()
    XCTAssertFalse(stoppedEvents.events.contains { if case .outsideFailure = $0.kind { true } else { false } },
                   "\(stoppedEvents.events)")
    // Each run's output, in the order the runs ended; each run said when it started, first.
    var output: [String] = []
    var started: [TestID] = []
    for event in recorder.events {
      switch event.kind {
      case .testStarted where event.lane == 1: output.append("")
      case .testStarted(let id): started.append(id)
      case .outputCaptured(_, let text): output[output.count - 1] += text
      default: break
      }
    }
    XCTAssertEqual(output, order.map { "\($0) out\n\($0) err\n\($0) tail" })
    XCTAssertEqual(started, order.map { steps[$0].id })
  }

  /// The same suites give the same verdicts in a worker as in this process.
  func testWorkerAndInProcessRunsGiveTheSameVerdicts() throws {
    for isolation in ["worker", "none"] {
      let run = try runFixture(["--isolation", isolation, "--filter", "Crashes/pass", "--filter", "Crashes/fails",
                                "--waiter", "all", "--json", path("events.jsonl")])
      XCTAssertEqual(run.status, 1, isolation)
      let verdicts = try results().mapValues(\.verdict)
      XCTAssertEqual(verdicts, ["passes first": .passed, "passes last": .passed, "fails": .failed], isolation)
      XCTAssertTrue(run.output.contains("Result: 12 passed, 6 failed, 0 skipped"), run.output)
    }
  }

  /// In a worker, one SIGINT or SIGTERM stops the hung test's worker: the test ends as
  /// `interrupted`, no further test starts, every report is finished with what ran, and the
  /// run exits with 128 + the signal. The event stream, read through a FIFO as it is
  /// written, tells when the hung test started.
  func testAnInterruptFinishesEveryReportWithWhatRan() throws {
    try assertAnInterruptFinishesEveryReport(workers: 1)
  }

  /// The same in a process per test.
  func testAnInterruptFinishesEveryReportInAProcessPerTest() throws {
    try assertAnInterruptFinishesEveryReport(workers: 1, isolation: "test")
  }

  /// With two workers, the other lane's tests are stopped too, and the reports hold exactly
  /// what ended (how far the other lane got is a race).
  func testAnInterruptStopsEveryWorker() throws {
    try assertAnInterruptFinishesEveryReport(workers: 2)
  }

  /// With the tests of one suite spread over three workers (`--parallel`), the same: the
  /// suite still ends, with what ran, and every report is finished.
  func testAnInterruptStopsEveryWorkerOfAParallelSuite() throws {
    try assertAnInterruptFinishesEveryReport(workers: 3, flags: ["--parallel"])
  }

  private func assertAnInterruptFinishesEveryReport(workers: Int, isolation: String = "worker", flags: [String] = []) throws {
    let fixture = try harnessFixture()
    for (signal, name) in [(SIGINT, "SIGINT (interrupt)"), (SIGTERM, "SIGTERM (terminated)")] {
      let events = path("events-\(signal).fifo")
      XCTAssertEqual(mkfifo(events, 0o600), 0)
      let process = Process()
      process.executableURL = fixture
      process.arguments = ["--isolation", isolation, "--workers", "\(workers)", "--filter", "Fixture/", "--filter", "Crashes/passes last",
                           "--junit", path("report.xml"), "--json", events] + flags
      let output = Pipe()
      process.standardOutput = output
      process.standardError = FileHandle.nullDevice
      try process.run()
      let stream = try XCTUnwrap(FileHandle(forReadingAtPath: events))
      var lines: [String] = []
      var pending = Data()
      func readLine() -> String? {
        while true {
          if let newline = pending.firstIndex(of: 0x0A) {
            defer { pending.removeSubrange(...newline) }
            return String(decoding: pending[..<newline], as: UTF8.self)
          }
          let data = stream.availableData
          if data.isEmpty { return nil }
          pending += data
        }
      }
      while let line = readLine() {
        lines.append(line)
        if line.contains(#""output":"blocking\n""#) { kill(process.processIdentifier, signal) }
      }
      let console = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      process.waitUntilExit()
      XCTAssertEqual(process.terminationReason, .exit)
      XCTAssertEqual(process.terminationStatus, 128 + signal, console)
      let kinds = try lines.map { try Event(jsonLine: $0).kind }
      let ended = try EventRecorder(jsonLines: lines.joined(separator: "\n")).results.map { ($0.test, $0.result) }
      guard workers == 1 else {
        // `blocks` is interrupted; a test of the other lane running at that moment is too.
        let blocks = try XCTUnwrap(ended.first { $0.0.name == "blocks" }?.1)
        XCTAssertEqual(blocks.issues.map(\.kind), [.interrupted])
        let errored = ended.filter { $0.1.verdict == .errored }
        XCTAssertEqual(errored.flatMap { $0.1.issues.map(\.kind) }, errored.map { _ in .interrupted })
        XCTAssertEqual(kinds.last?.name, "runEnded")
        XCTAssertEqual(kinds.filter { $0.name == "suiteEnded" }.count, kinds.filter { $0.name == "suiteStarted" }.count)
        let passed = ended.count - errored.count
        XCTAssertTrue(console.contains("\nResult: \(passed) passed, \(errored.count) failed, 0 skipped in "), console)
        try assertCheckerPasses(path("report.xml"), ["--expect-tests", "\(ended.count)", "--expect-failures", "0",
                                                     "--expect-errors", "\(errored.count)", "--expect-skipped", "0"])
        continue
      }
      XCTAssertEqual(kinds.map(\.name), ["runStarted", "suiteStarted", "testStarted", "testEnded", "testStarted", "outputCaptured",
                                         "issueRecorded", "testEnded", "suiteEnded", "runEnded"])
      guard case .testEnded(let test, _) = kinds[7], let result = ended.last?.1 else { return XCTFail("\(kinds[7])") }
      XCTAssertEqual(test.name, "blocks")
      XCTAssertEqual(result.verdict, .errored)
      XCTAssertEqual(result.issues.map(\.kind), [.interrupted])
      XCTAssertEqual(result.issues.first?.message, "Interrupted: the run received \(name) while the "
        + "test ran, so its worker process was stopped; its last output:\nblocking")
      XCTAssertTrue(console.contains("\nResult: 1 passed, 1 failed, 0 skipped in "), console)
      try assertCheckerPasses(path("report.xml"), ["--expect-tests", "2", "--expect-failures", "0", "--expect-errors", "1",
                                                   "--expect-skipped", "0"])
    }
  }
}
