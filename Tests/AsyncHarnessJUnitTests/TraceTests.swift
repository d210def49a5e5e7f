import AsyncHarness
import Foundation
import HarnessTestSupport
import Synchronization
import XCTest

@testable import AsyncHarnessJUnit

/// Issue 33, `--trace PATH`: the Chrome trace-event JSON of runs in this process and in
/// worker processes (the `harness-fixture` executable as a child process), read with
/// `JSONSerialization` and checked against the trace-event format: every event's required
/// fields for its phase, slices that nest on each track, timestamps that never go back on a
/// track, one slice for every attempt that ran, instant events for a crash, a time limit and
/// an interrupt, the waits and the steps of scheduled tests inside their attempts, and
/// hostile test names kept as they are.
final class TraceTests: ReportTestCase {
  /// The trace's events, after checking the file's shape and every event's fields.
  private func traceEvents(at path: String, file: StaticString = #filePath, line: UInt = #line) throws -> [[String: Any]] {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any], file: file, line: line)
    XCTAssertEqual(object["displayTimeUnit"] as? String, "ms", file: file, line: line)
    let events = try XCTUnwrap(object["traceEvents"] as? [[String: Any]], file: file, line: line)
    var lastTime: [String: Int] = [:]
    var slices: [String: [(start: Int, end: Int)]] = [:]
    for event in events {
      let phase = try XCTUnwrap(event["ph"] as? String, "\(event)", file: file, line: line)
      for field in ["name", "ph", "ts", "pid", "tid"] + (phase == "X" ? ["dur"] : []) + (["b", "e"].contains(phase) ? ["id", "cat"] : []) {
        XCTAssertNotNil(event[field], "\(phase) event without \(field): \(event)", file: file, line: line)
      }
      XCTAssertTrue(["X", "i", "b", "e", "M"].contains(phase), "phase \(phase)", file: file, line: line)
      guard phase != "M", let time = event["ts"] as? Int, let pid = event["pid"] as? Int, let tid = event["tid"] as? Int else { continue }
      let track = "\(pid)/\(tid)"
      XCTAssertGreaterThanOrEqual(time, lastTime[track] ?? 0, "time goes back on track \(track): \(event)", file: file, line: line)
      lastTime[track] = time
      if phase == "X" { slices[track, default: []].append((time, time + (event["dur"] as? Int ?? -1))) }
    }
    for (track, spans) in slices {
      var open: [Int] = []  // the ends of the slices that contain the next one
      for span in spans.sorted(by: { ($0.start, $1.end) < ($1.start, $0.end) }) {
        XCTAssertGreaterThanOrEqual(span.end, span.start, "a negative duration on \(track)", file: file, line: line)
        while let end = open.last, end <= span.start { open.removeLast() }
        if let end = open.last { XCTAssertLessThanOrEqual(span.end, end, "slices overlap on \(track)", file: file, line: line) }
        open.append(span.end)
      }
    }
    return events
  }

  /// The attempts' slices.
  private func slices(_ events: [[String: Any]]) -> [[String: Any]] {
    events.filter { $0["ph"] as? String == "X" && $0["cat"] as? String == "test" }
  }

  /// The waits' slices, each as `tid name outcome waiter test`, after checking that each lies
  /// inside a slice of its test on its track.
  private func waits(_ events: [[String: Any]], file: StaticString = #filePath, line: UInt = #line) -> [String] {
    let attempts = slices(events)
    return events.filter { $0["cat"] as? String == "wait" }.map { wait in
      let args = wait["args"] as? [String: Any] ?? [:]
      let (start, end) = (wait["ts"] as? Int ?? -1, (wait["ts"] as? Int ?? -1) + (wait["dur"] as? Int ?? -1))
      let inside = attempts.contains { attempt in
        let from = attempt["ts"] as? Int ?? 0
        return attempt["name"] as? String == args["test"] as? String && attempt["tid"] as? Int == wait["tid"] as? Int
          && from <= start && end <= from + (attempt["dur"] as? Int ?? 0)
      }
      XCTAssertTrue(inside, "a wait outside its attempt: \(wait)", file: file, line: line)
      return [wait["tid"], wait["name"], args["outcome"], args["waiter"], args["test"]].map { "\($0 ?? "?")" }.joined(separator: " ")
    }
  }
  private func instants(_ events: [[String: Any]]) -> [[String: Any]] { events.filter { $0["ph"] as? String == "i" } }

  /// Every attempt that ended in the JSON Lines file (test ID, attempt, lane of its start),
  /// as the trace names its slices.
  private func attempts(inStream path: String) throws -> [String: Int] {
    var lanes: [TestID: Int] = [:]
    var attempts: [String: Int] = [:]
    for line in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n") {
      let event = try Event(jsonLine: line)
      switch event.kind {
      case .testStarted(let test): lanes[test] = event.lane
      case .testEnded(let test, let end):
        for attempt in end.attempts {
          var id = test
          id.attempt = attempt.number
          XCTAssertEqual(attempt.lane, lanes[id], "the attempt's lane is its testStarted's: \(id)")
          attempts["\(test.suite)/\(test.name) #\(attempt.number)"] = attempt.lane
        }
      default: break
      }
    }
    return attempts
  }

  /// Worker processes in two lanes, tests spread over them, retries, a crash, a time limit:
  /// one slice per attempt on the track of the lane its `testStarted` names, and the
  /// instant events.
  func testAWorkerRunsTraceHasASliceForEveryAttemptOnItsLane() throws {
    let run = try runToEnd(try harnessFixture(), [
      "--filter", "Hostile/", "--filter", "Flaky/", "--filter", "Crashes/fatal error", "--filter", "Crashes/hangs outside a wait",
      "--time-limit", "1", "--retries", "1", "--workers", "2", "--parallel", "--trace", path("trace.json"),
      "--json", path("events.jsonl"),
    ], in: directory)
    XCTAssertEqual(run.status, 1, run.output + run.errors)
    let events = try traceEvents(at: path("trace.json"))
    let expected = try attempts(inStream: path("events.jsonl"))
    var traced: [String: Int] = [:]
    for slice in slices(events) {
      let args = try XCTUnwrap(slice["args"] as? [String: Any])
      let key = "\(slice["name"] as? String ?? "?") #\(args["attempt"] as? Int ?? 0)"
      XCTAssertNil(traced[key], "two slices for \(key)")
      traced[key] = slice["tid"] as? Int
      XCTAssertEqual(args["retry"] as? Int, (args["attempt"] as? Int ?? 0) - 1)
      XCTAssertEqual(args["waiter"] as? String, "expectation")
      XCTAssertNotNil(args["verdict"] as? String)
    }
    XCTAssertEqual(traced, expected)
    XCTAssertEqual(Set(expected.values), [1, 2], "both lanes ran tests")
    XCTAssertEqual(traced["Crashes/fatal error #2"].map { _ in true }, true, "the retry has a slice of its own")
    let hostile = ["Hostile/<script>alert(1)</script> #1", "Hostile/bell \u{07} escape \u{1B}[31m nul \u{00} end #1"]
    XCTAssertEqual(hostile.filter { traced[$0] != nil }, hostile, "\(traced.keys.sorted())")
    let issues = instants(events).map { "\($0["name"] as? String ?? "?") \(($0["args"] as? [String: Any])?["test"] as? String ?? "?")" }
    XCTAssertTrue(issues.contains("crashed Crashes/fatal error"), "\(issues)")
    XCTAssertTrue(issues.contains("timeLimitExceeded Crashes/hangs outside a wait"), "\(issues)")
    let names = events.filter { $0["ph"] as? String == "M" }.compactMap { ($0["args"] as? [String: Any])?["name"] as? String }
    XCTAssertEqual(Set(names), ["harness-fixture", "suites", "lane 1", "lane 2"])
    let suites = events.filter { $0["cat"] as? String == "suite" }.compactMap { "\($0["ph"] as? String ?? "?") \($0["name"] as? String ?? "?")" }
    XCTAssertEqual(Set(suites), ["b Flaky [expectation]", "e Flaky [expectation]", "b Hostile [expectation]",
                                 "e Hostile [expectation]", "b Crashes [expectation]", "e Crashes [expectation]"])
  }

  /// Issue 31's async tests side by side in a worker (`--parallel`, the fixture's `SideBySide`
  /// suite): attempts that overlap in a lane go on sub-tracks of it, so slices still nest and
  /// never go back on every track, one slice per attempt; the HTML page's rows are the
  /// trace's tracks, with the same attempts.
  func testAttemptsSideBySideInAWorkerGoOnSubTracksOfTheirLane() throws {
    let run = try runToEnd(try harnessFixture(), [
      "--filter", "SideBySide/", "--time-limit", "5", "--parallel", "--trace", path("trace.json"),
      "--report-html", path("report.html"), "--json", path("events.jsonl"),
    ], in: directory)
    XCTAssertEqual(run.status, 1, run.output + run.errors)
    let events = try traceEvents(at: path("trace.json"))
    var names: [Int: String] = [:]
    for event in events where event["name"] as? String == "thread_name" {
      names[event["tid"] as? Int ?? -1] = (event["args"] as? [String: Any])?["name"] as? String
    }
    var traced: [String: String] = [:]  // each attempt's track
    var perTrack: [String: [String]] = [:]
    for slice in slices(events) {
      let key = "\(slice["name"] as? String ?? "?") #\((slice["args"] as? [String: Any])?["attempt"] as? Int ?? 0)"
      XCTAssertNil(traced[key], "two slices for \(key)")
      let track = try XCTUnwrap(names[slice["tid"] as? Int ?? -1], "a slice on a track without a name: \(slice)")
      traced[key] = track
      perTrack[track, default: []].append(slice["name"] as? String ?? "?")  // (no markup in these names)
    }
    let expected = try attempts(inStream: path("events.jsonl"))
    XCTAssertEqual(Set(traced.keys), Set(expected.keys), "one slice per attempt")
    XCTAssertEqual(expected.count, 21, "20 tests, one of them with a second attempt")
    for (key, track) in traced {
      // On its lane's track or one of its sub-tracks: `lane N` or `lane N · K`, K from 2.
      let lane = "lane \(expected[key] ?? 0)"
      XCTAssertTrue(track == lane || track.hasPrefix(lane + " · "), "\(key) on \(track), started in \(lane)")
    }
    XCTAssertTrue(perTrack.keys.contains("lane 1 · 2") || perTrack.keys.contains("lane 2 · 2"),
                  "the awaiting tests ran side by side: \(perTrack)")
    XCTAssertEqual(Set(names.values).count, names.count, "each track has a name of its own: \(names)")
    // The page draws the same rows, with the same attempts.
    let page = try XMLReader.readDocument(path("report.html"))
    var drawn: [String: [String]] = [:]
    for row in page.descendants where row.attribute("class") == "lane" {
      let name = String(row.descendants.first { $0.attribute("class") == "lane-name" }?.text.prefix { $0 != ":" } ?? "?")
      drawn[name] = row.descendants.compactMap { $0.attribute("title")?.components(separatedBy: " [expectation]").first }
    }
    XCTAssertEqual(drawn.mapValues { $0.sorted() }, perTrack.mapValues { $0.sorted() })
    // Each awaiting test's wait is a slice inside its own, on its sub-track.
    let awaited = waits(events).filter { $0.contains(" SideBySide/awaits ") }.map { $0.split(separator: " ", maxSplits: 1)[1] }
    XCTAssertEqual(awaited.sorted(), (0..<12).map { "the wait for \"callback \($0)\" completed expectation SideBySide/awaits \($0)" }.sorted())
  }

  /// `--trace` asks for the waits: each is a slice inside its attempt's, named by what it
  /// awaited, with the strategy and how it ended; a run without it reports none.
  func testEachWaitIsASliceInsideItsAttempt() throws {
    let suites = [Suite("Waits") {
      Test("loads") { t in
        let loaded = t.expectation("loaded")
        t.background.async { loaded.fulfill() }
        try t.wait(for: loaded)
        try t.wait(until: "ready", timeout: .seconds(1)) { true }
      }
      Test("times out") { t in try t.wait(for: t.expectation("never"), timeout: .milliseconds(20)) }
      Test("runs out of time") { t in try t.wait(for: t.expectation("late"), timeout: .seconds(30)) }
      Test("fails while waiting") { t in
        let never = t.expectation("a reply")
        t.background.async { t.fail("no reply") }
        try t.wait(for: never)
      }
    }]
    let status = HarnessMain.status(arguments: ["--trace", path("trace.json"), "--json", path("events.jsonl"), "--waiter", "semaphore",
                                                "--time-limit", "0.2"], suites: suites, output: { _ in }, errors: { _ in })
    XCTAssertEqual(status, 1)
    XCTAssertEqual(waits(try traceEvents(at: path("trace.json"))), [
      "1 the wait for \"loaded\" completed semaphore Waits/loads", "1 the wait until \"ready\" completed semaphore Waits/loads",
      "1 the wait for \"never\" timedOut semaphore Waits/times out",
      "1 the wait for \"late\" timeLimitExceeded semaphore Waits/runs out of time",
      "1 the wait for \"a reply\" interrupted semaphore Waits/fails while waiting",
    ])
    let lines = try String(contentsOfFile: path("events.jsonl"), encoding: .utf8)
    XCTAssertEqual(lines.components(separatedBy: "\"kind\":\"waitEnded\"").count - 1, 5)
    let quiet = HarnessMain.status(arguments: ["--json", path("quiet.jsonl"), "--waiter", "semaphore", "--time-limit", "0.2"],
                                   suites: suites, output: { _ in }, errors: { _ in })
    XCTAssertEqual(quiet, 1)
    XCTAssertFalse(try String(contentsOfFile: path("quiet.jsonl"), encoding: .utf8).contains("waitEnded"))
  }

  /// In a worker, each wait reaches the parent as it ends (a mark on the worker's channel),
  /// not with the test's reply: a test that waited twice and then crashed has both waits
  /// inside its attempt, before the crash's instant, and the JSON Lines stream has them as
  /// `waitEnded` events of that test.
  func testAWorkersWaitsReachTheTraceEvenWhenItThenCrashes() throws {
    let run = try runToEnd(try harnessFixture(), ["--filter", "Traced/", "--filter", "Crashes/passes first",
                                                  "--trace", path("trace.json"), "--json", path("events.jsonl")], in: directory)
    XCTAssertEqual(run.status, 1, run.output + run.errors)
    let events = try traceEvents(at: path("trace.json"))
    XCTAssertEqual(waits(events), ["1 the wait for \"callback\" completed expectation Traced/waits, then crashes",
                                   "1 the wait until \"ready\" completed expectation Traced/waits, then crashes"])
    let crash = try XCTUnwrap(instants(events).first { $0["name"] as? String == "crashed" })
    let lastWait = try XCTUnwrap(events.last { $0["cat"] as? String == "wait" })
    XCTAssertLessThanOrEqual((lastWait["ts"] as? Int ?? .max) + (lastWait["dur"] as? Int ?? 0), crash["ts"] as? Int ?? -1)
    var streamed: [String] = []
    for line in try String(contentsOfFile: path("events.jsonl"), encoding: .utf8).split(separator: "\n") {
      if case .waitEnded(let test, let awaited, let outcome, _) = try Event(jsonLine: line).kind {
        streamed.append("\(test.path) \(awaited) \(outcome)")
      }
    }
    XCTAssertEqual(streamed, ["Traced/waits, then crashes the wait for \"callback\" completed",
                              "Traced/waits, then crashes the wait until \"ready\" completed"])
  }

  /// Under `scheduled`, `--trace` shows each step the schedule took as an instant inside its
  /// attempt: what ran, in the order it ran, at its virtual time; as many as the result's
  /// `scheduleTrace` counts. A run without `--trace` sends no step.
  func testEachScheduleStepIsAnInstantInsideItsAttemptInTheOrderItRan() throws {
    let orders = Mutex<[[String]]>([])  // what each attempt's queues ran, in order
    let suites = [Suite("Race") {
      Test("last writer wins") { t in
        let ran = Mutex<[String]>([])
        let done = t.expectation("all stored", expectedFulfillmentCount: 3)
        for label in ["first", "second"] {
          t.queue(label).async { ran.withLock { $0.append(label) }; done.fulfill() }
        }
        t.queue("later").asyncAfter(.milliseconds(500)) { ran.withLock { $0.append("later") }; done.fulfill() }
        try t.wait(for: done)
        orders.withLock { $0.append(ran.withLock { $0 }) }
        t.expectEqual(ran.withLock { $0 }.first, "first")
      }
    }]
    let status = HarnessMain.status(arguments: ["--trace", path("trace.json"), "--json", path("events.jsonl"), "--explore", "6"],
                                    suites: suites, output: { _ in }, errors: { _ in })
    XCTAssertEqual(status, 1, "some schedules run `second` first")
    let events = try traceEvents(at: path("trace.json"))
    let steps = events.filter { $0["cat"] as? String == "step" }
    let attempts = slices(events)
    var drawn: [[String]] = []  // the steps of each attempt, as the trace lists them
    for step in steps {
      let args = try XCTUnwrap(step["args"] as? [String: Any], "\(step)")
      XCTAssertEqual(step["ph"] as? String, "i")
      XCTAssertEqual(step["s"] as? String, "t", "scoped to the attempt's track")
      XCTAssertEqual(args["test"] as? String, "Race/last writer wins")
      let time = try XCTUnwrap(step["ts"] as? Int)
      XCTAssertTrue(attempts.contains { attempt in
        let from = attempt["ts"] as? Int ?? 0
        return attempt["tid"] as? Int == step["tid"] as? Int && from <= time && time <= from + (attempt["dur"] as? Int ?? 0)
      }, "a step outside its attempt: \(step)")
      let number = try XCTUnwrap(args["step"] as? Int)
      if number == 1 { drawn.append([]) }
      XCTAssertEqual(number, drawn.last.map { $0.count + 1 }, "steps in the order they ran: \(step)")
      let virtualTime = try XCTUnwrap(args["virtualTime"] as? Double)
      XCTAssertEqual(virtualTime, step["name"] as? String == "later" ? 0.5 : 0, "\(step)")
      drawn[drawn.count - 1].append(try XCTUnwrap(step["name"] as? String))
    }
    let ran = orders.withLock { $0 }
    XCTAssertEqual(ran.count, 6)
    XCTAssertEqual(drawn.map { $0.joined(separator: " ") }.sorted(), ran.map { $0.joined(separator: " ") }.sorted())
    XCTAssertEqual(Set(drawn.map { $0.joined(separator: " ") }), ["first second later", "second first later"])
    var counted = 0
    for line in try String(contentsOfFile: path("events.jsonl"), encoding: .utf8).split(separator: "\n") {
      if case .testEnded(_, let end) = try Event(jsonLine: line).kind { counted += try XCTUnwrap(end.lastAttempt.scheduleTrace).steps }
    }
    XCTAssertEqual(counted, steps.count, "as many steps as the schedules took")
    let quiet = HarnessMain.status(arguments: ["--json", path("quiet.jsonl"), "--explore", "6"], suites: suites,
                                   output: { _ in }, errors: { _ in })
    XCTAssertEqual(quiet, 1)
    XCTAssertFalse(try String(contentsOfFile: path("quiet.jsonl"), encoding: .utf8).contains("scheduleStep"))
  }

  /// The steps of Swift concurrency tasks under `scheduled`, in a worker process: they cross
  /// its back channel, named by the task the scheduler names, as many as the schedules took.
  func testAWorkersScheduleStepsReachTheTrace() throws {
    let run = try runToEnd(try harnessFixture(), ["--filter", "Concurrency/", "--explore", "3", "--trace", path("trace.json"),
                                                  "--json", path("events.jsonl")], in: directory)
    XCTAssertEqual(run.status, 1, run.output + run.errors)
    let steps = try traceEvents(at: path("trace.json")).filter { $0["cat"] as? String == "step" }
    var drawn: [[String]] = []
    for step in steps {
      let args = try XCTUnwrap(step["args"] as? [String: Any], "\(step)")
      if args["step"] as? Int == 1 { drawn.append([]) }
      XCTAssertEqual(args["step"] as? Int, drawn.last.map { $0.count + 1 }, "\(step)")
      XCTAssertEqual(args["virtualTime"] as? Double, 0, "no sleep: \(step)")
      drawn[drawn.count - 1].append(try XCTUnwrap(step["name"] as? String))
    }
    XCTAssertEqual(drawn.count, 3, "one list of steps per schedule")
    for names in drawn {
      XCTAssertEqual(Set(names), ["task #1", "task #2", "task #3", "an actor's job"], "the test's task, the two it starts, the actor")
    }
    var counted: [Int] = []
    for line in try String(contentsOfFile: path("events.jsonl"), encoding: .utf8).split(separator: "\n") {
      if case .testEnded(_, let end) = try Event(jsonLine: line).kind { counted.append(try XCTUnwrap(end.lastAttempt.scheduleTrace).steps) }
    }
    XCTAssertEqual(drawn.map(\.count), counted, "each attempt's steps, as many as its schedule took")
  }

  /// Each worker replacement in the stream (`workerReplaced`: reason, test, lane), in order,
  /// after checking that it comes while its attempt runs (between its `testStarted` and its
  /// `testEnded`).
  private func replacements(inStream path: String) throws -> [String] {
    var running: Set<TestID> = []
    var replaced: [String] = []
    for line in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n") {
      let event = try Event(jsonLine: line)
      switch event.kind {
      case .testStarted(let test): running.insert(test)
      case .testEnded(let test, _): running.remove(test)
      case .workerReplaced(let test, let reason):
        XCTAssertTrue(running.contains(test), "\(test)'s worker replaced while it did not run")
        replaced.append("\(reason) \(test.suite)/\(test.name) #\(test.attempt) lane \(event.lane ?? 0)")
      default: break
      }
    }
    return replaced
  }

  /// The trace's `workerReplaced` instants: reason, test, and the track of its attempt's
  /// slice, which it must end.
  private func replacements(inTrace events: [[String: Any]]) -> [String] {
    let slices = slices(events)
    return instants(events).filter { $0["name"] as? String == "workerReplaced" }.map { instant in
      let args = instant["args"] as? [String: Any] ?? [:]
      let test = args["test"] as? String ?? "?"
      let ends = slices.contains {
        $0["name"] as? String == test && $0["tid"] as? Int == instant["tid"] as? Int
          && ($0["ts"] as? Int ?? 0) + ($0["dur"] as? Int ?? 0) == instant["ts"] as? Int
      }
      return "\(args["reason"] as? String ?? "?") \(test)\(ends ? "" : " (not at the end of its slice)")"
    }
  }

  /// A worker that crashes, is stopped past a time limit or is retired for leaked work is
  /// replaced: the stream says so with the lane, and the trace shows an instant at the end of
  /// the attempt it ran; tests that kept their worker have none.
  func testAWorkerReplacedIsAnEventAndAnInstantOnItsLane() throws {
    let run = try runToEnd(try harnessFixture(), [
      "--filter", "Crashes/passes first", "--filter", "Crashes/fatal error", "--filter", "Crashes/hangs outside a wait",
      "--filter", "Leaks/spins tasks", "--filter", "Leaks/spins a thread", "--filter", "Leaks/awaits after the thread",
      "--time-limit", "1",
      "--trace", path("trace.json"), "--json", path("events.jsonl"),
    ], in: directory)
    XCTAssertEqual(run.status, 1, run.output + run.errors)
    XCTAssertEqual(try replacements(inStream: path("events.jsonl")), [
      "crashed Crashes/fatal error #1 lane 1", "stoppedAtTimeLimit Crashes/hangs outside a wait #1 lane 1",
      "leakedWork Leaks/spins tasks #1 lane 1", "leakedWork Leaks/spins a thread #1 lane 1",
    ])
    XCTAssertEqual(replacements(inTrace: try traceEvents(at: path("trace.json"))), [
      "crashed Crashes/fatal error", "stoppedAtTimeLimit Crashes/hangs outside a wait", "leakedWork Leaks/spins tasks",
      "leakedWork Leaks/spins a thread",
    ])
  }

  /// Side by side: a worker that crashes while several tests run is replaced once, said
  /// through the test that crashed it when the worker named it (the others run again side by
  /// side in a fresh worker), else through the first test running: then the three run again
  /// in halves, the crash and awaits 0 crash a second worker, and the crash alone a third;
  /// a test whose wait reached its time limit retires its worker once.
  func testASideBySideWorkerReplacedIsSaidOnce() throws {
    for (crasher, said) in [("crashes", 1), ("queue crash", 3)] {
      let crash = try runToEnd(try harnessFixture(), [
        "--filter", "SideBySideRude/\(crasher)", "--filter", "SideBySideRude/awaits 0", "--filter", "SideBySideRude/awaits 1",
        "--parallel", "--trace", path("crash.json"), "--json", path("crash.jsonl"),
      ], in: directory)
      XCTAssertEqual(crash.status, 1, crash.output + crash.errors)
      XCTAssertEqual(try replacements(inStream: path("crash.jsonl")),
                     Array(repeating: "crashed SideBySideRude/\(crasher) #1 lane 1", count: said))
      XCTAssertEqual(replacements(inTrace: try traceEvents(at: path("crash.json"))),
                     Array(repeating: "crashed SideBySideRude/\(crasher)", count: said))
    }
    let limit = try runToEnd(try harnessFixture(), [
      "--filter", "SideBySideRude/awaits", "--parallel", "--time-limit", "0.2", "--trace", path("limit.json"),
      "--json", path("limit.jsonl"),
    ], in: directory)
    XCTAssertEqual(limit.status, 1, limit.output + limit.errors)
    let replaced = try replacements(inStream: path("limit.jsonl"))
    XCTAssertEqual(replaced.count, 1, "\(replaced)")
    XCTAssertTrue(replaced.allSatisfy { $0.hasPrefix("exceededTimeLimit SideBySideRude/awaits ") }, "\(replaced)")
    let traced = replacements(inTrace: try traceEvents(at: path("limit.json")))
    XCTAssertEqual(traced, replaced.map { String($0.prefix { $0 != "#" }.dropLast()) })
  }

  /// A lane's own track keeps its lane's number as `tid`; its sub-tracks come after the last
  /// lane's, each with a name that says which lane it belongs to.
  func testSubTracksComeAfterTheLanes() throws {
    let reporter = try TraceReporter(path: path("trace.json"), processName: "p")
    let start = Date(timeIntervalSince1970: 1_000_000)
    let test = { (name: String) in TestID(suite: "S", name: name, host: "expectation") }
    reporter.handle(Event(.runStarted(RunInfo(waiters: ["expectation"])), timestamp: start))
    for (name, lane, at) in [("a", 1, 0.0), ("b", 1, 0.1), ("c", 2, 0.2)] {
      reporter.handle(Event(.testStarted(test(name)), timestamp: start + at, lane: lane))
    }
    for (name, at) in [("a", 1.0), ("b", 1.1), ("c", 1.2)] {
      reporter.handle(Event(.testEnded(test(name), TestEnd(once: TestResult(verdict: .passed), duration: 1)), timestamp: start + at))
    }
    try reporter.finish()
    let events = try traceEvents(at: path("trace.json"))
    let tracks = events.filter { $0["name"] as? String == "thread_name" }
      .map { "\($0["tid"] as? Int ?? -1) \(($0["args"] as? [String: Any])?["name"] as? String ?? "?")" }
    XCTAssertEqual(tracks, ["0 suites", "1 lane 1", "3 lane 1 · 2", "2 lane 2"])
    // A viewer orders the tracks by their sort index, not their tid: each lane's sub-tracks follow it.
    let order = events.filter { $0["name"] as? String == "thread_sort_index" }
      .map { "\($0["tid"] as? Int ?? -1) \(($0["args"] as? [String: Any])?["sort_index"] as? Int ?? -1)" }
    XCTAssertEqual(order, ["0 0", "1 1", "3 2", "2 3"])
    XCTAssertEqual(slices(events).map { "\($0["tid"] as? Int ?? -1) \($0["name"] as? String ?? "?") \($0["ts"] as? Int ?? -1)" },
                   ["1 S/a 0", "3 S/b 100000", "2 S/c 200000"])
  }

  /// In this process: one lane, a slice for each of a failing test's attempts, and names
  /// holding markup and control characters kept as they are (the control characters escaped).
  func testAnInProcessRunsTraceKeepsHostileTextAsItIs() throws {
    let suites = [Suite("Hostile") {
      Test("<script>alert(1)</script>") { t in t.expect(true) }
      Test("tab\there \u{07}") { t in t.fail("fails") }
    }]
    let status = HarnessMain.status(arguments: ["--trace", path("trace.json"), "--retries", "2"], suites: suites,
                                    output: { _ in }, errors: { _ in })
    XCTAssertEqual(status, 1)
    let events = try traceEvents(at: path("trace.json"))
    let names = slices(events).map { "\($0["name"] as? String ?? "?") \(($0["args"] as? [String: Any])?["verdict"] as? String ?? "?")" }
    XCTAssertEqual(names, ["Hostile/<script>alert(1)</script> passed", "Hostile/tab\there \u{07} failed (retried)",
                           "Hostile/tab\there \u{07} failed (retried)", "Hostile/tab\there \u{07} failed"])
    XCTAssertEqual(Set(slices(events).compactMap { $0["tid"] as? Int }), [1])
    let text = try String(contentsOfFile: path("trace.json"), encoding: .utf8)
    XCTAssertFalse(text.contains("\u{07}") || text.contains("\t"), "control characters are escaped")
  }

  /// A run interrupted by SIGINT while a test runs in a worker still writes its trace, with the
  /// stopped test's slice and an `interrupted` instant event.
  func testAnInterruptedRunStillWritesItsTrace() throws {
    let process = Process()
    process.executableURL = try harnessFixture()
    process.arguments = ["--filter", "Fixture/", "--trace", path("trace.json"), "--json", path("events.jsonl")]
    process.currentDirectoryURL = directory
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    let watchdog = DispatchWorkItem { kill(process.processIdentifier, SIGKILL) }
    DispatchQueue.global().asyncAfter(deadline: .now() + 30, execute: watchdog)
    // The stream's testStarted line is written at once: then the test runs in its worker.
    while process.isRunning,
          (try? String(contentsOfFile: path("events.jsonl"), encoding: .utf8))?.contains("\"name\":\"blocks\"") != true {
      usleep(10_000)  // deliberate: another process writes the file; nothing announces a line to this one
    }
    kill(process.processIdentifier, SIGINT)
    process.waitUntilExit()
    watchdog.cancel()
    XCTAssertEqual(process.terminationStatus, 128 + SIGINT)
    let events = try traceEvents(at: path("trace.json"))
    XCTAssertEqual(slices(events).compactMap { $0["name"] as? String }, ["Fixture/passes", "Fixture/blocks"])
    XCTAssertEqual(instants(events).compactMap { $0["name"] as? String }, ["interrupted"])
  }

  /// `--trace` is checked before any test runs, like the other reports.
  func testABadTracePathIsAUsageError() {
    let errors = WrittenText()
    let status = HarnessMain.status(arguments: ["--trace", path("missing/trace.json")], suites: [Suite("S") { Test("t") { _ in } }],
                                    output: { _ in }, errors: errors.write)
    XCTAssertEqual(status, 2)
    XCTAssertTrue(errors.text.contains("cannot write the trace to \(path("missing/trace.json")): the directory"), errors.text)
    let same = HarnessMain.status(arguments: ["--trace", path("r"), "--json", path("r")], suites: [Suite("S") { Test("t") { _ in } }],
                                  output: { _ in }, errors: { _ in })
    XCTAssertEqual(same, 2)
  }
}
