import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs steps that stand for the XCTest tests of another package's test bundle
/// (`harness test`): each step's suite is an XCTest class (`Module.Class`) and its test a
/// method, and the test's body is never run in this process.
///
/// Not a process per test: one worker, the bundle started as `<bundle> Module.Class/a,…`,
/// runs the step asked for and the steps the runner prepared after it (``prepare(_:)``), in
/// one invocation, while this process reads its standard output a line at a time
/// (``XCTestOutput``) and streams each test's failures (at file:line), thrown errors and
/// output as events. A skip (`XCTSkip`) ends the attempt as
/// ``AttemptEnd/skipped(reason:duration:)``. XCTest runs the tests in its own order: a test
/// that ends before the runner asks for it is kept, with its events, until it does.
///
/// A crash, `exit`, or a test still running at its time limit (its process group is
/// stopped: SIGTERM, then SIGKILL after `gracePeriod`) ends that test only, with the tail
/// of its output; the tests after it run in a new worker. The worker's standard output is
/// line-buffered through `stdbuf -oL` when the command finds it, so that what a test printed
/// before it crashed is not lost in XCTest's buffer.
final class BundleExecutor: TestExecutor {
  /// The test bundle: on Linux, an executable.
  let bundle: String
  /// `stdbuf`, which starts the bundle with its standard output line-buffered, when there is one.
  let lineBuffering: String?
  /// How long a stopped worker has between SIGTERM and SIGKILL.
  let gracePeriod: Duration
  /// When requested, the running test's worker is stopped and the test ends as interrupted.
  let stop: StopRequest?
  private let state = Mutex(BundleRuns())

  /// Creates an executor that runs the tests of `bundle`.
  init(bundle: String, lineBuffering: String?, gracePeriod: Duration = .seconds(1), stop: StopRequest?) {
    self.bundle = bundle
    self.lineBuffering = lineBuffering
    self.gracePeriod = gracePeriod
    self.stop = stop
  }

  /// True: a test past its time limit has its worker's process group stopped.
  var stopsHungTests: Bool { true }

  /// True: each test runs in a worker process of the bundle.
  var isolatesTests: Bool { true }

  /// Remembers the steps the runner hands over next: the worker started for a step runs
  /// them after it in the same process.
  func prepare(_ steps: Runner.Plan.Steps) {
    state.withLock { $0.prepared = steps }
  }

  /// Runs `step` in the worker that was given it, or in a new worker given it and the
  /// prepared steps after it that have not ended yet.
  func run(_ step: Runner.Step, events: EventSink) -> AttemptEnd {
    state.withLock { state in
      while true {
        if let ended = state.ended.removeValue(forKey: step.id) {
          for kind in ended.events { events(kind) }
          return ended.end
        }
        if state.worker?.holds(step.id) != true {
          // A worker running other steps (the runner asked for a retry first) is stopped:
          // the steps it had not ended run again in a new worker.
          state.worker?.kill()
          do {
            state.worker = try BundleWorker(
              bundle: bundle, lineBuffering: lineBuffering, steps: state.steps(from: step), gracePeriod: gracePeriod)
          } catch {
            state.worker = nil
            return .couldNotStart(reason: "\(error)")
          }
        }
        if !state.worker!.run(until: step, events: events, ended: &state.ended, stop: stop) { state.worker = nil }
      }
    }
  }

  /// Stops the worker left, if any.
  func finish() {
    state.withLock { state in
      state.worker?.kill()
      state.worker = nil
      state.prepared = nil
    }
  }
}

/// The executor's worker, the steps prepared, and the tests that ended before the runner
/// asked for them.
private struct BundleRuns {
  var worker: BundleWorker?
  var prepared: Runner.Plan.Steps?
  var ended: [TestID: BundleWorker.Ended] = [:]

  /// `step`, then the prepared steps after it that run and have not ended: what a new worker runs.
  func steps(from step: Runner.Step) -> [Runner.Step] {
    var first = step.id
    first.attempt = 1
    guard let prepared, let index = prepared.firstIndex(where: { $0.id == first }) else { return [step] }
    return [step] + prepared[(index + 1)...].filter { $0.test.skipReason == nil && ended[$0.id] == nil }
  }
}

/// One invocation of the test bundle running a list of XCTest tests, read a line at a time.
private struct BundleWorker {
  /// A test that ended: the events it streamed while the runner waited for another, and how
  /// it ended.
  struct Ended {
    var events: [Event.Kind] = []
    var end: AttemptEnd
  }

  /// The test running now: where its events go, what of its record was relayed.
  private struct Running {
    let step: Runner.Step
    /// The runner's sink when the runner waits for this test, else `nil`: its events are kept.
    var sink: EventSink?
    var kept: [Event.Kind] = []
    var output = OutputBuffer()
    var failuresRelayed = 0
    var outputRelayed = 0
    let start = ContinuousClock().now

    mutating func emit(_ kind: Event.Kind) {
      if let sink { sink(kind) } else { kept.append(kind) }
    }
  }

  let process: ChildProcess
  /// The steps given to this worker, by the name XCTest prints for them.
  private let steps: [String: Runner.Step]
  private var lines = LineSplitter()
  private var parsed = XCTestOutput()
  private var running: Running?
  /// Everything the worker printed, for a crash between tests.
  private var recent = OutputBuffer()
  private var groupStop: GroupStop
  /// Whether a test given to this worker ended in it.
  private var endedAny = false

  init(bundle: String, lineBuffering: String?, steps: [Runner.Step], gracePeriod: Duration) throws {
    let names = steps.map { "\($0.suite.name)/\($0.test.name)" }.joined(separator: ",")
    process = try ChildProcess(
      executable: lineBuffering ?? bundle, arguments: (lineBuffering == nil ? [] : ["-oL", bundle]) + [names],
      environment: [:])
    self.steps = Dictionary(steps.map { (XCTestOutput.name(ofMethod: $0.test.name, inClass: $0.suite.name), $0) }) { $1 }
    groupStop = GroupStop(gracePeriod: gracePeriod, deadline: steps.first?.timeLimit.map { ContinuousClock().now + $0 })
  }

  /// Whether the step is one this worker runs and has not ended yet.
  func holds(_ id: TestID) -> Bool {
    steps.values.contains { $0.id == id } && !parsed.records.contains { $0.outcome != nil && steps[$0.test]?.id == id }
  }

  /// Reads the worker until `step` ends (`true`: the worker runs on) or the worker ends
  /// (`false`); every test that ends meanwhile goes to `ended`, `step`'s events to `events`.
  mutating func run(until step: Runner.Step, events: EventSink, ended: inout [TestID: Ended], stop: StopRequest?) -> Bool {
    // Lines read with the previous step's come first.
    while let line = lines.next() {
      relay(line, asked: step, events: events, ended: &ended)
      if ended[step.id] != nil { return true }
    }
    var descriptors = [
      pollfd(fd: process.output, events: Int16(POLLIN), revents: 0),
      pollfd(fd: stop?.descriptor ?? -1, events: Int16(POLLIN), revents: 0),
    ]
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      let ready = poll(&descriptors, nfds_t(descriptors.count), groupStop.timeout())
      if ready < 0 && errno != EINTR { break }
      if ready == 0 { groupStop.stop(process); continue }
      if descriptors[1].revents != 0, let signal = stop?.signal {
        descriptors[1].fd = -1
        groupStop.stop(process, interrupt: signal)
      }
      guard descriptors[0].revents != 0 else { continue }
      let count = read(process.output, &buffer, buffer.count)
      if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
      guard count > 0 else { break }
      lines.append(buffer[..<count])
      while let line = lines.next() {
        relay(line, asked: step, events: events, ended: &ended)
        if ended[step.id] != nil { return true }
      }
    }
    if let rest = lines.rest() { relay(rest, asked: step, events: events, ended: &ended) }
    end(process.waitForExit(), asked: step, ended: &ended)
    return false
  }

  /// Stops the worker's process group and waits for it.
  func kill() {
    process.signal(SIGKILL)
    _ = process.waitForExit()
  }

  /// Reads one line of the worker's output and relays what it says.
  private mutating func relay(_ bytes: ArraySlice<UInt8>, asked: Runner.Step, events: EventSink,
                             ended: inout [TestID: Ended]) {
    let line = String(decoding: bytes, as: UTF8.self)
    _ = recent.append(ArraySlice((line + "\n").utf8))
    let count = parsed.records.count
    parsed.read(line[...])
    guard let record = parsed.records.last else { return }
    if parsed.records.count > count {
      running = steps[record.test].map { Running(step: $0, sink: $0.id == asked.id ? events : nil) }
      groupStop.deadline = running?.step.timeLimit.map { ContinuousClock().now + $0 }
      return
    }
    guard var test = running else { return }
    let module = test.step.suite.name.split(separator: ".").first.map(String.init) ?? test.step.suite.name
    for failure in record.failures[test.failuresRelayed...] {
      test.emit(.issueRecorded(test.step.id, Self.issue(failure, module: module, test: test.step.test)))
    }
    test.failuresRelayed = record.failures.count
    for output in record.output[test.outputRelayed...] {
      if let text = test.output.append(ArraySlice((output + "\n").utf8)) { test.emit(.outputCaptured(test.step.id, text)) }
    }
    test.outputRelayed = record.output.count
    running = test
    guard let outcome = record.outcome else { return }
    let seconds = record.seconds ?? test.start.duration(to: .now).timeInterval
    let end: AttemptEnd = outcome == .skipped
      ? .skipped(reason: record.skipReason ?? "", duration: seconds) : .returned(duration: seconds)
    ended[test.step.id] = Ended(events: test.kept, end: end)
    endedAny = true
    running = nil
    groupStop.deadline = asked.timeLimit.map { ContinuousClock().now + $0 }
  }

  /// An XCTest failure as an issue: a thrown error (no location) at the test, an assertion
  /// at its file and line.
  private static func issue(_ failure: XCTestOutput.Failure, module: String, test: Test) -> Issue {
    guard let file = failure.file else {
      return Issue(kind: .errorThrown, message: failure.message, sourceLocation: test.sourceLocation)
    }
    let name = file.split(separator: "/").last.map(String.init) ?? file
    return Issue(kind: .expectationFailed, message: failure.message,
                 sourceLocation: SourceLocation(fileID: "\(module)/\(name)", filePath: file, line: failure.line ?? 0, column: 1))
  }

  /// Ends what the worker's end ends: the test it was running (a crash, `exit`, its time
  /// limit, an interrupt), or, when it ran none of its tests, the step asked for; the tests
  /// it never started run again in a new worker, unless it ended as XCTest ends, having run
  /// every test it knows (it has none of the others' names).
  private mutating func end(_ exit: ProcessEnding, asked: Runner.Step, ended: inout [TestID: Ended]) {
    if let test = running {
      ended[test.step.id] = Ended(
        events: test.kept, end: groupStop.ending(exit, timeLimit: test.step.timeLimit, output: test.output.tail))
      running = nil
      return
    }
    let started = Set(parsed.records.map(\.test))
    let finishedAsXCTestDoes = groupStop.stopped == nil && (exit == .exited(0) || exit == .exited(1))
    if finishedAsXCTestDoes {
      for (name, step) in steps where !started.contains(name) {
        ended[step.id] = Ended(end: .couldNotStart(
          reason: "The test bundle ran no test \(step.suite.name)/\(step.test.name): it has no such XCTest test"))
      }
    } else if !endedAny || groupStop.stopped != nil {
      ended[asked.id] = Ended(end: groupStop.ending(exit, timeLimit: asked.timeLimit, output: recent.tail))
    }
  }
}
