import AsyncHarnessShared
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The worker's end of its private channel to its parent: a socket that carries the
/// parent's requests in and the worker's events and replies out (``WorkerProtocol``).
///
/// The parent hands it over as descriptor ``inheritedDescriptor`` and names it in
/// ``variable``; ``adopt()`` moves it to a descriptor above ``lowestDescriptor`` (out of the
/// way of the descriptors a test opens, closes or closes twice), makes it close-on-exec (a
/// process a test starts never has it) and removes the variable from the environment.
final class WorkerChannel: Sendable {
  /// The environment variable naming the descriptor of the worker's end of the channel.
  static let variable = "ASYNC_HARNESS_WORKER_CHANNEL"
  /// The descriptor the parent hands the channel over as.
  static let inheritedDescriptor: Int32 = 3
  /// The channel is moved to this descriptor or the first free one above it.
  static let lowestDescriptor: Int32 = 100

  let descriptor: Int32
  /// Serialises writes, so lines written from several threads (an issue recorded by a
  /// callback) stay whole; holds the text marks are written in, its storage kept from one
  /// to the next.
  private let writing = Mutex(JSONText())
  /// Whether a test runs: the end of the channel then means the parent is gone.
  private let runningATest = Atomic(false)

  private init(descriptor: Int32) {
    self.descriptor = descriptor
    Thread.detachNewThread { [self] in
      // The parent's end closed (it died, or stopped this worker): a socket whose peer is
      // gone reports POLLHUP, read or not.
      var channel = pollfd(fd: descriptor, events: 0, revents: 0)
      while poll(&channel, 1, -1) < 0 && errno == EINTR {}
      if runningATest.load(ordering: .acquiring) { _exit(0) }
    }
  }

  /// Takes over the channel the parent handed over.
  /// - Throws: ``WorkerError`` when there is none (the worker was started by hand).
  static func adopt() throws -> WorkerChannel {
    guard let text = ProcessInfo.processInfo.environment[variable], let inherited = Int32(text),
          inherited >= 0, fcntl(inherited, F_GETFD) != -1 else {
      throw WorkerError("\(WorkerMain.flag) is for the worker processes a run starts itself: no channel to a parent "
        + "(\(variable))")
    }
    let moved = fcntl(inherited, F_DUPFD_CLOEXEC, lowestDescriptor)
    guard moved >= 0 else { throw WorkerError("cannot move the channel: \(String(cString: strerror(errno)))") }
    close(inherited)
    unsetenv(variable)
    StandardStreams.openMissing()
    return WorkerChannel(descriptor: moved)
  }

  /// Marks a test as running: from now until the next request is read, the end of the
  /// channel ends the process at once.
  func testStarts() {
    runningATest.store(true, ordering: .releasing)
  }

  /// Marks the worker as between tests.
  fileprivate func testEnded() {
    runningATest.store(false, ordering: .releasing)
  }

  /// Sends an event of the test of step `ref`: a wait that ended or a schedule step as a
  /// ``TimelineMark``, any other as its event line.
  func send(_ event: Event, ref: Int) {
    guard let mark = TimelineMark(event, ref: ref) else { return write(event.jsonLineBytes) }
    writing.withLock { text in
      text.removeAll()
      mark.write(to: &text)
      text.withUnsafeBytes { writeLocked(UnsafeRawBufferPointer($0)) }
    }
  }

  /// Sends the reply that ends a step.
  func send(_ reply: WorkerReply) {
    write(reply.line)
  }

  /// Writes a line whole; when the channel is gone (the parent ended, or a test closed the
  /// descriptor) nothing more can be reported, so the worker says so on standard error (the
  /// running test's output) and exits with status 3.
  private func write(_ line: [UInt8]) {
    writing.withLock { _ in line.withUnsafeBytes { writeLocked($0) } }
  }

  /// Writes `line` whole, the lock held (``write(_:)``).
  private func writeLocked(_ line: UnsafeRawBufferPointer) {
    do {
      try writeWhole(line, to: descriptor, path: "the worker's channel")
    } catch {
      FileHandleOutput.standardError.write(
        "AsyncHarness worker: the channel to the parent is gone (\(error)); a test closed its descriptor, or the parent ended\n")
      _exit(3)
    }
  }
}

/// The requests the parent writes, read on the main thread between tests, or while tests run
/// side by side.
struct WorkerRequests {
  private let channel: WorkerChannel
  private let sideBySide: SideBySideTests
  private var lines = LineSplitter()
  private var ended = false
  private var buffer = ReadBuffer()

  init(channel: WorkerChannel, sideBySide: SideBySideTests) {
    self.channel = channel
    self.sideBySide = sideBySide
  }

  /// The next request, waiting for it (turning the main run loop while tests run side by
  /// side); `nil` when the parent closed the channel. An unreadable request ends the process
  /// with status 2.
  mutating func next() -> WorkerRequest? {
    guard let line = nextLine() else { return nil }
    do {
      return try WorkerRequest(line: line)
    } catch {
      FileHandleOutput.standardError.write(
        "AsyncHarness worker: unreadable request (\(error)): \(String(decoding: line.prefix(200), as: UTF8.self))\n")
      exit(2)
    }
  }

  /// The next line, without its newline, waiting for it; `nil` when the channel ended.
  private mutating func nextLine() -> ArraySlice<UInt8>? {
    while true {
      if let line = lines.next() { return line }
      if ended { return nil }
      if !sideBySide.awaitRequest() { channel.testEnded() }
      let count = buffer.read(from: channel.descriptor)
      if count < 0 && errno == EINTR { continue }
      if count <= 0 { ended = true } else { lines.append(buffer.prefix(count)) }
    }
  }
}
