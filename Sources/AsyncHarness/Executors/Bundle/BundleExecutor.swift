import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs steps that stand for the tests of another package's test bundle (`harness test`):
/// each step stands for one of `tests` (an XCTest method or a Swift Testing function, found
/// by its suite and name), whose body is never run in this process.
///
/// Not a process per test: one worker, the bundle started for one testing library (see
/// ``BundleOutputReader`` for each library's invocation), runs the step asked for and the
/// steps of the same library the runner prepared after it (``prepare(_:)``, and in a run of
/// one lane those of the entries after it, ``prepare(following:of:)``), in one invocation
/// whose list of tests stays under ``BundleOutputReader/listLimit`` bytes, while this process reads its standard output a line at a time and streams
/// each test's issues (failures at file:line, thrown errors, Swift Testing's known issues as
/// warnings) and output as events. A skip (`XCTSkip`, a disabled Swift Testing test) ends
/// the attempt as ``AttemptEnd/skipped(reason:duration:)``. A library may run the tests in
/// its own order: a test that ends before the runner asks for it is kept, with its events,
/// until it does.
///
/// A crash, `exit`, or a test still running at its time limit (its process group is
/// stopped: SIGTERM, then SIGKILL after `gracePeriod`) ends that test only, with the tail
/// of its output; the tests after it run in a new worker. An XCTest worker's standard output
/// is line-buffered through `stdbuf -oL` when the command finds it, so that what a test
/// printed before it crashed is not lost in XCTest's buffer (Swift Testing line-buffers its
/// own).
final class BundleExecutor: TestExecutor {
  /// The test bundle: on Linux, an executable.
  let bundle: String
  /// The directory its workers start in: the package's, as with `swift test`, so that tests
  /// that read files by relative paths find them.
  let directory: String
  /// The tests the steps stand for, by their path (`Suite/name`).
  let tests: [String: ExistingTest]
  /// `stdbuf`, which starts the bundle with its standard output line-buffered, when there is one.
  let lineBuffering: String?
  /// How long a stopped worker has between SIGTERM and SIGKILL.
  let gracePeriod: Duration
  /// When requested, the running test's worker is stopped and the test ends as interrupted.
  let stop: StopRequest?
  private let state = Mutex(BundleRuns())

  /// Creates an executor that runs `tests` of `bundle`.
  init(bundle: String, directory: String, tests: [String: ExistingTest], lineBuffering: String?,
       gracePeriod: Duration = .seconds(1), stop: StopRequest?) {
    self.bundle = bundle
    self.directory = directory
    self.tests = tests
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
    state.withLock { state in
      state.prepared = steps
      state.following = nil
    }
  }

  /// Remembers the entries the runner hands over after the prepared steps: a new worker runs
  /// their tests too.
  func prepare(following entries: ArraySlice<Runner.Plan.Entry>, of plan: Runner.Plan) {
    state.withLock { $0.following = (entries, plan) }
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
          guard tests[step.id.path] != nil else {
            return .couldNotStart(reason: "\(step.id.path) is not a test of the test bundle \(bundle)")
          }
          // A worker running other steps (the runner asked for a retry first) is stopped:
          // the steps it had not ended run again in a new worker.
          state.worker?.kill()
          do {
            let steps = state.steps(from: step, of: tests)
            state.worker = try BundleWorker(bundle: bundle, directory: directory, lineBuffering: lineBuffering,
                                            steps: steps, gracePeriod: gracePeriod)
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
      state.following = nil
    }
  }
}

/// The executor's worker, the steps prepared, and the tests that ended before the runner
/// asked for them.
struct BundleRuns {
  fileprivate var worker: BundleWorker?
  var prepared: Runner.Plan.Steps?
  /// The entries the runner hands over after the prepared steps, when it knows them.
  var following: (entries: ArraySlice<Runner.Plan.Entry>, plan: Runner.Plan)?
  fileprivate var ended: [TestID: BundleWorker.Ended] = [:]

  /// `step`, then the prepared steps after it and the steps of the following entries, of the
  /// same library (the same waiter), that run and have not ended, each with the test it
  /// stands for: what a new worker runs, as many as its list of tests holds.
  func steps(from step: Runner.Step, of tests: [String: ExistingTest]) -> [(step: Runner.Step, test: ExistingTest)] {
    guard let test = tests[step.id.path] else { return [] }
    var batch = [(step: step, test: test)]
    var listBytes = test.id.utf8.count
    var first = step.id
    first.attempt = 1
    guard let prepared, let index = prepared.firstIndex(where: { $0.id == first }) else { return batch }
    /// Adds the candidates that run; false once the list is full.
    func add(_ candidates: some Sequence<Runner.Step>) -> Bool {
      for candidate in candidates
      where candidate.test.skipReason == nil && ended[candidate.id] == nil && candidate.waiter.name == step.waiter.name {
        guard let test = tests[candidate.id.path] else { continue }
        listBytes += 1 + test.id.utf8.count
        guard listBytes <= BundleOutputReader.listLimit else { return false }
        batch.append((candidate, test))
      }
      return true
    }
    guard add(prepared[(index + 1)...]), let following else { return batch }
    for entry in following.entries where entry.waiter.name == step.waiter.name {
      guard add(following.plan.steps(of: entry, repetition: 1)) else { break }
    }
    return batch
  }
}

/// One invocation of the test bundle running a list of tests of one library, read a line at a time.
private struct BundleWorker {
  /// A test that ended: the events it streamed while the runner waited for another, and how
  /// it ended.
  struct Ended {
    var events: [Event.Kind] = []
    var end: AttemptEnd
  }

  /// The test running now: where its events go, what it printed.
  private struct Running {
    let step: Runner.Step
    /// The runner's sink when the runner waits for this test, else `nil`: its events are kept.
    var sink: EventSink?
    var kept: [Event.Kind] = []
    var output = OutputBuffer()
    let start = ContinuousClock().now

    mutating func emit(_ kind: Event.Kind) {
      if let sink { sink(kind) } else { kept.append(kind) }
    }
  }

  let process: ChildProcess
  /// The steps given to this worker, by the name their library prints for them.
  private let steps: [String: Runner.Step]
  private var lines = LineSplitter()
  private var buffer = ReadBuffer()
  private var reader: BundleOutputReader
  private var running: Running?
  /// The names of the tests that started, and the steps that ended, in this worker.
  private var started: Set<String> = []
  private var finished: Set<TestID> = []
  /// Everything the worker printed, for a crash between tests.
  private var recent = OutputBuffer()
  private var groupStop: GroupStop

  /// Starts the bundle in `directory` for `steps`, each with the test it stands for, all of
  /// one library.
  init(bundle: String, directory: String, lineBuffering: String?, steps: [(step: Runner.Step, test: ExistingTest)],
       gracePeriod: Duration) throws {
    let reader = BundleOutputReader(steps.first?.test.library ?? .xctest)
    let (arguments, environment) = reader.invocation(of: steps.map(\.test))
    let buffering = reader.buffersOutput ? lineBuffering : nil
    process = try ChildProcess(
      executable: buffering ?? bundle, arguments: (buffering == nil ? [] : ["-oL", bundle]) + arguments,
      environment: environment, directory: directory)
    self.reader = reader
    self.steps = Dictionary(steps.map { (reader.name(of: $0.test), $0.step) }) { first, _ in first }
    groupStop = GroupStop(gracePeriod: gracePeriod, deadline: steps.first?.step.timeLimit.map { ContinuousClock().now + $0 })
  }

  /// Whether the step is one this worker runs and has not ended yet.
  func holds(_ id: TestID) -> Bool {
    steps.values.contains { $0.id == id } && !finished.contains(id)
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
    while true {
      let ready = poll(&descriptors, nfds_t(descriptors.count), groupStop.timeout())
      if ready < 0 && errno != EINTR { break }
      if ready == 0 { groupStop.stop(process); continue }
      if descriptors[1].revents != 0, let signal = stop?.signal {
        descriptors[1].fd = -1
        groupStop.stop(process, interrupt: signal)
      }
      guard descriptors[0].revents != 0 else { continue }
      let count = buffer.read(from: process.output)
      if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
      guard count > 0 else { break }
      lines.append(buffer.prefix(count))
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
    for note in reader.read(line[...], running: running?.step) {
      if case .started(let name) = note {
        started.insert(name)
        guard let step = steps[name] else { continue }
        running = Running(step: step, sink: step.id == asked.id ? events : nil)
        groupStop.deadline = step.timeLimit.map { ContinuousClock().now + $0 }
        continue
      }
      guard var test = running else { continue }
      switch note {
      case .started: break
      case .issue(var issue):
        if issue.sourceLocation == nil { issue.sourceLocation = test.step.test.sourceLocation }
        test.emit(.issueRecorded(test.step.id, issue))
      case .output(let text):
        if let text = test.output.append(ArraySlice((text + "\n").utf8)) { test.emit(.outputCaptured(test.step.id, text)) }
      case .ended(let skipReason, let seconds):
        let seconds = seconds ?? test.start.duration(to: .now).timeInterval
        let end: AttemptEnd = skipReason.map { .skipped(reason: $0, duration: seconds) } ?? .returned(duration: seconds)
        ended[test.step.id] = Ended(events: test.kept, end: end)
        finished.insert(test.step.id)
        running = nil
        groupStop.deadline = asked.timeLimit.map { ContinuousClock().now + $0 }
        continue
      }
      running = test
    }
  }

  /// Ends what the worker's end ends: the test it was running (a crash, `exit`, its time
  /// limit, an interrupt), or, when it ran none of its tests, the step asked for; the tests
  /// it never started run again in a new worker, unless it ended as its library ends having
  /// run every test it knows (it has none of the others).
  private mutating func end(_ exit: ProcessEnding, asked: Runner.Step, ended: inout [TestID: Ended]) {
    if let test = running {
      ended[test.step.id] = Ended(
        events: test.kept, end: groupStop.ending(exit, timeLimit: test.step.timeLimit, output: test.output.tail))
      running = nil
      return
    }
    let complete = groupStop.stopped == nil && reader.statusesOfACompleteRun.contains { exit == .exited($0) }
    if complete {
      for (name, step) in steps where !started.contains(name) {
        ended[step.id] = Ended(end: .couldNotStart(
          reason: "The test bundle ran no test \(step.id.path): it has no such \(reader.libraryName) test"))
      }
    } else if finished.isEmpty || groupStop.stopped != nil {
      ended[asked.id] = Ended(end: groupStop.ending(exit, timeLimit: asked.timeLimit, output: recent.tail))
    }
  }
}
