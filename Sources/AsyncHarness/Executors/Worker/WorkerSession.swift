#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One attempt run by a worker: relays its issues and output until the worker's reply, the
/// worker's death, or its time limit, while writing the requests the channel has not taken.
struct WorkerSession {
  /// How a session ends.
  enum Ending {
    /// The worker replied: it can run more (after a resume, when `paused`), unless it says
    /// why it must be retired.
    case replied(AttemptEnd, paused: Bool, retire: WorkerRetirement?)
    /// The worker ended (crashed, or was stopped); the attempt ended so.
    case workerEnded(AttemptEnd)
  }

  let step: Runner.Step
  let events: EventSink
  let stop: StopRequest?
  private var output = OutputBuffer()
  /// When the worker is stopped, and how.
  private var groupStop: GroupStop

  init(step: Runner.Step, events: EventSink, gracePeriod: Duration, deadline: ContinuousClock.Instant?, stop: StopRequest?) {
    self.step = step
    self.events = events
    groupStop = GroupStop(gracePeriod: gracePeriod, deadline: deadline)
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
    var descriptors = worker.pollDescriptors(stop: stop)
    while true {
      switch worker.poll(&descriptors, groupStop: &groupStop, stop: stop) {
      case .failed: return .workerEnded(end(worker.waitForExit()))
      case .timedOut: groupStop.stop(worker.process); continue
      case .ready: break
      }
      // Events first: an issue precedes the output the test then writes.
      if descriptors[0].revents & ~Int16(POLLOUT) != 0 {
        let count = connection.buffer.read(from: worker.channel)
        if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { continue }
        guard count > 0 else {
          drainOutput(&connection, until: .endOfFile)
          return .workerEnded(end(worker.waitForExit()))
        }
        connection.lines.append(connection.buffer.prefix(count))
        while let line = connection.lines.next() {
          if let ending = relay(line, &connection) { return ending }
        }
      }
      if descriptors[1].revents != 0 {
        let count = connection.buffer.read(from: worker.output)
        if count > 0 { relayOutput(connection.output.append(connection.buffer.prefix(count))) } else { descriptors[1].fd = -1 }
      }
    }
  }

  /// Relays one line of the worker's; returns how the attempt ended when it is the step's reply.
  private mutating func relay(_ line: ArraySlice<UInt8>, _ connection: inout WorkerConnection) -> Ending? {
    guard !line.isEmpty else { return nil }
    switch try? WorkerMessage(line: line) {
    case .event(let event):
      events.send(event)
      return nil
    case .mark(let mark):
      // A mark of an earlier step (a wait that ended after its test) is on no attempt's timeline.
      if mark.ref == connection.inFlight.first?.ref { events.send(mark.event(of: step.id)) }
      return nil
    case .reply(.returned(step.id, let duration, let trace, let paused, let retire)):
      drainOutput(&connection, until: .nothingLeft)
      return .replied(.returned(duration: duration, trace: trace), paused: paused, retire: retire)
    case .reply(.cannotRun(step.id, let reason)):
      drainOutput(&connection, until: .nothingLeft)
      return .replied(.couldNotStart(reason: reason), paused: true, retire: nil)
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
      let count = connection.buffer.read(from: descriptor)
      guard count > 0 else { break }
      relayOutput(connection.output.append(connection.buffer.prefix(count)))
    }
    if let rest = output.flush() { events(.outputCaptured(step.id, rest)) }
  }

  /// How the attempt ended when its worker ended before replying.
  private func end(_ exit: ProcessEnding) -> AttemptEnd {
    groupStop.ending(exit, timeLimit: step.timeLimit, output: output.tail)
  }
}
