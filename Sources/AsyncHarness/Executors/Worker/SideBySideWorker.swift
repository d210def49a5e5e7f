import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A worker process running `async` tests side by side (``WorkerRequest/start(_:)``), seen
/// from its parent: it starts tests, relays what each records to that test's attempt, and
/// says how each ended.
///
/// Each test's events are held until its reply, so that a test that runs again (below)
/// reports only what its second run recorded. What the tests write straight to standard
/// output and standard error cannot be split between them: it is each running test's output
/// as it arrives, marked `[shared] ` line by line while several run (``PrintedLines``), and its
/// tail goes into the issue of a test the worker ended in.
///
/// When the worker ends while tests run: a test past its time limit (the worker was stopped
/// for it) ends so, and an interrupt ends every test; otherwise, with one test running, that
/// test crashed. With several, nothing shows which one crashed it, and a crash is no evidence
/// against any one of them: every test that did not end so runs again alone, with a warning
/// naming the tests it ran with. Unless the run was interrupted, a `workerReplaced` event
/// says the worker ended, once, through the test it was stopped for (or the first running);
/// a test whose reply retires the worker says so with its events.
struct SideBySideWorker {
  /// How a test run side by side ended.
  enum Ending {
    /// The attempt of the test with this ID ended so; `note` names the tests it ran with
    /// when the worker ended in it.
    case ended(TestID, AttemptEnd, note: Issue?)
    /// The worker ended while the test ran beside others, and not for it: it runs again alone,
    /// with `note` (a warning) saying why.
    case runAgain(TestID, note: Issue)
  }

  private struct Running {
    let step: Runner.Step
    /// The step's reference on the channel (``WorkerRunRequest/ref``).
    let ref: Int?
    let events: EventSink
    let deadline: ContinuousClock.Instant?
    var held: [Event] = []
    var printed = PrintedLines()
  }

  private let process: WorkerProcess
  private let stop: StopRequest?
  private var running: [Running] = []
  /// The tests the worker was stopped for, past their time limit.
  private var pastLimit: [TestID] = []
  private var lines = LineSplitter()
  private var output = OutputBuffer()
  private var groupStop: GroupStop
  private var buffer = ReadBuffer()
  /// Where the events of tests that ended go (late signals): the sink of the last test started.
  private var others: EventSink?
  /// Whether a test's reply said the worker must not run another (``WorkerRetirement``): it
  /// takes no more tests, and is retired once the ones it runs ended.
  private(set) var retiring = false

  init(executable: String, gracePeriod: Duration, stop: StopRequest?) throws {
    process = try WorkerProcess(executable: executable, arguments: [WorkerMain.flag], environment: [:])
    groupStop = GroupStop(gracePeriod: gracePeriod, deadline: nil)
    self.stop = stop
  }

  /// How many tests run.
  var count: Int { running.count }

  /// The worker's process, for the executor to retire or kill.
  var worker: WorkerProcess { process }

  /// Starts `step`, whose events go to `events`; `false` when the worker no longer reads (it
  /// died: the next ``wait()`` says how).
  mutating func start(_ step: Runner.Step, events: EventSink, deadline: ContinuousClock.Instant?) -> Bool {
    let ref = process.send(step, sideBySide: true)
    running.append(Running(step: step, ref: ref, events: events, deadline: deadline))
    others = events
    return ref != nil
  }

  /// Waits until at least one test ended, relaying what they record; returns how they ended,
  /// and whether the worker ended.
  mutating func wait() -> (endings: [Ending], workerEnded: Bool) {
    var endings: [Ending] = []
    var descriptors = process.pollDescriptors(stop: stop)
    while endings.isEmpty {
      groupStop.deadline = running.compactMap(\.deadline).min()
      switch process.poll(&descriptors, groupStop: &groupStop, stop: stop) {
      case .failed:
        return (workerEnded(), true)
      case .timedOut:
        if groupStop.stopped == nil {
          let now = ContinuousClock().now
          pastLimit = running.filter { $0.deadline.map { $0 <= now } ?? false }.map(\.step.id)
        }
        groupStop.stop(process.process)
        continue
      case .ready:
        break
      }
      if descriptors[0].revents & ~Int16(POLLOUT) != 0 {
        let count = buffer.read(from: process.channel)
        if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { continue }
        guard count > 0 else { return (endings + workerEnded(), true) }
        lines.append(buffer.prefix(count))
        while let line = lines.next() { endings += relay(line) }
      }
      if descriptors[1].revents != 0 {
        let count = buffer.read(from: process.output)
        if count > 0 { passOn(buffer.prefix(count)) } else { descriptors[1].fd = -1 }
      }
    }
    return (endings, false)
  }

  /// Relays one line of the worker's: an event to its test's held events, or a reply that
  /// ends a test.
  private mutating func relay(_ line: ArraySlice<UInt8>) -> [Ending] {
    guard !line.isEmpty else { return [] }
    switch try? WorkerMessage(line: line) {
    case .event(let event):
      if let index = running.firstIndex(where: { $0.step.id == event.test }) {
        running[index].held.append(event)
      } else {
        others?.send(event)
      }
    case .mark(let mark):
      // A mark of a test that ended (a wait that ended after it) is on no attempt's timeline.
      if let index = running.firstIndex(where: { $0.ref == mark.ref }) {
        running[index].held.append(mark.event(of: running[index].step.id))
      }
    case .reply(.returned(let id, let duration, let trace, _, let retire)):
      if let retire, !retiring, let index = running.firstIndex(where: { $0.step.id == id }) {
        running[index].held.append(Event(.workerReplaced(id, reason: retire.rawValue)))
      }
      retiring = retiring || retire != nil
      return end(id, .returned(duration: duration, trace: trace))
    case .reply(.cannotRun(let id, let reason)):
      return end(id, .couldNotStart(reason: reason))
    case nil:
      // Not the worker's (a test wrote to the channel?): shown rather than lost.
      passOn(line + [0x0A])
    }
    return []
  }

  /// Ends the test with `id` as `end`, after relaying what it recorded.
  private mutating func end(_ id: TestID, _ end: AttemptEnd, note: Issue? = nil) -> [Ending] {
    guard let index = running.firstIndex(where: { $0.step.id == id }) else { return [] }
    var test = running.remove(at: index)
    if let text = test.printed.flush() { test.held.append(Event(.outputCaptured(id, text))) }
    for event in test.held { test.events.send(event) }
    return [.ended(id, end, note: note)]
  }

  /// How the tests running when the worker ended end, once its output is read to its end.
  private mutating func workerEnded() -> [Ending] {
    var ready = pollfd(fd: process.output, events: Int16(POLLIN), revents: 0)
    while poll(&ready, 1, -1) > 0 {
      let count = buffer.read(from: process.output)
      guard count > 0 else { break }
      passOn(buffer.prefix(count))
    }
    let exit = process.waitForExit()
    let tail = output.tail
    if let interrupt = groupStop.stopped?.interrupt {
      return running.flatMap { end($0.step.id, .interrupted(signal: interrupt, output: tail)) }
    }
    // The worker is replaced: said once, through a test it was stopped for, or the first running.
    if let said = running.first(where: { pastLimit.contains($0.step.id) }) ?? running.first,
       let reason = groupStop.ending(exit, timeLimit: nil, output: "").replacesWorker {
      said.events(.workerReplaced(said.step.id, reason: reason))
    }
    if running.count == 1, let only = running.first {
      return end(only.step.id, groupStop.ending(exit, timeLimit: only.step.timeLimit, output: tail))
    }
    let culprits = running.filter { pastLimit.contains($0.step.id) }
    let innocent = running.filter { !pastLimit.contains($0.step.id) }
    let why = culprits.isEmpty
      ? "ended with \(exit) before they returned; a crash among tests running side by side is no evidence against any one of them"
      : "was stopped because \(Self.names(culprits)) ran past its time limit"
    var endings: [Ending] = innocent.map { test in
      .runAgain(test.step.id, note: Issue(
        kind: .warning, message: "The worker process running this test side by side with "
          + "\(Self.names(running.filter { $0.step.id != test.step.id })) \(why), so this test ran again alone",
        sourceLocation: test.step.test.sourceLocation))
    }
    running = culprits
    for test in culprits {
      let note = Issue(kind: .warning, message: "Side by side with this test ran \(Self.names(innocent)), which ran again "
        + "alone", sourceLocation: test.step.test.sourceLocation)
      endings += end(test.step.id, groupStop.ending(exit, timeLimit: test.step.timeLimit, output: tail),
                     note: innocent.isEmpty ? nil : note)
    }
    return endings
  }

  private static func names(_ tests: [Running]) -> String {
    tests.map { "\($0.step.id.path)" }.joined(separator: ", ")
  }

  /// Gives what the tests wrote to each test running (marked as shared when several run),
  /// keeping the worker's tail; with none running, it is only in the tail.
  private mutating func passOn(_ bytes: ArraySlice<UInt8>) {
    _ = output.append(bytes)
    let shared = running.count > 1
    for index in running.indices {
      if let text = running[index].printed.add(bytes, shared: shared) {
        running[index].held.append(Event(.outputCaptured(running[index].step.id, text)))
      }
    }
  }
}
