import AsyncHarnessShared

/// A harness worker process, seen from its parent: the process,
/// the watch over it (``WorkerWatch``), what is known of the attempts it runs
/// (``WorkerSupervision``), and how its channel is read (``WorkerMessages``).
///
/// A worker runs its `run` requests one at a time, each attempt's events streamed as they
/// come, and its `start` requests side by side, each attempt's events held until its reply
/// (see ``WorkerSupervision``). Which requests it holds is its lane's (``WorkerLaneMachine``).
struct WorkerConnection {
  let process: WorkerProcess
  var watch: WorkerWatch
  var supervision: WorkerSupervision
  var messages: WorkerMessages

  /// Starts a worker; `marker` starts the numbered line it writes to its output as each `run`
  /// request's test starts, `nil` for a worker that runs tests side by side.
  init(executable: String, marker: String?, gracePeriod: Duration, stop: StopRequest?) throws {
    process = try WorkerProcess(executable: executable, arguments: [WorkerMain.flag],
                                environment: marker.map { [WorkerMain.markerVariable: $0] } ?? [:])
    watch = WorkerWatch(process: process.process, channel: process.channel, requests: process, stop: stop)
    supervision = WorkerSupervision(gracePeriod: gracePeriod)
    messages = WorkerMessages(marker: marker.map { Array($0.utf8) })
  }

  /// How many attempts run.
  var count: Int { supervision.running.count }

  /// Whether the worker was sent a stop signal (at a test's deadline, or for an interrupt):
  /// it starts no other test, and is replaced (``WorkerSupervision/takesAttempts``).
  var stopped: Bool { !supervision.takesAttempts }

  /// Begins the attempt of `test` the worker runs next or started (channel reference `ref`),
  /// stopped at `deadline`: its events streamed to `events` when it runs alone, else held.
  mutating func begin(_ planned: Runner.PlannedTest, ref: Int?, events: EventSink, alone: Bool, deadline: ContinuousClock.Instant?) {
    supervision.start(planned, ref: ref, sink: events, streams: alone, deadline: deadline)
    messages.others = events
    if alone { supervision.printed(messages.startNextTest()) }
  }

  /// The tests that ended in the worker, latest last.
  private(set) var ended = TestsEnded()

  /// What the worker's wait found (``LaneWatch``) once the lane's loop returned: the attempts
  /// the worker replied for, one that ended at its deadline and was left running, or, when
  /// the worker `exited`, how its attempts finish (and `ended` set).
  mutating func waited(exited exit: ProcessEnding?) -> (replies: [WorkerMessages.Reply], finished: [WorkerSupervision.Finished], ended: Bool) {
    var finished = supervision.takeOverdue()
    if let exit { finished += supervision.exited(exit, outputHeldBy: watch.outputHeld ? "the worker process" : nil) }
    let replies = messages.takeReplies()
    for case .ended(let attempt, _, _) in replies.map(\.finished) + finished { ended.append(attempt.planned.id) }
    return (replies, finished, exit != nil)
  }

  /// Whether the worker runs no other test and is retired once the tests it runs ended: a
  /// reply said so (``WorkerRetirement``), or a test was left running past its time limit.
  var retiring: Bool { messages.retiring || !supervision.leftRunning.isEmpty }

  /// Stops the worker at once.
  mutating func kill() { watch.kill() }

  /// Begins the worker's retirement: it is told to stop, and given the grace period to exit
  /// (then stopped as at a deadline, SIGTERM, then SIGKILL). What it still says is dropped.
  /// `false` when it holds a test left running past its time limit (it would not stop by
  /// itself, and is to be stopped at once), or it was stopped already.
  mutating func beginRetiring() -> Bool {
    guard supervision.leftRunning.isEmpty, watch.exit == nil else { return false }
    _ = process.send(.stop)
    process.closeRequests()
    supervision.idleDeadline = .now + supervision.gracePeriod
    return true
  }

  /// How the worker, which exited with `exit`, ended, for its lane's machine.
  func workerEnded(_ exit: ProcessEnding) -> WorkerLaneMachine.WorkerEnded {
    WorkerLaneMachine.WorkerEnded(exit: exit, stopped: supervision.stopping != nil, ranTests: !ended.ids.isEmpty,
                                  running: count)
  }

  /// The worker ended with `exit` by itself after its tests, holding none, while it was
  /// retired or not awaited (``WorkerLaneMachine/Command/reportEnd(_:_:)``): work a test left
  /// behind ended it, a failure outside every test naming the tests that ended in it last,
  /// told through the sink of the last test begun in it.
  mutating func endedAfterItsTests(_ exit: ProcessEnding) {
    _ = supervision.exited(exit)
    guard let last = ended.ids.last else { return }
    messages.others?(.outsideFailure(.endedBetweenTests("The worker process", "ended with \(exit)", after: ended,
                                                        because: "work a test left behind ended it", output: supervision.tail,
                                                        suite: last.suiteRun, kind: .crashed)))
  }
}

extension WorkerConnection: WatchedWorker {
  mutating func withWatch<Result>(_ body: (inout WorkerWatch, inout WorkerMessages, inout WorkerSupervision) -> Result) -> Result {
    body(&watch, &messages, &supervision)
  }
}

/// How a harness worker's channel is read: each line an event of a test, a mark on an
/// attempt's timeline, or a reply that ends an attempt. Lines that are none of these (a test
/// wrote to the channel?) are shown as output rather than lost.
///
/// The output of a worker that runs its tests one at a time is cut at the numbered marker
/// line it writes as each test starts (``MarkedOutput``): what it printed after the next
/// test's marker waits for that test's attempt to begin.
struct WorkerMessages: WorkerDecoder {
  /// A reply: the attempt it ended, and what the worker said of itself.
  struct Reply {
    var finished: WorkerSupervision.Finished
    /// The worker drops what it was sent until told to resume.
    var paused: Bool
    /// Why the worker must not run another test, when it must not.
    var retire: WorkerRetirement?
  }

  private var output: MarkedOutput?
  /// How many attempts began in the worker: its markers up to this number are passed.
  private var attemptsBegun = 0
  private var lines = LineSplitter()
  private var replies: [Reply] = []
  /// Where the events of tests that ended go (late signals): the sink of the last attempt begun.
  var others: EventSink?
  /// Whether a reply said the worker must not run another test.
  private(set) var retiring = false

  init(marker: [UInt8]?) {
    output = marker.map(MarkedOutput.init(marker:))
  }

  /// The output of the next test that was read already.
  mutating func startNextTest() -> ArraySlice<UInt8> {
    attemptsBegun += 1
    return output?.release(passed: attemptsBegun) ?? []
  }

  mutating func takeReplies() -> [Reply] {
    defer { replies = [] }
    return replies
  }

  mutating func output(_ bytes: ArraySlice<UInt8>, into supervision: inout WorkerSupervision) {
    if output == nil {
      supervision.printed(bytes)
    } else {
      supervision.printed(output!.append(bytes, passed: attemptsBegun))
    }
  }

  /// Relays the lines read; `true` once a reply ended an attempt. Lines after a reply that
  /// left no attempt running wait for the next attempt to begin: they are its own.
  mutating func channel(_ bytes: ArraySlice<UInt8>, into supervision: inout WorkerSupervision) -> Bool {
    lines.append(bytes)
    while let line = lines.next() {
      relay(line, into: &supervision)
      if !replies.isEmpty && supervision.running.isEmpty { return true }
    }
    return !replies.isEmpty
  }

  mutating func ended(into supervision: inout WorkerSupervision) {
    if let rest = lines.rest() { supervision.printed(rest) }
  }

  private mutating func relay(_ line: ArraySlice<UInt8>, into supervision: inout WorkerSupervision) {
    guard !line.isEmpty else { return }
    switch try? WorkerMessage(line: line) {
    case .event(let event):
      if event.test.map({ supervision.record(event, of: $0) }) != true { others?.send(event) }
    case .mark(let mark):
      // A mark of an attempt that ended (a wait that ended after it) is on no attempt's timeline.
      if let id = supervision.id(ofRef: mark.ref) { supervision.record(mark.event(of: id), of: id) }
    case .reply(.returned(let id, let duration, let trace, let paused, let retire)):
      if let retire { supervision.replaced(id, reason: retire.rawValue) }
      retiring = retiring || retire != nil
      end(id, as: .returned(duration: duration, trace: trace), paused: paused, retire: retire, into: &supervision)
    case .reply(.cannotRun(let id, let reason)):
      end(id, as: .couldNotStart(reason: reason), paused: true, retire: nil, into: &supervision)
    case .reply(.crashing(let ref)):
      supervision.crashed(ref: ref)
    case nil:
      supervision.printed(line + [0x0A])
    }
  }

  private mutating func end(_ id: TestID, as end: AttemptEnd, paused: Bool, retire: WorkerRetirement?,
                            into supervision: inout WorkerSupervision) {
    // What the attempt printed before its reply is read: up to the next test's marker.
    guard let finished = supervision.end(id, as: end) else { return }
    replies.append(Reply(finished: finished, paused: paused, retire: retire))
  }
}
