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
/// test's output. When the worker dies while a test runs (`fatalError`, a failed
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
  private let worker = Mutex<WorkerProcess?>(nil)

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

  public func run(_ step: Runner.Step, events: EventSink) -> TestResult {
    worker.withLock { worker in
      let request = WorkerRequest(step).line
      if worker.map({ $0.send(request) }) != true {
        if let stale = worker { _ = stale.waitForExit() }
        do {
          worker = try WorkerProcess(executable: executable, arguments: [WorkerMain.flag])
        } catch {
          worker = nil
          return Self.unstarted(step, error: error, events: events)
        }
        _ = worker!.send(request)
      }
      var session = WorkerSession(step: step, worker: worker!, events: events, gracePeriod: gracePeriod,
                                  deadline: step.timeLimit.map { ContinuousClock().now + $0 + timeLimitMargin }, stop: stop)
      let (result, alive) = session.run()
      if alive && freshProcessPerTest { retire(worker!) }
      if !alive || freshProcessPerTest { worker = nil }
      return result
    }
  }

  /// Closes the worker's input and waits for it to exit; one that does not exit within the
  /// grace period is killed.
  public func finish() {
    worker.withLock { worker in
      if let process = worker { retire(process) }
      worker = nil
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

/// One step run by a worker: relays its events and output until its `testEnded`, the
/// worker's death, or its time limit.
private struct WorkerSession {
  let step: Runner.Step
  let worker: WorkerProcess
  let events: EventSink
  let gracePeriod: Duration
  let deadline: ContinuousClock.Instant?
  let stop: StopRequest?
  private let start = ContinuousClock().now
  private var started = false
  private var issues: [Issue] = []
  private var lines = LineBuffer()
  private var output = OutputBuffer()
  /// The last signal sent to stop the worker, when, and whether for an interrupt.
  private var stopped: (signal: Int32, at: ContinuousClock.Instant, interrupt: Int32?)?
  /// What each read of a pipe fills.
  private var buffer = [UInt8](repeating: 0, count: 65536)

  init(step: Runner.Step, worker: WorkerProcess, events: EventSink, gracePeriod: Duration,
       deadline: ContinuousClock.Instant?, stop: StopRequest?) {
    self.step = step
    self.worker = worker
    self.events = events
    self.gracePeriod = gracePeriod
    self.deadline = deadline
    self.stop = stop
  }

  /// Runs until the step ends; returns its result and whether the worker can run more.
  mutating func run() -> (TestResult, alive: Bool) {
    var descriptors = [
      pollfd(fd: worker.events, events: Int16(POLLIN), revents: 0),
      pollfd(fd: worker.output, events: Int16(POLLIN), revents: 0),
      pollfd(fd: stop?.descriptor ?? -1, events: Int16(POLLIN), revents: 0),
    ]
    while true {
      let ready = poll(&descriptors, nfds_t(descriptors.count), timeout())
      if ready < 0 && errno != EINTR { return (end(exit: worker.waitForExit()), false) }
      if ready == 0 { stopWorker(); continue }
      if descriptors[2].revents != 0, let signal = stop?.signal {
        descriptors[2].fd = -1
        stopWorker(interrupt: signal)
      }
      // Events first: a test's `testStarted` precedes the output it then writes.
      if descriptors[0].revents != 0 {
        let count = read(worker.events, &buffer, buffer.count)
        guard count > 0 else {
          drainOutput(until: .endOfFile)
          return (end(exit: worker.waitForExit()), false)
        }
        for line in lines.append(buffer[..<count]) {
          if let result = relay(line) { return (result, true) }
        }
      }
      if descriptors[1].revents != 0 {
        let count = read(worker.output, &buffer, buffer.count)
        if count > 0 { relayOutput(buffer[..<count]) } else { descriptors[1].fd = -1 }
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
  private mutating func stopWorker(interrupt: Int32? = nil) {
    if let stopped, stopped.signal == SIGKILL { return }
    let signal = stopped == nil ? SIGTERM : SIGKILL
    worker.signal(signal)
    stopped = (signal, ContinuousClock().now, interrupt ?? stopped?.interrupt)
  }

  /// Relays one event line; returns the result when it is this step's `testEnded`.
  private mutating func relay(_ line: ArraySlice<UInt8>) -> TestResult? {
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
      drainOutput(until: .nothingLeft)
      events.send(event)
      return result
    default:
      break
    }
    events.send(event)
    return nil
  }

  private mutating func relayOutput(_ bytes: ArraySlice<UInt8>) {
    if !started {
      started = true
      events(.testStarted(step.id))
    }
    if let text = output.append(bytes) { events(.outputCaptured(step.id, text)) }
  }

  private enum DrainEnd { case nothingLeft, endOfFile }

  /// Reads the output the worker wrote before its last event (or until it closed).
  private mutating func drainOutput(until end: DrainEnd) {
    var descriptor = pollfd(fd: worker.output, events: Int16(POLLIN), revents: 0)
    while poll(&descriptor, 1, end == .endOfFile ? -1 : 0) > 0 {
      let count = read(worker.output, &buffer, buffer.count)
      guard count > 0 else { break }
      relayOutput(buffer[..<count])
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

/// Splits a byte stream into lines.
private struct LineBuffer {
  private var pending: [UInt8] = []

  /// The lines `bytes` completes, without their newlines; empty lines are left out.
  mutating func append(_ bytes: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
    pending += bytes
    guard let last = pending.lastIndex(of: 0x0A) else { return [] }
    let complete = pending[..<last]
    pending.removeSubrange(...last)
    return complete.split(separator: 0x0A, omittingEmptySubsequences: true)
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
