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
/// whose list of tests stays under ``BundleChannelReader/listLimit`` bytes. The worker has
/// the library ``BundleChannelLibrary`` preloaded, and its testing library's own records
/// (each test's start, issues and end) come on a private channel that this process reads
/// beside the worker's output (``BundleChannelReader``): each test's issues (failures at
/// file:line, thrown errors, Swift Testing's known issues as warnings) and output are
/// streamed as events, and nothing a test prints is read as its library's words. A skip
/// (`XCTSkip`, a disabled Swift Testing test) ends the attempt as
/// ``AttemptEnd/skipped(reason:duration:)``. A library may run the tests in its own order: a
/// test that ends before the runner asks for it is kept, with its events, until it does.
///
/// A crash, `exit`, or a test still running at its time limit (counted from its own start;
/// its process group is stopped: SIGTERM, then SIGKILL after `gracePeriod`) ends that test
/// only, with the tail of its output; the tests after it run in a new worker. A worker ends
/// at its exit, not when its output closes: a process a test left running that still holds
/// the output is stopped with the worker's group, never waited for. A test that leaves a
/// child process running gets a `leaked` warning, and its worker is replaced once the test
/// the runner asked for ends.
final class BundleExecutor: TestExecutor {
  /// The test bundle: on Linux, an executable.
  let bundle: String
  /// The directory its workers start in: the package's, as with `swift test`, so that tests
  /// that read files by relative paths find them.
  let directory: String
  /// The tests the steps stand for, by their path (`Suite/name`).
  let tests: [String: ExistingTest]
  /// The library preloaded into each worker (``BundleChannelLibrary``).
  let channelLibrary: String
  /// How long a stopped worker has between SIGTERM and SIGKILL.
  let gracePeriod: Duration
  /// When requested, the running test's worker is stopped and the test ends as interrupted.
  let stop: StopRequest?
  private let state = Mutex(BundleRuns())

  /// Creates an executor that runs `tests` of `bundle`.
  init(bundle: String, directory: String, tests: [String: ExistingTest], channelLibrary: String,
       gracePeriod: Duration = .seconds(1), stop: StopRequest?) {
    self.bundle = bundle
    self.directory = directory
    self.tests = tests
    self.channelLibrary = channelLibrary
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
          state.alone.remove(step.id)
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
            state.worker = try BundleWorker(bundle: bundle, directory: directory, channelLibrary: channelLibrary,
                                            steps: steps, oneAtATime: state.alone.contains(step.id),
                                            gracePeriod: gracePeriod)
          } catch {
            state.worker = nil
            return .couldNotStart(reason: "\(error)")
          }
        }
        if !state.worker!.run(until: step, events: events, ended: &state.ended, stop: stop) {
          state.alone.formUnion(state.worker!.runAgainAlone)
          state.worker = nil
        } else if state.worker!.leftProcesses {
          // Replaced: what the test left running goes with the worker's process group.
          state.worker?.kill()
          state.worker = nil
        }
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
      state.alone = []
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
  /// The tests that were running side by side when their worker crashed: each runs again
  /// alone, in a worker that runs one test at a time.
  var alone: Set<TestID> = []

  /// `step`, then the prepared steps after it and the steps of the following entries, of the
  /// same library (the same waiter), that run and have not ended, each with the test it
  /// stands for: what a new worker runs, as many as its list of tests holds. The tests that
  /// must run alone go in a batch of their own (run one at a time), the others in another.
  func steps(from step: Runner.Step, of tests: [String: ExistingTest]) -> [(step: Runner.Step, test: ExistingTest)] {
    guard let test = tests[step.id.path] else { return [] }
    var batch = [(step: step, test: test)]
    let runsAlone = alone.contains(step.id)
    var listBytes = test.id.utf8.count
    var first = step.id
    first.attempt = 1
    guard let prepared, let index = prepared.firstIndex(where: { $0.id == first }) else { return batch }
    /// Adds the candidates that run; false once the list is full.
    func add(_ candidates: some Sequence<Runner.Step>) -> Bool {
      for candidate in candidates
      where candidate.test.skipReason == nil && ended[candidate.id] == nil && alone.contains(candidate.id) == runsAlone
        && candidate.waiter.name == step.waiter.name {
        guard let test = tests[candidate.id.path] else { continue }
        listBytes += 1 + test.id.utf8.count
        guard listBytes <= BundleChannelReader.listLimit else { return false }
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

/// One invocation of the test bundle running a list of tests of one library: its channel
/// read a record at a time, its output cut into the tests that printed it. XCTest runs one
/// test at a time; Swift Testing runs its tests side by side as it does under `swift test`.
private struct BundleWorker {
  /// A test that ended: the events it streamed while the runner waited for another, and how
  /// it ended.
  struct Ended {
    var events: [Event.Kind] = []
    var end: AttemptEnd
  }

  /// A test running now: where its events go, what it printed, when it is stopped.
  private struct Running {
    let step: Runner.Step
    /// The runner's sink when the runner waits for this test and its events may be streamed,
    /// else `nil`: its events are kept until it ends.
    var sink: EventSink?
    var kept: [Event.Kind] = []
    var output: PrintedLines
    let start: ContinuousClock.Instant
    /// Its time limit's end, counted from its own start.
    let deadline: ContinuousClock.Instant?

    /// XCTest's own lines for the test are left out of its output (`ownLines`).
    init(step: Runner.Step, sink: EventSink?, ownLines: XCTestOwnLines?) {
      self.step = step
      self.sink = sink
      if let ownLines {
        output = PrintedLines(leavingOut: { ownLines.contains($0) })
      } else {
        output = PrintedLines()
      }
      let start = ContinuousClock().now
      self.start = start
      deadline = step.timeLimit.map { start + $0 }
    }

    mutating func emit(_ kind: Event.Kind) {
      if let sink { sink(kind) } else { kept.append(kind) }
    }

    /// Adds what the test printed, each line marked when other tests were running too, and
    /// streams the whole lines.
    mutating func printed(_ bytes: ArraySlice<UInt8>, shared: Bool) {
      if let text = output.add(bytes, shared: shared) { emit(.outputCaptured(step.id, text)) }
    }

    /// Streams what is left of the test's output, a line without its newline too.
    mutating func flushOutput() {
      if let text = output.flush() { emit(.outputCaptured(step.id, text)) }
    }
  }

  let process: ChildProcess
  /// The read end of the channel (non-blocking), and a descriptor that polls readable when
  /// the process exits (`nil` where the platform has none).
  private let channel: Int32
  private let exitWatch: Int32?
  /// The steps given to this worker, by their test's ID.
  private let steps: [String: Runner.Step]
  private var reader: BundleChannelReader
  /// Whether the worker runs one test at a time (XCTest, or tests run again alone).
  private let runsOneTestAtATime: Bool
  private var records = LineSplitter()
  private var recordsRead = 0
  private var buffer = ReadBuffer()
  private var output: MarkedOutput
  /// The tests running, by ID, and the order they started in.
  private var running: [String: Running] = [:]
  /// The IDs of the tests that started, and the steps that ended, in this worker.
  private var started: Set<String> = []
  private var finished: Set<TestID> = []
  /// Everything the worker printed, for a crash between tests or among several.
  private var recent = OutputBuffer()
  private var groupStop: GroupStop
  /// Whether a test left a process running: the worker is replaced.
  private(set) var leftProcesses = false
  /// The last test that ended.
  private var lastEnded: TestID?
  /// The processes running as the test whose end is relayed next ended, as the library said
  /// just before it, and those already reported.
  private var leftByNextEnd: [String]?
  private var knownChildren: Set<String> = []
  /// The tests that were running side by side when the worker crashed: each runs again
  /// alone (in a fresh worker running one test at a time), for a verdict of its own.
  private(set) var runAgainAlone: [TestID] = []

  /// Starts the bundle in `directory` for `steps`, each with the test it stands for, all of
  /// one library, with `channelLibrary` preloaded.
  init(bundle: String, directory: String, channelLibrary: String, steps: [(step: Runner.Step, test: ExistingTest)],
       oneAtATime: Bool, gracePeriod: Duration) throws {
    let library = steps.first?.test.library ?? .xctest
    let reader = BundleChannelReader(library)
    runsOneTestAtATime = oneAtATime || reader.runsOneTestAtATime
    let marker = "AsyncHarness \(String(UInt64.random(in: 0...UInt64.max), radix: 16))"
    let channel = try ChildProcess.makePipe()
    defer { close(channel.write) }
    do {
      process = try ChildProcess(
        executable: bundle, arguments: reader.arguments(running: steps.map(\.test), oneAtATime: oneAtATime),
        environment: BundleChannelLibrary.environment(library: channelLibrary, testing: library, marker: marker)
          .merging(reader.environment) { $1 },
        handing: [(channel.write, BundleChannelLibrary.channelDescriptor)], directory: directory)
    } catch {
      close(channel.read)
      throw error
    }
    _ = fcntl(channel.read, F_SETFL, fcntl(channel.read, F_GETFL) | O_NONBLOCK)
    process.readOutputWithoutBlocking()
    self.channel = channel.read
    exitWatch = process.exitDescriptor()
    self.reader = reader
    output = MarkedOutput(marker: Array("\u{1}\(marker) ".utf8))
    self.steps = Dictionary(steps.map { ($0.test.id, $0.step) }) { first, _ in first }
    groupStop = GroupStop(gracePeriod: gracePeriod, deadline: steps.first?.step.timeLimit.map { ContinuousClock().now + $0 })
  }

  /// Whether the step is one this worker runs and has not ended yet.
  func holds(_ id: TestID) -> Bool {
    steps.values.contains { $0.id == id } && !finished.contains(id) && !runAgainAlone.contains(id)
  }

  /// Reads the worker until `step` ends (`true`: the worker runs on) or the worker exits
  /// (`false`); every test that ends meanwhile goes to `ended`, `step`'s events to `events`.
  mutating func run(until step: Runner.Step, events: EventSink, ended: inout [TestID: Ended], stop: StopRequest?) -> Bool {
    // Records read with the previous step's come first.
    if relayRecords(asked: step, events: events, ended: &ended) { return true }
    var descriptors = [
      pollfd(fd: process.output, events: Int16(POLLIN), revents: 0),
      pollfd(fd: channel, events: Int16(POLLIN), revents: 0),
      pollfd(fd: stop?.descriptor ?? -1, events: Int16(POLLIN), revents: 0),
      pollfd(fd: exitWatch ?? -1, events: Int16(POLLIN), revents: 0),
    ]
    while true {
      let deadline = groupStop.timeout()
      // Without an exit descriptor, the process is asked whether it exited ten times a second.
      let timeout = exitWatch != nil ? deadline : deadline < 0 ? 100 : min(deadline, 100)
      let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
      if ready < 0 && errno != EINTR { break }
      if ready == 0 && groupStop.timeout() == 0 { groupStop.stop(process) }
      if descriptors[2].revents != 0, let signal = stop?.signal {
        descriptors[2].fd = -1
        groupStop.stop(process, interrupt: signal)
      }
      if descriptors[0].revents != 0 && !readOutput() { descriptors[0].fd = -1 }
      if descriptors[1].revents != 0 && !readChannel() { descriptors[1].fd = -1 }
      if relayRecords(asked: step, events: events, ended: &ended) { return true }
      if descriptors[3].revents != 0 || (exitWatch == nil && process.ending(waiting: false) != nil) { break }
    }
    // The worker exited: what it wrote is in the pipes. A process it left that still holds
    // the output is stopped with its group, not waited for.
    if process.ending(waiting: false) == nil { process.signal(SIGKILL) }
    let exit = process.ending(waiting: true) ?? .signaled(SIGKILL)
    while readChannel() {}
    _ = relayRecords(asked: step, events: events, ended: &ended)
    if !drainOutput() {
      process.signal(SIGKILL)
      let leak = Issue(kind: .leaked, message: "Leaked work: a process the tests started still held the test bundle's "
        + "output open after the bundle exited; it was stopped with the bundle's process group")
      if !running.isEmpty {
        for (id, test) in running { running[id]?.emit(.issueRecorded(test.step.id, leak)) }
      } else if let last = lastEnded {
        ended[last]?.events.append(.issueRecorded(last, leak))
      }
    }
    release(output.rest())
    end(exit, asked: step, ended: &ended)
    if let exitWatch { close(exitWatch) }
    close(channel)
    _ = process.waitForExit()
    return false
  }

  /// Stops the worker's process group and waits for it.
  func kill() {
    process.signal(SIGKILL)
    _ = process.waitForExit()
    if let exitWatch { close(exitWatch) }
    close(channel)
  }

  /// Reads what the channel holds into the records to relay; false at its end.
  private mutating func readChannel() -> Bool {
    while true {
      let count = buffer.read(from: channel)
      if count < 0 && errno == EINTR { continue }
      if count < 0 { return errno == EAGAIN }
      guard count > 0 else { return false }
      records.append(buffer.prefix(count))
    }
  }

  /// Reads what the output pipe holds and hands it to the tests that printed it; false at
  /// its end.
  private mutating func readOutput() -> Bool {
    while true {
      let count = buffer.read(from: process.output)
      if count < 0 && errno == EINTR { continue }
      if count < 0 { return errno == EAGAIN }
      guard count > 0 else { return false }
      release(output.append(buffer.prefix(count), recordsRelayed: recordsRead))
    }
  }

  /// Reads the output of an exited worker to its end, giving processes it left a moment to
  /// let go of it; false when one still holds it.
  private mutating func drainOutput() -> Bool {
    let until = ContinuousClock().now + .milliseconds(100)
    var ready = pollfd(fd: process.output, events: Int16(POLLIN), revents: 0)
    while readOutput() {
      let left = ContinuousClock().now.duration(to: until)
      guard left > .zero, poll(&ready, 1, Int32(left.timeInterval * 1000) + 1) != 0 else { return false }
    }
    return true
  }

  /// Gives output to the test running, to each of the tests running (marked as shared), or
  /// keeps it as the worker's own when none runs.
  private mutating func release(_ bytes: ArraySlice<UInt8>) {
    guard !bytes.isEmpty else { return }
    _ = recent.append(bytes)
    let shared = running.count > 1
    for id in running.keys { running[id]?.printed(bytes, shared: shared) }
  }

  /// Relays the records read; true once `asked` ended.
  private mutating func relayRecords(asked: Runner.Step, events: EventSink, ended: inout [TestID: Ended]) -> Bool {
    while let line = records.next() {
      // What the tests printed before the record is the tests' that ran then: it is in the
      // pipe already, before the record's marker.
      _ = readOutput()
      for note in reader.read(line) { relay(note, asked: asked, events: events, ended: &ended) }
      recordsRead += 1
      release(output.release(recordsRelayed: recordsRead))
      if ended[asked.id] != nil { return true }
    }
    return false
  }

  /// Relays what one record says.
  private mutating func relay(_ note: BundleNote, asked: Runner.Step, events: EventSink, ended: inout [TestID: Ended]) {
    switch note {
    case .started(let id):
      started.insert(id)
      guard let step = steps[id], !runAgainAlone.contains(step.id) else { return }
      // Events are streamed as they come only where no other test can start beside this one.
      let streams = step.id == asked.id && runsOneTestAtATime
      running[id] = Running(step: step, sink: streams ? events : nil,
                            ownLines: reader.printsOwnLines ? XCTestOwnLines(of: id) : nil)
      setDeadline(asked: asked)
    case .issue(let id, var issue):
      // An issue of no test running (a Swift Testing suite's) is the test's when only one runs.
      let onlyOne = reader.givesSuiteIssuesToTheRunningTest && running.count == 1 ? running.keys.first : nil
      guard let key = running[id] != nil ? id : onlyOne,
        let test = running[key]
      else { return }
      if issue.sourceLocation == nil { issue.sourceLocation = test.step.test.sourceLocation }
      running[key]?.emit(.issueRecorded(test.step.id, issue))
    case .ended(let id, let skipReason, let seconds):
      defer { leftByNextEnd = nil }
      guard var test = running.removeValue(forKey: id) else { return }
      test.flushOutput()
      // Children are the test's only when no other test ran beside it (they may be another's,
      // still running as it should).
      let left = running.isEmpty ? (leftByNextEnd ?? []).filter { !knownChildren.contains($0) } : []
      if !left.isEmpty {
        leftProcesses = true
        knownChildren.formUnion(left)
        test.emit(.issueRecorded(test.step.id, Issue(kind: .leaked, message:
          "Leaked work: the test returned while child processes it started are still running ("
            + left.joined(separator: ", ") + "); the test bundle is stopped with them once this test's turn ends, and "
            + "the tests after it run in a fresh one")))
      }
      let seconds = seconds ?? test.start.duration(to: .now).timeInterval
      let end: AttemptEnd = skipReason.map { .skipped(reason: $0, duration: seconds) } ?? .returned(duration: seconds)
      ended[test.step.id] = Ended(events: test.kept, end: end)
      finished.insert(test.step.id)
      lastEnded = test.step.id
      setDeadline(asked: asked)
    case .leftProcesses(let processes):
      leftByNextEnd = processes
    }
  }
  /// Stops the worker at the end of the first running test's time limit, or, while none
  /// runs, at the end of the asked test's counted from now.
  private mutating func setDeadline(asked: Runner.Step) {
    groupStop.deadline = running.isEmpty
      ? asked.timeLimit.map { ContinuousClock().now + $0 } : running.values.compactMap(\.deadline).min()
  }

  /// Ends what the worker's end ends. A test running alone gets the worker's end (a crash,
  /// `exit`, its time limit, an interrupt). Of tests running side by side, an interrupt ends
  /// each, and a time limit the tests past their own; the others, and all of them after a
  /// crash or an `exit` (which names no one test), run again alone in a fresh worker, for a
  /// verdict of their own. When none ran, the step asked for ends so; the tests it never
  /// started run again in a new worker, unless it ended as its library ends having run every
  /// test it knows (it has none of the others).
  private mutating func end(_ exit: ProcessEnding, asked: Runner.Step, ended: inout [TestID: Ended]) {
    if !running.isEmpty {
      let now = ContinuousClock().now
      let alone = running.count == 1
      for (_, var test) in running {
        let ends = alone || groupStop.stopped?.interrupt != nil
          || (groupStop.stopped != nil && test.deadline.map { $0 <= now } == true)
        guard ends else {
          runAgainAlone.append(test.step.id)
          continue
        }
        test.flushOutput()
        ended[test.step.id] = Ended(events: test.kept, end: groupStop.ending(
          exit, timeLimit: test.step.timeLimit, output: alone ? test.output.tail : recent.tail))
        finished.insert(test.step.id)
      }
      running = [:]
      return
    }
    let complete = groupStop.stopped == nil && reader.statusesOfACompleteRun.contains { exit == .exited($0) }
    if complete {
      for (id, step) in steps where !started.contains(id) {
        ended[step.id] = Ended(end: .couldNotStart(
          reason: "The test bundle ran no test \(step.id.path): it has no such \(reader.libraryName) test"))
      }
    } else if finished.isEmpty || groupStop.stopped != nil {
      ended[asked.id] = Ended(end: groupStop.ending(exit, timeLimit: asked.timeLimit, output: recent.tail))
    }
  }
}

/// A test bundle's output, cut at the numbered marker lines (`\u{1}MARKER N`) the preloaded
/// library (``BundleChannelLibrary``) writes to standard output just before it writes record
/// N to the channel: what comes before marker N was printed before record N, whatever the
/// reads cut the output into. A marker that never comes (a test had redirected its output)
/// holds nothing up: the next one cuts.
struct MarkedOutput {
  /// The marker's text up to its number.
  let marker: [UInt8]
  /// Bytes read and not handed out: from a marker whose record was not relayed yet on.
  private var held: [UInt8] = []

  init(marker: [UInt8]) { self.marker = marker }

  /// Adds bytes read; returns those printed after the record `recordsRelayed` was written
  /// and before the next one.
  mutating func append(_ bytes: ArraySlice<UInt8>, recordsRelayed: Int) -> ArraySlice<UInt8> {
    held += bytes
    return release(recordsRelayed: recordsRelayed)
  }

  /// Hands out what was held up to the first marker of a record not relayed yet, dropping
  /// the markers of records relayed.
  mutating func release(recordsRelayed: Int) -> ArraySlice<UInt8> {
    var released: [UInt8] = []
    while true {
      guard let at = held.firstRange(of: marker) else {
        // The end may be the start of a marker: keep it until the next read.
        let keep = (1..<min(marker.count, held.count + 1)).last { held.suffix($0).elementsEqual(marker.prefix($0)) } ?? 0
        released += held[..<(held.count - keep)]
        held.removeFirst(held.count - keep)
        return released[...]
      }
      released += held[..<at.lowerBound]
      guard let newline = held[at.upperBound...].firstIndex(of: 0x0A) else {
        held.removeFirst(at.lowerBound)
        return released[...]
      }
      let number = Int(String(decoding: held[at.upperBound..<newline], as: UTF8.self)) ?? 0
      if number > recordsRelayed {
        held.removeFirst(at.lowerBound)
        return released[...]
      }
      held.removeFirst(newline + 1)
    }
  }

  /// Everything held, its markers left out: the output's end.
  mutating func rest() -> ArraySlice<UInt8> {
    let released = release(recordsRelayed: .max)
    defer { held = [] }
    return (Array(released) + held)[...]
  }
}
