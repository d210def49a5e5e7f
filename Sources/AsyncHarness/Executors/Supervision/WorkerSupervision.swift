#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// What the watch of one worker process knows of it and decides for it: the attempts it
/// runs (one, or several side by side), what each recorded and printed, when each must be
/// stopped, how the worker is being stopped, and, once the worker ended, how each attempt
/// running in it ends. A plain value with no descriptor, no clock and no thread: the watch
/// (``WorkerWatch``) feeds it what it read and the time, and carries out the signals it asks
/// for, so every order of inputs can be tried on it directly.
///
/// - An attempt's events are streamed to its sink as they come when it ``Attempt/streams``
///   (it runs alone and the runner waits for it), else held until it ends: an attempt that
///   runs again (below) reports only what its second run recorded.
/// - What the worker prints goes to every attempt running, line by line, each line marked
///   `[shared] ` while several run. It is stored once (``WorkerOutputLog``): an attempt that
///   streams is sent each piece as it comes, the others the pieces of their run as they end
///   (one `outputShared` event), so a line is never copied for each attempt. The worker's last
///   lines are kept for an ending that names no one attempt.
/// - The worker is stopped (SIGTERM, then SIGKILL after the grace period) at the first
///   running attempt's deadline, or when the run is interrupted; ``tick(at:)`` and
///   ``interrupt(_:at:)`` say which signal to send. A worker sent a stop signal never starts
///   another attempt (``takesAttempts``): its executor replaces it before the next test. An
///   attempt whose end arrives with the signal (the same read) keeps its own end.
/// - When the worker ends (``exited(_:)``), each attempt running ends or runs again as
///   ``AttemptFollowUp`` decides from what the supervisor knows: an interrupt ends every
///   attempt as interrupted; an attempt running alone gets the worker's end (a crash, `exit`,
///   its time limit). Of attempts running side by side, those past their deadline end at
///   their limit and those the worker named as crashing (``crashed(ref:)``) as crashed; the
///   others run again, with a warning saying why: without the culprit when it is known, else
///   among fewer of them, since a crash that names no test is no evidence against any one of
///   them. An attempt left alone in a worker stopped at the deadline of others that ended
///   meanwhile runs again too: the stop was not for it. A test bundle's attempts that run
///   again run alone, told nothing (`swift test` says nothing), as do those its crash ended
///   after other tests had ended in it.
/// - When a process the tests started still held the worker's output after it exited, each
///   attempt running then gets a `leaked` warning, which it keeps when it runs again
///   (``Attempt/kept``).
struct WorkerSupervision {
  /// How an attempt running in the worker finished, with what it held (``Attempt/held``: the
  /// events it recorded and did not stream) and where its events go.
  enum Finished {
    /// It ended so; `note` names the attempts it ran beside when the worker ended in it.
    case ended(Attempt, AttemptEnd, note: Issue?)
    /// The worker ended while it ran, and not for it: it runs again in `company`, with `note`
    /// (a warning) saying why, unless it runs again alone. What it held is dropped.
    case runAgain(Attempt, note: Issue?, company: AttemptFollowUp.Company)
  }

  /// How the worker is being stopped: the last signal sent, when, and the interrupting
  /// signal when that is why.
  struct Stopping: Equatable {
    var signal: Int32
    var at: ContinuousClock.Instant
    var interrupt: Int32?
  }

  let gracePeriod: Duration
  /// What kind of worker it is.
  let kind: AttemptFollowUp.WorkerKind
  /// The attempts running, in the order they started.
  private(set) var running: [Attempt] = []
  /// When the worker is stopped while no attempt runs (a test bundle between two tests).
  var idleDeadline: ContinuousClock.Instant?
  private(set) var stopping: Stopping?
  /// The attempts the worker was stopped for, past their deadline, in the order they started;
  /// they may have ended since (their end arrived with the signal).
  private var pastDeadline: [TestID] = []
  /// The attempts the worker named as crashing it.
  private var culprits: Set<TestID> = []
  /// Whether an attempt ended in the worker (``end(_:as:note:)``).
  private var attemptEnded = false
  /// The worker's last output, whoever printed it.
  private var recent = OutputTail()
  /// What the worker printed that an attempt running has not been sent yet.
  private var output = WorkerOutputLog()
  /// Whether a `workerReplaced` event was said: once a worker.
  private var replacementSaid = false
  /// Whether the worker was seen to exit: what it wrote is being read to its end, and
  /// neither a deadline nor an interrupt changes how its attempts ended.
  private(set) var draining = false

  init(gracePeriod: Duration, kind: AttemptFollowUp.WorkerKind = .harness) {
    self.gracePeriod = gracePeriod
    self.kind = kind
  }

  /// Whether an attempt of `id` runs.
  func runs(_ id: TestID) -> Bool { running.indices.contains { running[$0].planned.id == id } }

  /// The ID of the attempt with channel reference `ref`, if it runs.
  func id(ofRef ref: Int) -> TestID? { running.indices.first { running[$0].ref == ref }.map { running[$0].planned.id } }

  /// The worker's last lines of output (``OutputTail/tail``).
  var tail: String { recent.tail }

  /// Whether an attempt may start in the worker (``AttemptFollowUp``): not once it was sent a
  /// stop signal (at a deadline, or for an interrupt), nor once it was seen to exit. Its
  /// executor replaces it before the next test.
  var takesAttempts: Bool {
    AttemptFollowUp(after: .init(workerEnded: draining, workerStopped: stopping != nil)).worker == .keep
  }

  /// The attempts that ended at their deadline and were left running in the worker
  /// (``AttemptFollowUp/PastDeadline/leaveRunning``): it runs no other attempt, and its
  /// executor retires it once the attempts beside them ended.
  private(set) var leftRunning: [TestID] = []
  /// The attempts left running, until the watch hands them over (``takeOverdue()``): one
  /// whose reply is read meanwhile (it came with the deadline) keeps its own end.
  private var overdue: [Attempt] = []

  /// Whether attempts ended at their deadline and wait to be handed over.
  var hasOverdue: Bool { !overdue.isEmpty }

  /// How the attempts that ended at their deadline, left running, finished: each at its
  /// limit, the first saying that its worker is replaced. They are handed over once.
  mutating func takeOverdue() -> [Finished] {
    defer { overdue = [] }
    return overdue.map { attempt in
      var attempt = attempt
      if !replacementSaid {
        replacementSaid = true
        attempt.emit(Event(.workerReplaced(attempt.planned.id, reason: WorkerRetirement.exceededTimeLimit.rawValue)))
      }
      let end = AttemptEnd.leftRunningAtLimit(attempt.planned.timeLimit ?? .zero, output: recent.tail(since: attempt.outputStart))
      return Self.ended(attempt, end, note: nil)
    }
  }

  /// Whether the worker was stopped only at the deadlines of attempts that ended since (their
  /// ends arrived with the signal): the stop is no test's still to come, and none that runs.
  var stoppedForEndedAttempts: Bool {
    stopping != nil && stopping?.interrupt == nil && !pastDeadline.isEmpty && !pastDeadline.contains(where: runs)
  }

  // MARK: Inputs

  /// An attempt of `test` starts (`at` that time, as the worker said, else now), under
  /// channel reference `ref`, its events streamed to `sink` when `streams`; `false`, and
  /// nothing starts, when the worker takes no attempt (``takesAttempts``). Its first event
  /// is the fact of its start, a `testStarted` stamped with that time, which the test's
  /// owner keeps as the attempt's start (``TestAttempt/started``) and sends no further.
  @discardableResult
  mutating func start(_ planned: Runner.PlannedTest, ref: Int? = nil, sink: EventSink?, streams: Bool,
                      deadline: ContinuousClock.Instant?, at time: Date = Date()) -> Bool {
    guard takesAttempts else { return false }
    var attempt = Attempt(planned: planned, ref: ref, streams: streams, sink: sink, outputStart: recent.total,
                          outputSent: output.end, deadline: deadline)
    attempt.emit(Event(.testStarted(planned.id), timestamp: time))
    running.append(attempt)
    return true
  }

  /// The attempt of `id` recorded `event`; `false` when no such attempt runs.
  @discardableResult
  mutating func record(_ event: Event, of id: TestID) -> Bool {
    guard let index = running.firstIndex(where: { $0.planned.id == id }) else { return false }
    running[index].emit(event, after: output)
    return true
  }

  /// The worker printed `bytes`: every running attempt's output, marked as shared when
  /// several run. It is stored once (``WorkerOutputLog``): an attempt that streams is sent it
  /// now, the others what they shared of it as they end.
  mutating func printed(_ bytes: ArraySlice<UInt8>) {
    guard !bytes.isEmpty else { return }
    recent.append(bytes)
    guard output.add(bytes, shared: running.count > 1) else { return }
    for index in running.indices where running[index].streams { running[index].sendOutput(of: output) }
    if running.indices.allSatisfy({ running[$0].streams }) { forgetSentOutput() }
  }

  /// Forgets the output every running attempt was sent.
  private mutating func forgetSentOutput() {
    guard !output.isEmpty else { return }
    var first = output.end
    for index in running.indices { first = min(first, running[index].outputSent) }
    output.drop(before: first)
  }

  /// The worker said how the attempt of `id` ended; `nil` when no such attempt runs. An
  /// attempt the worker was stopped for, whose end arrived with the signal, keeps that end,
  /// and says that its worker is replaced (`stoppedAtTimeLimit`).
  mutating func end(_ id: TestID, as end: AttemptEnd, note: Issue? = nil) -> Finished? {
    if let index = overdue.firstIndex(where: { $0.planned.id == id }) {
      // Its end came with its deadline: it was not left running after all.
      leftRunning.removeAll { $0 == id }
      return .ended(overdue.remove(at: index), end, note: note)
    }
    guard let index = running.firstIndex(where: { $0.planned.id == id }) else { return nil }
    var attempt = running.remove(at: index)
    attemptEnded = true
    attempt.flushOutput(of: output, shared: !running.isEmpty)
    if running.isEmpty { output.endLine() }
    forgetSentOutput()
    if stopping != nil, stopping?.interrupt == nil, pastDeadline.contains(id), !replacementSaid {
      replacementSaid = true
      attempt.emit(Event(.workerReplaced(id, reason: "stoppedAtTimeLimit")))
    }
    return .ended(attempt, end, note: note)
  }

  /// The worker is replaced after the attempt of `id`, for `reason` (`workerReplaced`'s): said
  /// by that attempt when it runs and no replacement of this worker was said yet.
  mutating func replaced(_ id: TestID, reason: String) {
    guard !replacementSaid, record(Event(.workerReplaced(id, reason: reason)), of: id) else { return }
    replacementSaid = true
  }

  /// The worker named the attempt with channel reference `ref` as the one crashing it.
  mutating func crashed(ref: Int) {
    if let id = id(ofRef: ref) { culprits.insert(id) }
  }

  /// The worker was seen to exit: what it wrote is read to its end next, then ``exited(_:)``.
  mutating func sawExit() {
    draining = true
  }

  /// Time passed to `now`: the signal to send the worker's process group when a deadline or
  /// the grace period after SIGTERM is over, else `nil`.
  mutating func tick(at now: ContinuousClock.Instant) -> Int32? {
    guard !draining, let next = nextDeadline, next <= now else { return nil }
    if stopping == nil {
      let past = running.filter { $0.deadline.map { $0 <= now } ?? false }
      let decision = AttemptFollowUp.pastDeadline(in: kind, sideBySide: running.count > 1 && !past.contains { $0.streams },
                                                  othersOnTime: past.count < running.count)
      if !past.isEmpty && decision == .leaveRunning {
        for attempt in past { leaveRunning(attempt.planned.id) }
        return nil
      }
      // After a hang was told apart, those past their deadline now may have waited for it.
      pastDeadline = leftRunning.isEmpty ? past.map(\.planned.id) : leftRunning
    }
    return stop(at: now, interrupt: nil)
  }

  /// Ends the attempt of `id` at its deadline and leaves it running: it is handed over
  /// with its end (``takeOverdue()``).
  private mutating func leaveRunning(_ id: TestID) {
    guard let index = running.firstIndex(where: { $0.planned.id == id }) else { return }
    var attempt = running.remove(at: index)
    attempt.flushOutput(of: output, shared: true)
    if running.isEmpty { output.endLine() }
    forgetSentOutput()
    leftRunning.append(id)
    overdue.append(attempt)
  }

  /// Time passed to `now`, and the run was interrupted by `interrupt` when it was: the signals
  /// to send the worker's process group (``tick(at:)``, then ``interrupt(_:at:)``).
  mutating func signals(at now: ContinuousClock.Instant, interrupt: Int32?) -> [Int32] {
    var signals = tick(at: now).map { [$0] } ?? []
    if let interrupt, let signal = self.interrupt(interrupt, at: now) { signals.append(signal) }
    return signals
  }

  /// The run was interrupted by `signal`: the signal to send the worker's process group.
  mutating func interrupt(_ signal: Int32, at now: ContinuousClock.Instant) -> Int32? {
    draining ? nil : stop(at: now, interrupt: signal)
  }

  private mutating func stop(at now: ContinuousClock.Instant, interrupt: Int32?) -> Int32? {
    if stopping?.signal == SIGKILL { return nil }
    let signal = stopping == nil ? SIGTERM : SIGKILL
    stopping = Stopping(signal: signal, at: now, interrupt: interrupt ?? stopping?.interrupt)
    return signal
  }

  /// When the supervisor must act next, whatever the worker does: the first running
  /// attempt's deadline (or the idle one), or the end of the grace period once it was stopped.
  var nextDeadline: ContinuousClock.Instant? {
    if draining { return nil }
    if let stopping { return stopping.signal == SIGKILL ? nil : stopping.at + gracePeriod }
    return running.isEmpty ? idleDeadline : running.indices.lazy.compactMap { running[$0].deadline }.min()
  }

  /// Milliseconds from `now` to ``nextDeadline``, as `poll` takes them: -1 for none.
  func timeout(at now: ContinuousClock.Instant) -> Int32 {
    guard let next = nextDeadline else { return -1 }
    let left = now.duration(to: next)
    return left <= .zero ? 0 : Int32(min(left.timeInterval * 1000 + 1, Double(Int32.max)))
  }

  /// How an attempt under `timeLimit` ended when the worker ended with `exit` before it did,
  /// with `output`, the tail of what it printed.
  func ending(_ exit: ProcessEnding, timeLimit: Duration?, output: String) -> AttemptEnd {
    if let stopping, let interrupt = stopping.interrupt { return .interrupted(signal: interrupt, output: output) }
    if let stopping {
      return .stoppedAtLimit(timeLimit ?? .zero, killed: stopping.signal == SIGKILL, gracePeriod: gracePeriod, output: output)
    }
    return .processEnded(exit, output: output)
  }

  /// Why the worker that ended with `exit` is replaced (`workerReplaced`'s reason), or `nil`
  /// when it is not said: an interrupt ends the run.
  private func replacement(_ exit: ProcessEnding) -> String? {
    ending(exit, timeLimit: nil, output: "").replacesWorker
  }

  /// The worker ended with `exit`, its output read to its end: how each attempt running in
  /// it finishes (see the type's description). When `outputHeldBy` names the worker (as
  /// ``outputHeld(by:)`` does), a process the tests started held its output past its exit:
  /// each attempt running gets that warning, among its events when it ends, in
  /// ``Attempt/kept`` when it runs again. A `workerReplaced` event is said once, through an
  /// attempt it was stopped for, one that crashed it, or the first running.
  mutating func exited(_ exit: ProcessEnding, outputHeldBy worker: String? = nil) -> [Finished] {
    let shared = running.count > 1
    for index in running.indices {
      running[index].flushOutput(of: output, shared: shared)
      if let worker { running[index].kept.append(Self.outputHeld(by: worker)) }
    }
    let stoppedFor = Set(pastDeadline).union(culprits)
    if !replacementSaid, let reason = replacement(exit),
       let said = running.firstIndex(where: { stoppedFor.contains($0.planned.id) }) ?? running.indices.first {
      replacementSaid = true
      // Said even by an attempt that runs again, whose held events are dropped.
      let replaced = Event(.workerReplaced(running[said].planned.id, reason: reason))
      if let sink = running[said].sink { sink.send(replaced) } else { running[said].held.append(replaced) }
    }
    let all = running
    running = []
    output.endLine()
    forgetSentOutput()
    let next = all.map { followUp(of: $0.planned.id, alone: all.count == 1) }
    // An attempt alone that ends gets the tail of its own output.
    if all.count == 1, let only = all.first, next == [.done] {
      return [Self.ended(only, ending(exit, timeLimit: only.planned.timeLimit, output: recent.tail(since: only.outputStart)),
                         note: nil)]
    }
    let ends = zip(all, next).filter { $0.1 == .done }.map { $0.0 }
    let others = zip(all, next).compactMap { attempt, follows -> (Attempt, AttemptFollowUp.Company)? in
      if case .runAgain(let company) = follows { (attempt, company) } else { nil }
    }
    // Those the worker was stopped for and whose end came with the signal ran beside the others too.
    let endedFirst = pastDeadline.filter { id in !all.contains { $0.planned.id == id } }
    let why: String
    if !pastDeadline.isEmpty {
      why = "was stopped because \(Self.names(pastDeadline)) ran past its time limit"
    } else if !culprits.isEmpty {
      why = "crashed in \(Self.names(ends.map(\.planned.id))) (\(exit))"
    } else {
      why = "ended with \(exit) before they returned; a crash among tests running side by side is no evidence against "
        + "any one of them"
    }
    var finished: [Finished] = others.map { attempt, company in
      .runAgain(attempt, note: company == .alone ? nil : Issue(
        kind: .warning, message: "The worker process running this test side by side with "
          + "\(Self.names(endedFirst + all.map(\.planned.id).filter { $0 != attempt.planned.id })) \(why), so this test ran "
          + (company == .besideOthers ? "again without it" : "again beside fewer of them"),
        sourceLocation: attempt.planned.test.sourceLocation), company: company)
    }
    for attempt in ends {
      let note = others.isEmpty ? nil : Issue(
        kind: .warning, message: "Side by side with this test ran \(Self.names(others.map { $0.0.planned.id })), which ran again "
          + "without it",
        sourceLocation: attempt.planned.test.sourceLocation)
      finished.append(Self.ended(attempt, ending(exit, timeLimit: attempt.planned.timeLimit, output: recent.tail), note: note))
    }
    return finished
  }

  /// What follows for the attempt of `id`, running `alone` or not, now that the worker ended
  /// (``AttemptFollowUp``): whether it ends with the worker's end, or runs again and how.
  private func followUp(of id: TestID, alone: Bool) -> AttemptFollowUp.Test {
    func naming(_ ids: some Collection<TestID>) -> AttemptFollowUp.Naming {
      ids.contains(id) ? .this : ids.isEmpty ? .nobody : .others
    }
    let cutShort = AttemptFollowUp.CutShort(
      interrupted: stopping?.interrupt != nil, alone: alone, stoppedFor: naming(pastDeadline),
      namedCrashing: naming(culprits), testsEndedBefore: attemptEnded)
    return AttemptFollowUp(after: .init(workerKind: kind, cutShort: cutShort)).test
  }

  /// `attempt` ended as `end`, the warnings it kept among its events.
  private static func ended(_ attempt: Attempt, _ end: AttemptEnd, note: Issue?) -> Finished {
    var attempt = attempt
    for issue in attempt.kept { attempt.emit(Event(.issueRecorded(attempt.planned.id, issue))) }
    attempt.kept = []
    return .ended(attempt, end, note: note)
  }

  /// The tests, by path: the first eight, and how many others (a warning for each of 256 tests
  /// naming the 255 others would be megabytes).
  private static func names(_ ids: [TestID]) -> String {
    let named = ids.prefix(8).map(\.path).joined(separator: ", ")
    return ids.count > 8 ? "\(named) and \(ids.count - 8) other tests" : named
  }
}
