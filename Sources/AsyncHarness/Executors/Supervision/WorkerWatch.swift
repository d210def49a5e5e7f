import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a kind of worker's channel and output are read into its ``WorkerSupervision``: a
/// harness worker's protocol lines (``WorkerMessages``), or a test bundle's library records
/// (``BundleWorkerDecoder``).
protocol WorkerDecoder {
  /// Reads bytes of the worker's output.
  mutating func output(_ bytes: ArraySlice<UInt8>, into supervision: inout WorkerSupervision)
  /// Reads bytes of the worker's channel (the output written before them was read first);
  /// returns `true` once what the caller waits for happened.
  mutating func channel(_ bytes: ArraySlice<UInt8>, into supervision: inout WorkerSupervision) -> Bool
  /// The worker exited and what it wrote was read: hands over what is left (a last line
  /// without its newline, output held back for a marker that never came).
  mutating func ended(into supervision: inout WorkerSupervision)
}

/// What the lane's loop (``LaneWatch``) knows of one worker process and does for it: it
/// polls the worker's channel, its output, its exit and the run's interrupt, feeds what
/// it read to the worker's supervision through its decoder, and writes the requests the
/// channel has not taken yet (the parent's end never blocks). Every kind of worker is read
/// so. The signals a deadline or the interrupt asks for are its lane's to send
/// (``WatchedLane/timePassed(_:to:interrupt:)``).
///
/// A worker ends at its exit (a pidfd where the platform has one, else asked ten times a
/// second); not when its channel or its output closes. Once it exited, what it wrote is in
/// the pipes: the channel is read for what is in it (a process it forked may hold it open),
/// and the output until it closes, giving processes the worker left ``drainLimit`` to let
/// go of it. One that still holds it is stopped with the worker's process group, never
/// waited for (``outputHeld``).
struct WorkerWatch {
  /// How long processes a worker left may hold its output open once it exited.
  static let drainLimit = Duration.milliseconds(100)
  /// How many descriptors each worker has in the lane's poll (``descriptors(reading:)``).
  static let descriptorCount = 4

  /// What a pass of the lane's loop found of the worker.
  enum Served: Equatable {
    /// Nothing the lane waits for happened.
    case goOn
    /// What the lane waits for happened: the decoder said so, or an attempt ended at its
    /// deadline and was left running (``WorkerSupervision/takeOverdue()``).
    case waitOver
    /// The worker exited: ``finish(_:_:)`` reads what it wrote.
    case exited
  }

  let process: ChildProcess
  /// The parent's end of the channel, non-blocking.
  let channel: Int32
  /// Where requests to the worker are queued, when the channel carries them.
  let requests: WorkerProcess?
  let stop: StopRequest?
  /// Polls readable once the process exited.
  private let exitWatch: Int32?
  /// What each read fills: one for the channel, one for the output, read in between.
  private var channelBuffer = ReadBuffer()
  private var outputBuffer = ReadBuffer()
  private var channelOpen = true
  private var outputOpen = true
  private var stopSeen = false
  /// How the worker ended, once it has.
  private(set) var exit: ProcessEnding?
  /// Whether a process the worker left held its output open after it exited.
  private(set) var outputHeld = false

  init(process: ChildProcess, channel: Int32, requests: WorkerProcess? = nil, stop: StopRequest?) {
    self.process = process
    self.channel = channel
    self.requests = requests
    self.stop = stop
    process.readOutputWithoutBlocking()
    exitWatch = process.exitDescriptor()
  }

  /// Whether the worker's exit is asked for at each pass (no exit descriptor on this
  /// platform): the lane's poll then waits 100 ms at most.
  var asksForExit: Bool { exitWatch == nil }

  /// Begins a wait for the worker: ``Served/exited`` when it ended already,
  /// ``Served/waitOver`` when lines read before end the wait, else `nil`.
  mutating func begin(_ decoder: inout some WorkerDecoder, _ supervision: inout WorkerSupervision) -> Served? {
    if exit != nil { return .exited }
    return decoder.channel([], into: &supervision) ? .waitOver : nil
  }

  /// The worker's descriptors in the lane's poll, ``descriptorCount`` of them: its channel
  /// (writable too while requests wait), its output, the run's stop request and its exit.
  /// Only the worker the lane waits for is `reading`; of another, only its exit is polled:
  /// what it says and prints waits in its pipes for the lane to wait for it, so that each
  /// line reaches the attempt it belongs to.
  func descriptors(reading: Bool) -> [pollfd] {
    [
      pollfd(fd: reading && channelOpen ? channel : -1,
             events: Int16(POLLIN) | (requests?.hasUnsentRequests == true ? Int16(POLLOUT) : 0), revents: 0),
      pollfd(fd: reading && outputOpen ? process.output : -1, events: Int16(POLLIN), revents: 0),
      pollfd(fd: !reading || stopSeen ? -1 : stop?.descriptor ?? -1, events: Int16(POLLIN), revents: 0),
      pollfd(fd: exitWatch ?? -1, events: Int16(POLLIN), revents: 0),
    ]
  }

  /// The signal that interrupts the run, once, when a poll found the run's stop request
  /// ready among the worker's descriptors (`ready`, as ``descriptors(reading:)`` made them).
  mutating func interrupt(in ready: ArraySlice<pollfd>) -> Int32? {
    guard ready[ready.startIndex + 2].revents != 0, let signal = stop?.signal else { return nil }
    stopSeen = true
    return signal
  }

  /// Serves what a poll found ready among the worker's descriptors (`ready`, as
  /// ``descriptors(reading:)`` made them): writes requests, reads output and channel, and
  /// sees the worker's exit.
  mutating func serve(_ ready: ArraySlice<pollfd>, _ decoder: inout some WorkerDecoder,
                      _ supervision: inout WorkerSupervision) -> Served {
    let (channelReady, outputReady, exitReady) = (
      ready[ready.startIndex].revents, ready[ready.startIndex + 1].revents, ready[ready.startIndex + 3].revents)
    if channelReady & Int16(POLLOUT) != 0 { requests?.flush() }
    if outputReady != 0 { readOutput(&decoder, &supervision) }
    // At the channel's end the worker is ending: its exit is watched for.
    if channelReady & ~Int16(POLLOUT) != 0 && readChannel(&decoder, &supervision) { return .waitOver }
    if exitReady != 0 || (exitWatch == nil && process.ending(waiting: false) != nil) { return .exited }
    // An attempt ended at its deadline, left running (its reply was not in this read): the
    // lane hears of it now.
    return supervision.hasOverdue ? .waitOver : .goOn
  }

  /// Reads what the output holds into the decoder; at its end, stops watching it.
  private mutating func readOutput(_ decoder: inout some WorkerDecoder, _ supervision: inout WorkerSupervision) {
    while outputOpen {
      let count = outputBuffer.read(from: process.output)
      if count < 0 && errno == EINTR { continue }
      if count < 0 && errno == EAGAIN { return }
      guard count > 0 else {
        outputOpen = false
        return
      }
      decoder.output(outputBuffer.prefix(count), into: &supervision)
    }
  }

  /// Reads what the channel holds, each read after the output written before it; `true`
  /// once the decoder says the wait is over. At its end, stops watching it.
  private mutating func readChannel(_ decoder: inout some WorkerDecoder, _ supervision: inout WorkerSupervision) -> Bool {
    while channelOpen {
      let count = channelBuffer.read(from: channel)
      if count < 0 && errno == EINTR { continue }
      if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return false }
      guard count > 0 else {
        channelOpen = false
        return false
      }
      readOutput(&decoder, &supervision)
      if decoder.channel(channelBuffer.prefix(count), into: &supervision) { return true }
    }
    return false
  }

  /// The worker exited: reads the channel to its end and the output until it closes or
  /// ``drainLimit`` passed, stopping the process group when something still holds it; reaps
  /// the worker, and returns how it ended.
  mutating func finish(_ decoder: inout some WorkerDecoder,
                               _ supervision: inout WorkerSupervision) -> ProcessEnding {
    if process.ending(waiting: false) == nil { process.signal(SIGKILL) }
    let exit = process.ending(waiting: true) ?? .signaled(SIGKILL)
    self.exit = exit
    supervision.sawExit()
    // What the worker wrote is there; a process it forked may hold the channel open, so this
    // reads what is there, never waiting for the channel's end.
    while readChannel(&decoder, &supervision) {}
    let until = ContinuousClock().now + Self.drainLimit
    var ready = pollfd(fd: process.output, events: Int16(POLLIN), revents: 0)
    while true {
      readOutput(&decoder, &supervision)
      guard outputOpen else { break }
      let left = ContinuousClock().now.duration(to: until)
      guard left > .zero, poll(&ready, 1, Int32(left.timeInterval * 1000) + 1) != 0 else {
        outputHeld = true
        process.signal(SIGKILL)
        break
      }
    }
    decoder.ended(into: &supervision)
    release()
    return exit
  }

  /// Stops the worker's process group at once and reaps it; a worker that ended already is
  /// only closed.
  mutating func kill() {
    guard exit == nil else { return }
    process.signal(SIGKILL)
    exit = process.ending(waiting: true) ?? .signaled(SIGKILL)
    release()
  }

  /// Closes the descriptors of a worker that ended.
  private func release() {
    if let exitWatch { close(exitWatch) }
    if let requests {
      _ = requests.waitForExit()
    } else {
      close(channel)
      _ = process.waitForExit()
    }
  }
}
