import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a kind of worker's channel and output are read into its ``WorkerSupervision``: a
/// harness worker's protocol lines (``WorkerMessages``), or a test bundle's library records
/// (``BundleTranscript``).
protocol WorkerTranscript {
  /// Reads bytes of the worker's output.
  mutating func output(_ bytes: ArraySlice<UInt8>, into supervision: inout WorkerSupervision)
  /// Reads bytes of the worker's channel (the output written before them was read first);
  /// returns `true` once what the caller waits for happened.
  mutating func channel(_ bytes: ArraySlice<UInt8>, into supervision: inout WorkerSupervision) -> Bool
  /// The worker exited and what it wrote was read: hands over what is left (a last line
  /// without its newline, output held back for a marker that never came).
  mutating func ended(into supervision: inout WorkerSupervision)
}

/// The one loop that watches a worker process: it waits on the worker's channel,
/// its output, its exit, the run's interrupt and the supervision's next deadline at once,
/// feeds what happened to the supervision through the worker's transcript, sends the
/// signals the supervision asks for, and writes the requests the channel has not taken yet
/// (the parent's end never blocks). Every kind of worker is read by this loop alone.
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

  /// Watches until the transcript says what the caller waits for happened, or an attempt
  /// ended at its deadline and was left running (``WorkerSupervision/takeOverdue()``): `nil`;
  /// or the worker ended: then how it ended, and the supervision's attempts are to be ended
  /// with ``WorkerSupervision/exited(_:)``.
  mutating func watch(_ transcript: inout some WorkerTranscript, _ supervision: inout WorkerSupervision) -> ProcessEnding? {
    if let exit { return exit }
    // Lines read with an earlier wait's come first.
    if transcript.channel([], into: &supervision) { return nil }
    while true {
      var descriptors = [
        pollfd(fd: channelOpen ? channel : -1,
               events: Int16(POLLIN) | (requests?.hasUnsentRequests == true ? Int16(POLLOUT) : 0), revents: 0),
        pollfd(fd: outputOpen ? process.output : -1, events: Int16(POLLIN), revents: 0),
        pollfd(fd: stopSeen ? -1 : stop?.descriptor ?? -1, events: Int16(POLLIN), revents: 0),
        pollfd(fd: exitWatch ?? -1, events: Int16(POLLIN), revents: 0),
      ]
      let deadline = supervision.timeout(at: .now)
      // Without an exit descriptor, the process is asked whether it exited ten times a second.
      let timeout = exitWatch != nil ? deadline : deadline < 0 ? 100 : min(deadline, 100)
      let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
      if ready < 0 && errno != EINTR { break }
      if let signal = supervision.tick(at: .now) { process.signal(signal) }
      if descriptors[2].revents != 0, let signal = stop?.signal {
        stopSeen = true
        if let sent = supervision.interrupt(signal, at: .now) { process.signal(sent) }
      }
      if descriptors[0].revents & Int16(POLLOUT) != 0 { requests?.flush() }
      if descriptors[1].revents != 0 { readOutput(&transcript, &supervision) }
      // At the channel's end the worker is ending: its exit is watched for.
      if descriptors[0].revents & ~Int16(POLLOUT) != 0 && readChannel(&transcript, &supervision) { return nil }
      if descriptors[3].revents != 0 || (exitWatch == nil && process.ending(waiting: false) != nil) { break }
      // An attempt ended at its deadline, left running (its reply was not in this read): the
      // caller hears of it now.
      if supervision.hasOverdue { return nil }
    }
    return finish(&transcript, &supervision)
  }

  /// Reads what the output holds into the transcript; at its end, stops watching it.
  private mutating func readOutput(_ transcript: inout some WorkerTranscript, _ supervision: inout WorkerSupervision) {
    while outputOpen {
      let count = outputBuffer.read(from: process.output)
      if count < 0 && errno == EINTR { continue }
      if count < 0 && errno == EAGAIN { return }
      guard count > 0 else {
        outputOpen = false
        return
      }
      transcript.output(outputBuffer.prefix(count), into: &supervision)
    }
  }

  /// Reads what the channel holds, each read after the output written before it; `true`
  /// once the transcript says the wait is over. At its end, stops watching it.
  private mutating func readChannel(_ transcript: inout some WorkerTranscript, _ supervision: inout WorkerSupervision) -> Bool {
    while channelOpen {
      let count = channelBuffer.read(from: channel)
      if count < 0 && errno == EINTR { continue }
      if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return false }
      guard count > 0 else {
        channelOpen = false
        return false
      }
      readOutput(&transcript, &supervision)
      if transcript.channel(channelBuffer.prefix(count), into: &supervision) { return true }
    }
    return false
  }

  /// The worker exited: reads the channel to its end and the output until it closes or
  /// ``drainLimit`` passed, stopping the process group when something still holds it; reaps
  /// the worker.
  private mutating func finish(_ transcript: inout some WorkerTranscript,
                               _ supervision: inout WorkerSupervision) -> ProcessEnding {
    if process.ending(waiting: false) == nil { process.signal(SIGKILL) }
    let exit = process.ending(waiting: true) ?? .signaled(SIGKILL)
    self.exit = exit
    supervision.sawExit()
    // What the worker wrote is there; a process it forked may hold the channel open, so this
    // reads what is there, never waiting for the channel's end.
    while readChannel(&transcript, &supervision) {}
    let until = ContinuousClock().now + Self.drainLimit
    var ready = pollfd(fd: process.output, events: Int16(POLLIN), revents: 0)
    while true {
      readOutput(&transcript, &supervision)
      guard outputOpen else { break }
      let left = ContinuousClock().now.duration(to: until)
      guard left > .zero, poll(&ready, 1, Int32(left.timeInterval * 1000) + 1) != 0 else {
        outputHeld = true
        process.signal(SIGKILL)
        break
      }
    }
    transcript.ended(into: &supervision)
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
