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
/// One worker runs test after test. Requests and the worker's events travel on a private
/// channel (`docs/ARCHITECTURE.md`): steps named by their position, never by their names, and
/// events streamed live as the test records them. The worker's standard output and standard
/// error become the running test's output. The steps the runner announces (``prepare(_:)``)
/// are sent to the worker up to ``pipelineDepth`` ahead, so that its next test starts
/// without waiting for this process; a marker line the worker writes as each test starts
/// keeps their outputs apart, and after a failing test the worker pauses, dropping what was
/// sent ahead, until it is told to resume. One poll loop writes requests and reads events
/// and output, and no write of this process ever blocks it, so neither side can wait on the
/// other whatever either writes.
///
/// When the worker dies while a test runs (`fatalError`, a failed precondition, SIGSEGV,
/// `abort`, `exit`), that attempt ends as ``AttemptEnd/processEnded(_:output:)`` and the next
/// test starts a fresh worker: every other result is kept. A test still running
/// `timeLimitMargin` past its time limit (hung outside any wait) gets SIGTERM, then SIGKILL
/// after `gracePeriod` (``AttemptEnd/stoppedAtLimit(_:killed:gracePeriod:output:)``). A worker
/// whose test exceeded its time limit in any way (an `async` body cancelled and left running
/// holds a thread of its cooperative pool) is retired: the next test gets a fresh one.
@_spi(ForToolsIntegrationOnly) public final class WorkerExecutor: TestExecutor {
  /// The executable started as a worker.
  @_spi(ForToolsIntegrationOnly) public let executable: String
  /// How long a stopped worker has between SIGTERM and SIGKILL.
  @_spi(ForToolsIntegrationOnly) public let gracePeriod: Duration
  /// How long past its time limit a test runs before its worker is stopped: the worker's
  /// own time limit ends a wait in progress first, with a precise message.
  @_spi(ForToolsIntegrationOnly) public let timeLimitMargin: Duration
  /// When requested, the worker running a test is stopped like one past its time limit,
  /// and the test ends as an ``Issue/Kind/interrupted`` error.
  @_spi(ForToolsIntegrationOnly) public let stop: StopRequest?
  /// Whether each test runs in a fresh worker process (`--isolation test`: nothing a test
  /// leaves behind in its process reaches the next one) instead of one worker running test
  /// after test until it dies. A spare worker then starts while each test runs, so only the
  /// first test waits for a process to start; the spare left at the end is stopped unused.
  @_spi(ForToolsIntegrationOnly) public let freshProcessPerTest: Bool
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
  @_spi(ForToolsIntegrationOnly)
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
  @_spi(ForToolsIntegrationOnly)
  public static func relaunchingThisExecutable(freshProcessPerTest: Bool = false, stop: StopRequest? = nil) -> WorkerExecutor {
    WorkerExecutor(executable: Bundle.main.executablePath ?? CommandLine.arguments[0],
                   freshProcessPerTest: freshProcessPerTest, stop: stop)
  }

  /// How many requests a worker holds at most: the test it runs and the ones it runs next.
  @_spi(ForToolsIntegrationOnly) public static let pipelineDepth = 8

  /// Remembers the steps the runner hands over next, so that a worker can be sent them
  /// before the test it runs ends (its next test then starts without waiting for a round
  /// trip through this process).
  @_spi(ForToolsIntegrationOnly) public func prepare(_ steps: Runner.Plan.Steps) {
    state.withLock { state in
      state.prepared = freshProcessPerTest ? steps[steps.startIndex..<steps.startIndex] : steps
      state.nextToSend = steps.startIndex
    }
  }

  /// Runs one attempt of a step (a test under one waiter) in a worker, streaming its issues
  /// and output to `events` as they happen.
  /// - Parameters:
  ///   - step: The test to run and how.
  ///   - events: Where its issues and output go.
  /// - Returns: How the attempt ended.
  @_spi(ForToolsIntegrationOnly) public func run(_ step: Runner.Step, events: EventSink) -> AttemptEnd {
    state.withLock { state in
      if let worker = state.worker, let next = worker.inFlight.first, next.id != step.id {
        // The runner asked for a step other than the one the worker runs next: that worker
        // cannot be told to forget what it was sent.
        state.rewind()
        Self.kill(worker.process)
        state.worker = nil
      }
      if state.worker?.inFlight.isEmpty ?? true {
        // A retry was never prepared; the step asked for is almost always the next one.
        if step.id.attempt == 1, let prepared = state.prepared,
           let index = prepared[state.nextToSend...].firstIndex(where: { $0.id == step.id }) {
          state.nextToSend = index + 1
        }
        if let worker = state.worker, !state.send(step) {
          _ = worker.process.waitForExit()
          state.worker = nil
        }
        if state.worker == nil {
          do {
            state.worker = try state.takeSpare() ?? WorkerConnection(executable: executable, marker: marker)
          } catch {
            return .couldNotStart(reason: "\(error)")
          }
          // A worker that dies before reading it is reported by the session.
          _ = state.send(step)
        }
      }
      if freshProcessPerTest && state.spare == nil {
        // The next test's worker starts while this one runs; one that cannot start now is
        // started (or reported) when the next test needs it.
        state.spare = try? WorkerConnection(executable: executable, marker: marker)
      }
      state.topUp()
      var session = WorkerSession(step: step, events: events, gracePeriod: gracePeriod,
                                  deadline: step.timeLimit.map { ContinuousClock().now + $0 + timeLimitMargin }, stop: stop)
      let ending = session.run(&state.worker!)
      switch ending {
      case .workerEnded(let end):
        state.worker!.inFlight.removeFirst()
        state.rewind()
        state.worker = nil
        return end
      case .replied(let end, let paused):
        state.worker!.inFlight.removeFirst()
        if freshProcessPerTest || session.exceededTimeLimit {
          // A test past its time limit may have left work running that holds the worker's threads.
          state.rewind()
          retire(state.worker!.process)
          state.worker = nil
        } else if paused {
          // The worker drops what it was sent until it reads this: the runner may run another
          // step next (a retry).
          state.rewind()
          _ = state.worker!.process.send(.resume)
        }
        return end
      }
    }
  }

  /// True: a test past its time limit has its worker process stopped.
  @_spi(ForToolsIntegrationOnly) public var stopsHungTests: Bool { true }

  /// True: each test runs in a worker process.
  @_spi(ForToolsIntegrationOnly) public var isolatesTests: Bool { true }

  /// Tells the worker (and the spare, under `--isolation test`) to stop and waits for it to
  /// exit; one that does not exit within the grace period is killed. A worker still holding
  /// steps the runner never asked for (the run stopped) is killed at once.
  @_spi(ForToolsIntegrationOnly) public func finish() {
    state.withLock { state in
      if let worker = state.worker {
        if worker.inFlight.isEmpty { retire(worker.process) } else { Self.kill(worker.process) }
      }
      if let spare = state.takeSpare() { retire(spare.process) }
      state.worker = nil
      state.prepared = nil
    }
  }

  /// Tells `process` to stop, lets it exit within the grace period, and kills what is left
  /// of its process group.
  private func retire(_ process: WorkerProcess) {
    _ = process.send(.stop)
    process.closeRequests()
    var descriptor = pollfd(fd: process.channel, events: Int16(POLLIN), revents: 0)
    let milliseconds = Int32(gracePeriod.timeInterval * 1000)
    var buffer = [UInt8](repeating: 0, count: 4096)
    while poll(&descriptor, 1, milliseconds) > 0, read(process.channel, &buffer, buffer.count) > 0 {}
    Self.kill(process)
  }

  private static func kill(_ process: WorkerProcess) {
    process.signal(SIGKILL)
    _ = process.waitForExit()
  }
}

/// The executor's worker and the steps it was sent.
private struct Pipeline {
  var worker: WorkerConnection?
  /// Under `--isolation test`, the worker started for the next test while this one runs.
  var spare: WorkerConnection?
  /// The steps the runner said it hands over next, and the index of the first not sent yet.
  var prepared: Runner.Plan.Steps?
  var nextToSend = 0

  /// The spare worker, which becomes the caller's.
  mutating func takeSpare() -> WorkerConnection? {
    defer { spare = nil }
    return spare
  }

  /// Sends `step` to the worker; `false` when it no longer reads (it died).
  mutating func send(_ step: Runner.Step, planIndex: Int? = nil) -> Bool {
    guard worker!.process.send(.run(WorkerStep(step))) else { return false }
    worker!.inFlight.append((step.id, planIndex))
    return true
  }

  /// Sends prepared steps until the worker holds ``WorkerExecutor/pipelineDepth`` of them.
  /// A worker that died stops taking them; its session reports the death.
  mutating func topUp() {
    guard let prepared else { return }
    while let worker, worker.inFlight.count < WorkerExecutor.pipelineDepth, nextToSend < prepared.endIndex {
      let step = prepared[nextToSend]
      // A skipped step is reported by the runner and never runs.
      guard step.test.skipReason != nil || send(step, planIndex: nextToSend) else { return }
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
  /// Lines read past a step's end belong to the next step.
  var lines = LineSplitter()
  var output: OutputSplitter

  init(executable: String, marker: String) throws {
    process = try WorkerProcess(executable: executable, arguments: [WorkerMain.flag],
                                environment: [WorkerMain.markerVariable: marker])
    output = OutputSplitter(marker: Array((marker + "\n").utf8))
  }
}

/// One attempt run by a worker: relays its issues and output until the worker's reply, the
/// worker's death, or its time limit, while writing the requests the channel has not taken.
private struct WorkerSession {
  /// How a session ends.
  enum Ending {
    /// The worker replied: it can run more (after a resume, when `paused`).
    case replied(AttemptEnd, paused: Bool)
    /// The worker ended (crashed, or was stopped); the attempt ended so.
    case workerEnded(AttemptEnd)
  }

  let step: Runner.Step
  let events: EventSink
  let gracePeriod: Duration
  let deadline: ContinuousClock.Instant?
  let stop: StopRequest?
  /// Whether the attempt recorded that it exceeded its time limit: its worker is retired.
  private(set) var exceededTimeLimit = false
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

  /// Runs until the attempt ends.
  mutating func run(_ connection: inout WorkerConnection) -> Ending {
    let worker = connection.process
    relayOutput(connection.output.startNextTest())
    // Lines read with the previous step's come first.
    while let line = connection.lines.next() {
      if let ending = relay(line, &connection) { return ending }
    }
    var descriptors = [
      pollfd(fd: worker.channel, events: 0, revents: 0),
      pollfd(fd: worker.output, events: Int16(POLLIN), revents: 0),
      pollfd(fd: stop?.descriptor ?? -1, events: Int16(POLLIN), revents: 0),
    ]
    while true {
      descriptors[0].events = Int16(POLLIN) | (worker.hasUnsentRequests ? Int16(POLLOUT) : 0)
      let ready = poll(&descriptors, nfds_t(descriptors.count), timeout())
      if ready < 0 && errno != EINTR { return .workerEnded(end(worker.waitForExit())) }
      if ready == 0 { stopWorker(worker); continue }
      if descriptors[2].revents != 0, let signal = stop?.signal {
        descriptors[2].fd = -1
        stopWorker(worker, interrupt: signal)
      }
      if descriptors[0].revents & Int16(POLLOUT) != 0 { worker.flush() }
      // Events first: an issue precedes the output the test then writes.
      if descriptors[0].revents & ~Int16(POLLOUT) != 0 {
        let count = read(worker.channel, &buffer, buffer.count)
        if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { continue }
        guard count > 0 else {
          drainOutput(&connection, until: .endOfFile)
          return .workerEnded(end(worker.waitForExit()))
        }
        connection.lines.append(buffer[..<count])
        while let line = connection.lines.next() {
          if let ending = relay(line, &connection) { return ending }
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

  /// Relays one line of the worker's; returns how the attempt ended when it is the step's reply.
  private mutating func relay(_ line: ArraySlice<UInt8>, _ connection: inout WorkerConnection) -> Ending? {
    guard !line.isEmpty else { return nil }
    switch try? WorkerMessage(line: line) {
    case .event(let event):
      if case .issueRecorded(step.id, let issue) = event.kind, issue.kind == .timeLimitExceeded { exceededTimeLimit = true }
      events.send(event)
      return nil
    case .reply(.returned(step.id, let duration, let trace, let paused)):
      drainOutput(&connection, until: .nothingLeft)
      return .replied(.returned(duration: duration, trace: trace), paused: paused)
    case .reply(.cannotRun(step.id, let reason)):
      drainOutput(&connection, until: .nothingLeft)
      return .replied(.couldNotStart(reason: reason), paused: true)
    case .reply, nil:
      // Not the worker's (a test wrote to the channel?): shown as output rather than lost.
      relayOutput(line + [0x0A])
      return nil
    }
  }

  private mutating func relayOutput(_ bytes: ArraySlice<UInt8>) {
    guard !bytes.isEmpty else { return }
    if let text = output.append(bytes) { events(.outputCaptured(step.id, text)) }
  }

  private enum DrainEnd { case nothingLeft, endOfFile }

  /// Reads the output the worker wrote before its last message (or until it closed), up to
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

  /// How the attempt ended when its worker ended before replying.
  private mutating func end(_ exit: ProcessEnding) -> AttemptEnd {
    let tail = output.tail
    if let stopped, let interrupt = stopped.interrupt {
      return .interrupted(signal: interrupt, output: tail)
    }
    if stopped != nil {
      return .stoppedAtLimit(step.timeLimit ?? .zero, killed: stopped?.signal == SIGKILL, gracePeriod: gracePeriod,
                             output: tail)
    }
    return .processEnded(exit, output: tail)
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
