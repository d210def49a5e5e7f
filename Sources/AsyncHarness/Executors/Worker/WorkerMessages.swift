import AsyncHarnessShared

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
