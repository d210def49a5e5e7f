extension WorkerSupervision {
  /// The warning of a process the tests started that still held the output of the worker
  /// (`worker`: what it is, as the message names it) after it exited, and was stopped with
  /// its process group.
  static func outputHeld(by worker: String) -> Issue {
    Issue(kind: .leaked, message: "Leaked work: a process the tests started still held \(worker)'s output open "
      + "after it exited; it was stopped with \(worker)'s process group")
  }

  /// One attempt running in the worker.
  struct Attempt {
    let planned: Runner.PlannedTest
    /// Its reference on the worker's channel, when the worker names attempts so.
    let ref: Int?
    /// Whether its events go to ``sink`` as they come; else they are held until it ends.
    var streams: Bool
    let sink: EventSink?
    var held: [Event] = []
    /// Where its output starts in the worker's (``OutputTail/total``), for its last lines.
    let outputStart: Int
    /// The position in the worker's output (``WorkerOutputLog``) from which its output is not sent yet.
    var outputSent: Int
    /// When the worker is stopped for it: its time limit's end, with the margin its executor gives.
    let deadline: ContinuousClock.Instant?
    /// When it started, as the supervisor saw it.
    let start = ContinuousClock().now
    /// Warnings of its run in this worker that stay the test's when it runs again (its
    /// ``held`` events are dropped then): the worker's output held past its exit. Empty for an
    /// attempt that ended, whose events carry them.
    var kept: [Issue] = []

    /// Sends `event`, or holds it until the attempt ends.
    mutating func emit(_ event: Event) {
      if streams, let sink { sink.send(event) } else { held.append(event) }
    }

    /// Sends `event` after what the worker printed since its output was last sent (``sendOutput(of:)``).
    mutating func emit(_ event: Event, after output: WorkerOutputLog) {
      sendOutput(of: output)
      emit(event)
    }

    /// Sends what the worker printed since its output was last sent, as one event: a piece as
    /// `outputCaptured`, several as `outputShared`, never copied.
    mutating func sendOutput(of output: WorkerOutputLog) {
      let pieces = output.pieces(from: outputSent)
      outputSent = output.end
      guard let first = pieces.first else { return }
      emit(Event(pieces.count == 1 ? .outputCaptured(planned.id, first)
                                   : .outputShared(planned.id, SharedOutput(pieces: Array(pieces)))))
    }

    /// Sends the rest of its output, the line being printed too (marked when `shared`).
    mutating func flushOutput(of output: WorkerOutputLog, shared: Bool) {
      sendOutput(of: output)
      if let line = output.unfinishedLine(shared: shared) { emit(Event(.outputCaptured(planned.id, line))) }
    }
  }
}
