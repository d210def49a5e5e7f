import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs each test in a worker process: the same suites executable started again as a
/// worker, so the parent never runs user code.
///
/// One worker runs test after test; its events come back live over a pipe (JSON Lines,
/// the schema of ``Event``) and its standard output and standard error become the running
/// test's output. The steps the runner announces (``prepare(_:)``) are sent to the worker
/// up to ``pipelineDepth`` ahead, so that its next test starts without waiting for this
/// process; a marker line the worker writes as each test starts keeps their outputs apart,
/// and after a failing test the worker drops what was sent ahead. When the worker dies while a test runs (`fatalError`, a failed
/// precondition, SIGSEGV, `abort`, `exit`), that test ends as an error of kind
/// ``Issue/Kind/crashed`` naming the signal or exit status, with the tail of its output, and
/// the next test starts a fresh worker: every other result is kept. A test still running
/// `timeLimitMargin` past its time limit (hung outside any wait) gets SIGTERM, then SIGKILL
/// after `gracePeriod`, and ends as a ``Issue/Kind/timeLimitExceeded`` error.
public final class WorkerExecutor: TestExecutor {
  /// The executable started as a worker.
  public let executable: String
  /// How long a stopped worker has between SIGTERM and SIGKILL.
  public let gracePeriod: Duration
  /// How long past its time limit a test runs before its worker is stopped: the worker's
  /// own time limit ends a wait in progress first, with a precise message.
  public let timeLimitMargin: Duration
  /// When requested, the worker running a test is stopped like one past its time limit,
  /// and the test ends as an ``Issue/Kind/interrupted`` error.
  public let stop: StopRequest?
  /// Whether each test runs in a fresh worker process (`--isolation test`: nothing a test
  /// leaves behind in its process reaches the next one) instead of one worker running test
  /// after test until it dies.
  public let freshProcessPerTest: Bool
  private let state = Mutex(Pipeline())
  /// The line a worker writes to its output as each test starts (``WorkerMain/markerVariable``),
  /// unique to this executor so that no test prints it by chance.
  private let marker = "\u{1}AsyncHarness test starts \(String(UInt64.random(in: 0...UInt64.max), radix: 16))"

  /// Creates an executor that starts `executable` (a suites executable calling
  /// ``HarnessMain/run(_:registry:defaultWaiters:junit:)``) as its workers.
  /// - Parameters:
  ///   - executable: the path of the suites executable.
  ///   - freshProcessPerTest: `true` to start a worker for every test.
  ///   - gracePeriod: how long a stopped worker has between SIGTERM and SIGKILL.
  ///   - timeLimitMargin: how long past its time limit a test runs before its worker is stopped.
  ///   - stop: a request to stop the run, made by SIGINT or SIGTERM.
  public init(executable: String, freshProcessPerTest: Bool = false, gracePeriod: Duration = .seconds(1),
              timeLimitMargin: Duration = .milliseconds(500), stop: StopRequest? = nil) {
    self.executable = executable
    self.freshProcessPerTest = freshProcessPerTest
    self.gracePeriod = gracePeriod
    self.timeLimitMargin = timeLimitMargin
    self.stop = stop
  }

  /// An executor that starts this process's own executable.
  /// - Parameters:
  ///   - freshProcessPerTest: `true` to start a worker for every test.
  ///   - stop: a request to stop the run, made by SIGINT or SIGTERM.
  /// - Returns: the executor.
  public static func relaunchingThisExecutable(freshProcessPerTest: Bool = false, stop: StopRequest? = nil) -> WorkerExecutor {
    WorkerExecutor(executable: Bundle.main.executablePath ?? CommandLine.arguments[0],
                   freshProcessPerTest: freshProcessPerTest, stop: stop)
  }

  /// How many requests a worker holds at most: the test it runs and the ones it runs next.
  public static let pipelineDepth = 8

  /// Remembers the steps the runner hands over next, so that a worker can be sent them
  /// before the test it runs ends (its next test then starts without waiting for a round
  /// trip through this process).
  public func prepare(_ steps: [Runner.Step]) {
    state.withLock { state in
      state.prepared = freshProcessPerTest ? [] : steps
      state.nextToSend = 0
    }
  }

  /// Runs one step (a test under one waiter), sending its events to `events` as they happen.
  /// - Parameters:
  ///   - step: The test to run and how.
  ///   - events: Where its events go.
  /// - Returns: How the test ended.
  public func run(_ step: Runner.Step, events: EventSink) -> TestResult {
    state.withLock { state in
      if let worker = state.worker, let next = worker.inFlight.first, next.id != step.id {
        // The runner asked for a step other than the one the worker runs next: that worker
        // cannot be told to forget what it was sent.
        state.rewind()
        Self.kill(worker.process)
        state.worker = nil
      }
      if state.worker?.inFlight.isEmpty ?? true {
        if let index = state.prepared[state.nextToSend...].firstIndex(where: { $0.id == step.id }) {
          state.nextToSend = index + 1
        }
        if let worker = state.worker, !state.send(step) {
          _ = worker.process.waitForExit()
          state.worker = nil
        }
        if state.worker == nil {
          do {
            state.worker = try WorkerConnection(executable: executable, marker: marker)
          } catch {
            return Self.unstarted(step, error: error, events: events)
          }
          // A worker that dies before reading it is reported by the session.
          _ = state.send(step)
        }
      }
      state.topUp()
      var session = WorkerSession(step: step, events: events, gracePeriod: gracePeriod,
                                  deadline: step.timeLimit.map { ContinuousClock().now + $0 + timeLimitMargin }, stop: stop)
      let (result, alive) = session.run(&state.worker!)
      if !alive {
        state.worker!.inFlight.removeFirst()
        state.rewind()
        state.worker = nil
      } else if freshProcessPerTest {
        retire(state.worker!.process)
        state.worker = nil
      } else {
        state.worker!.inFlight.removeFirst()
        if result.verdict.isFailure {
          // The worker drops what it was sent after a failing test until it reads this: the
          // runner may run another step next (a retry).
          _ = state.worker!.process.send(WorkerRequest.resumeLine)
          state.rewind()
        }
      }
      return result
    }
  }

  /// True: a test past its time limit has its worker process stopped.
  public var stopsHungTests: Bool { true }

  /// Closes the worker's input and waits for it to exit; one that does not exit within the
  /// grace period is killed. A worker still holding steps the runner never asked for (the
  /// run stopped) is killed at once.
  public func finish() {
    state.withLock { state in
      if let worker = state.worker {
        if worker.inFlight.isEmpty { retire(worker.process) } else { Self.kill(worker.process) }
      }
      state.worker = nil
      state.prepared = []
    }
  }

  /// Closes `process`'s input, lets it exit within the grace period, and kills what is left
  /// of its process group.
  private func retire(_ process: WorkerProcess) {
    process.closeRequests()
    var descriptor = pollfd(fd: process.events, events: Int16(POLLIN), revents: 0)
    let milliseconds = Int32(gracePeriod.timeInterval * 1000)
    var buffer = [UInt8](repeating: 0, count: 4096)
    while poll(&descriptor, 1, milliseconds) > 0, read(process.events, &buffer, buffer.count) > 0 {}
    Self.kill(process)
  }

  private static func kill(_ process: WorkerProcess) {
    process.signal(SIGKILL)
    _ = process.waitForExit()
  }

  private static func unstarted(_ step: Runner.Step, error: any Error, events: EventSink) -> TestResult {
    let result = TestResult(verdict: .errored, issues: [
      Issue(kind: .crashed, message: "\(error)", sourceLocation: step.test.sourceLocation),
    ])
    events(.testStarted(step.id))
    events(.testEnded(step.id, result, duration: 0))
    return result
  }
}

/// The executor's worker and the steps it was sent.
private struct Pipeline {
  var worker: WorkerConnection?
  /// The steps the runner said it hands over next, and the first not sent yet.
  var prepared: [Runner.Step] = []
  var nextToSend = 0

  /// Sends `step` to the worker; `false` when it no longer reads (it died).
  mutating func send(_ step: Runner.Step, planIndex: Int? = nil) -> Bool {
    guard worker!.process.send(WorkerRequest(step).line) else { return false }
    worker!.inFlight.append((step.id, planIndex))
    return true
  }

  /// Sends prepared steps until the worker holds ``WorkerExecutor/pipelineDepth`` of them.
  /// A worker that died stops taking them; its session reports the death.
  mutating func topUp() {
    while let worker, worker.inFlight.count < WorkerExecutor.pipelineDepth, nextToSend < prepared.count,
          send(prepared[nextToSend], planIndex: nextToSend) {
      nextToSend += 1
    }
  }

  /// Forgets the steps the worker was sent and has not run (it died, drops them after a
  /// failure, or holds steps the runner did not ask for): they are sent again when the
  /// runner asks for them.
  mutating func rewind() {
    guard let waiting = worker?.inFlight else { return }
    if let first = waiting.lazy.compactMap(\.planIndex).first { nextToSend = first }
    worker!.inFlight = []
  }
}

/// A worker process with what was read from it and not yet relayed.
private struct WorkerConnection {
  let process: WorkerProcess
  /// The steps sent, in the order the worker runs them; the first is running or next.
  var inFlight: [(id: TestID, planIndex: Int?)] = []
  var lines = LineBuffer()
  var output: OutputSplitter

  init(executable: String, marker: String) throws {
    process = try WorkerProcess(executable: executable, arguments: [WorkerMain.flag],
                                environment: [WorkerMain.markerVariable: marker])
    output = OutputSplitter(marker: Array((marker + "\n").utf8))
  }
}

/// One step run by a worker: relays its events and output until its `testEnded`, the
/// worker's death, or its time limit.
private struct WorkerSession {
  let step: Runner.Step
  let events: EventSink
  let gracePeriod: Duration
  let deadline: ContinuousClock.Instant?
  let stop: StopRequest?
  private let start = ContinuousClock().now
  private var started = false
  private var issues: [Issue] = []
  private var output = OutputBuffer()
  /// The last signal sent to stop the worker, when, and whether for an interrupt.
  private var stopped: (signal: Int32, at: ContinuousClock.Instant, interrupt: Int32?)?
  /// What each read of a pipe fills.
  private var buffer = [UInt8](repeating: 0, count: 65536)

  init(step: Runner.Step, events: EventSink, gracePeriod: Duration, deadline: ContinuousClock.Instant?, stop: StopRequest?) {
    self.step = step
    self.events = events
    self.gracePeriod = gracePeriod
    self.deadline = deadline
    self.stop = stop
  }

  /// Runs until the step ends; returns its result and whether the worker can run more.
  mutating func run(_ connection: inout WorkerConnection) -> (TestResult, alive: Bool) {
    let worker = connection.process
    relayOutput(connection.output.startNextTest())
    // Events read with the previous step's come first.
    while let line = connection.lines.next() {
      if let result = relay(line, &connection) { return (result, true) }
    }
    var descriptors = [
      pollfd(fd: worker.events, events: Int16(POLLIN), revents: 0),
      pollfd(fd: worker.output, events: Int16(POLLIN), revents: 0),
      pollfd(fd: stop?.descriptor ?? -1, events: Int16(POLLIN), revents: 0),
    ]
    while true {
      let ready = poll(&descriptors, nfds_t(descriptors.count), timeout())
      if ready < 0 && errno != EINTR { return (end(exit: worker.waitForExit()), false) }
      if ready == 0 { stopWorker(worker); continue }
      if descriptors[2].revents != 0, let signal = stop?.signal {
        descriptors[2].fd = -1
        stopWorker(worker, interrupt: signal)
      }
      // Events first: a test's `testStarted` precedes the output it then writes.
      if descriptors[0].revents != 0 {
        let count = read(worker.events, &buffer, buffer.count)
        guard count > 0 else {
          drainOutput(&connection, until: .endOfFile)
          return (end(exit: worker.waitForExit()), false)
        }
        connection.lines.append(buffer[..<count])
        while let line = connection.lines.next() {
          if let result = relay(line, &connection) { return (result, true) }
        }
      }
      if descriptors[1].revents != 0 {
        let count = read(worker.output, &buffer, buffer.count)
        if count > 0 { relayOutput(connection.output.append(buffer[..<count])) } else { descriptors[1].fd = -1 }
      }
    }
  }

  /// Milliseconds until the next deadline: the time limit, then the end of the grace period.
  private func timeout() -> Int32 {
    let next: ContinuousClock.Instant? = stopped.map { $0.at + gracePeriod } ?? deadline
    guard let next else { return -1 }
    let left = ContinuousClock().now.duration(to: next)
    return left <= .zero ? 0 : Int32(min(left.timeInterval * 1000 + 1, Double(Int32.max)))
  }

  /// Sends SIGTERM to the worker, or SIGKILL when its grace period after SIGTERM is over.
  private mutating func stopWorker(_ worker: WorkerProcess, interrupt: Int32? = nil) {
    if let stopped, stopped.signal == SIGKILL { return }
    let signal = stopped == nil ? SIGTERM : SIGKILL
    worker.signal(signal)
    stopped = (signal, ContinuousClock().now, interrupt ?? stopped?.interrupt)
  }

  /// Relays one event line; returns the result when it is this step's `testEnded`.
  private mutating func relay(_ line: ArraySlice<UInt8>, _ connection: inout WorkerConnection) -> TestResult? {
    guard let event = try? Event(jsonLineBytes: line) else {
      relayOutput(line + [0x0A])
      return nil
    }
    switch event.kind {
    case .testStarted(step.id):
      // Output that came first already announced the test.
      if started { return nil }
      started = true
    case .issueRecorded(step.id, let issue) where issue.kind != .lateSignal:
      issues.append(issue)
    case .testEnded(step.id, let result, _):
      drainOutput(&connection, until: .nothingLeft)
      events.send(event)
      return result
    default:
      break
    }
    events.send(event)
    return nil
  }

  private mutating func relayOutput(_ bytes: ArraySlice<UInt8>) {
    guard !bytes.isEmpty else { return }
    if !started {
      started = true
      events(.testStarted(step.id))
    }
    if let text = output.append(bytes) { events(.outputCaptured(step.id, text)) }
  }

  private enum DrainEnd { case nothingLeft, endOfFile }

  /// Reads the output the worker wrote before its last event (or until it closed), up to
  /// the next test's marker.
  private mutating func drainOutput(_ connection: inout WorkerConnection, until end: DrainEnd) {
    let descriptor = connection.process.output
    var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
    while !connection.output.reachedNextTest, poll(&ready, 1, end == .endOfFile ? -1 : 0) > 0 {
      let count = read(descriptor, &buffer, buffer.count)
      guard count > 0 else { break }
      relayOutput(connection.output.append(buffer[..<count]))
    }
    if let rest = output.flush() { events(.outputCaptured(step.id, rest)) }
  }

  /// The result of a step whose worker ended before the step did.
  private mutating func end(exit: WorkerExit) -> TestResult {
    if !started { events(.testStarted(step.id)) }
    let tail = output.tail
    let said = tail.isEmpty ? "; it printed nothing" : "; its last output:\n\(tail)"
    let issue: Issue
    if let stopped, let interrupt = stopped.interrupt {
      issue = Issue(kind: .interrupted, message: "Interrupted: the run received \(WorkerExit.name(of: interrupt)) "
        + "while the test ran, so its worker process was stopped" + said, sourceLocation: step.test.sourceLocation)
    } else if let stopped {
      let how = stopped.signal == SIGKILL
        ? "SIGTERM, then SIGKILL after a grace period of \(gracePeriod.secondsDescription) seconds" : "SIGTERM"
      let limit = (step.timeLimit ?? .zero).secondsDescription
      issue = Issue(kind: .timeLimitExceeded, message: "Test exceeded its time limit of \(limit) seconds outside any wait "
        + "the harness could end, so its worker process was stopped with \(how)" + said,
        sourceLocation: step.test.sourceLocation)
    } else {
      issue = Issue(kind: .crashed, message: "Crashed: the worker process running the test ended with \(exit.description)"
        + said, sourceLocation: step.test.sourceLocation)
    }
    events(.issueRecorded(step.id, issue))
    let result = TestResult(verdict: .errored, reason: step.test.knownIssue, issues: issues + [issue])
    events(.testEnded(step.id, result, duration: start.duration(to: .now).timeInterval))
    return result
  }
}

/// Splits a byte stream into lines, handed out one at a time: lines read past a step's end
/// belong to the next step.
private struct LineBuffer {
  private var pending: [UInt8] = []
  /// Where the lines not handed out yet start.
  private var consumed = 0

  mutating func append(_ bytes: ArraySlice<UInt8>) {
    if consumed == pending.count {
      pending.removeAll(keepingCapacity: true)
      consumed = 0
    }
    pending += bytes
  }

  /// The next complete line, without its newline; empty lines are skipped.
  mutating func next() -> ArraySlice<UInt8>? {
    while let newline = pending[consumed...].firstIndex(of: 0x0A) {
      let line = pending[consumed..<newline]
      consumed = newline + 1
      if !line.isEmpty { return line }
    }
    return nil
  }
}

/// Splits a worker's output at the marker line the worker writes as each test starts:
/// what comes before the next test's marker is the running test's output, whatever the
/// reads cut it into.
private struct OutputSplitter {
  let marker: [UInt8]
  /// Bytes read and not handed out: the start of a marker, or the next test's output.
  private var held: [UInt8] = []
  private var ownMarkerSeen = false

  init(marker: [UInt8]) { self.marker = marker }

  /// Whether the next test's marker was read: what follows is not the running test's.
  var reachedNextTest: Bool { ownMarkerSeen && held.starts(with: marker) }

  /// Starts the next test's output; returns what of it was already read.
  mutating func startNextTest() -> ArraySlice<UInt8> {
    ownMarkerSeen = false
    return append([])
  }

  /// Adds bytes read; returns those that are the running test's output.
  mutating func append(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
    // Most output holds no byte that starts a marker: it is the running test's as it is.
    if held.isEmpty, ownMarkerSeen, Self.index(of: marker[0], in: bytes) == nil { return bytes }
    held += bytes
    var mine: [UInt8] = []
    while true {
      guard let at = firstMarker() else {
        let keep = partialMarkerLength()
        mine += held[..<(held.count - keep)]
        held.removeFirst(held.count - keep)
        return mine[...]
      }
      mine += held[..<at]
      if ownMarkerSeen {
        held.removeFirst(at)
        return mine[...]
      }
      held.removeFirst(at + marker.count)
      ownMarkerSeen = true
    }
  }

  /// Where `byte` first occurs in `bytes` (`memchr`: output can be megabytes, and a generic
  /// search is slow in a debug build).
  private static func index(of byte: UInt8, in bytes: ArraySlice<UInt8>) -> Int? {
    bytes.withUnsafeBytes { buffer in
      guard let base = buffer.baseAddress, let found = memchr(base, Int32(byte), buffer.count) else { return nil }
      return bytes.startIndex + (UnsafeRawPointer(found) - base)
    }
  }

  private func firstMarker() -> Int? {
    guard held.count >= marker.count else { return nil }
    var index = held.startIndex
    while let candidate = Self.index(of: marker[0], in: held[index...]), candidate + marker.count <= held.count {
      if held[candidate..<(candidate + marker.count)].elementsEqual(marker) { return candidate }
      index = candidate + 1
    }
    return nil
  }

  /// How many bytes at the end could be the start of a marker that the next read completes.
  private func partialMarkerLength() -> Int {
    var start = max(0, held.count - marker.count + 1)
    while let candidate = Self.index(of: marker[0], in: held[start...]) {
      if marker.starts(with: held[candidate...]) { return held.count - candidate }
      start = candidate + 1
    }
    return 0
  }
}

/// A test's output as it arrives: text is relayed only up to the last whole UTF-8 character,
/// and the last few kilobytes are kept for a crash report.
private struct OutputBuffer {
  private static let tailBytes = 4096
  private static let tailLines = 20
  private var partial: [UInt8] = []
  private var recent: [UInt8] = []

  /// The text that can be relayed now, if any.
  mutating func append(_ bytes: ArraySlice<UInt8>) -> String? {
    partial += bytes
    recent += bytes
    if recent.count > 2 * Self.tailBytes { recent.removeFirst(recent.count - Self.tailBytes) }
    let cut = partial.count - incompleteSuffixLength(partial)
    guard cut > 0 else { return nil }
    defer { partial.removeFirst(cut) }
    return String(decoding: partial[..<cut], as: UTF8.self)
  }

  /// What is left, whole or not.
  mutating func flush() -> String? {
    defer { partial = [] }
    return partial.isEmpty ? nil : String(decoding: partial, as: UTF8.self)
  }

  /// The last lines of the output (at most 20 lines and 4 KiB), without the stack trace the
  /// Swift runtime prints after a fatal error (it stays in the test's output), so that the
  /// `Fatal error: …` line is what a crash report ends with.
  var tail: String {
    var text = String(decoding: recent.suffix(Self.tailBytes), as: UTF8.self)
    if let trace = text.range(of: "\nCurrent stack trace:\n", options: .backwards) {
      text = String(text[..<trace.lowerBound]) + "\n"
    }
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    let kept = lines.suffix(Self.tailLines + (text.hasSuffix("\n") ? 1 : 0)).joined(separator: "\n")
    return kept.hasSuffix("\n") ? String(kept.dropLast()) : kept
  }

  /// How many bytes at the end start a UTF-8 character that is not complete yet.
  private func incompleteSuffixLength(_ bytes: [UInt8]) -> Int {
    for back in 1...min(3, bytes.count) {
      let byte = bytes[bytes.count - back]
      if byte & 0xC0 == 0x80 { continue }
      let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
      return length > back ? back : 0
    }
    return 0
  }
}
