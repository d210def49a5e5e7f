import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A running worker process, seen from its parent: its private channel (a socket carrying
/// requests one way and events the other) and the pipe carrying its standard output and
/// standard error (a ``ChildProcess``: a process group of its own, nothing of this process
/// open but its standard input and what it is handed).
///
/// The worker's end of the channel is handed over as descriptor
/// ``WorkerChannel/inheritedDescriptor``, named by ``WorkerChannel/variable``; the worker
/// moves it out of the way and marks it close-on-exec before any test runs, so test code and
/// the processes it starts never see it.
///
/// The parent's end of the channel never blocks: ``send(_:)`` queues what the socket cannot
/// take now, and the executor's poll loop writes it (``flush()``) while it reads.
final class WorkerProcess {
  let process: ChildProcess
  /// The parent's end of the channel: non-blocking, close-on-exec.
  let channel: Int32
  /// The read end of the pipe carrying the worker's standard output and standard error.
  var output: Int32 { process.output }
  private var channelOpen = true
  /// Request bytes the socket did not take yet, from `unsentStart` on.
  private var unsent: [UInt8] = []
  private var unsentStart = 0

  /// Starts `executable` with `arguments`, this process's environment and `environment`.
  init(executable: String, arguments: [String], environment extra: [String: String]) throws {
    let channel = try Self.makeChannel()
    defer { close(channel.worker) }
    do {
      process = try ChildProcess(
        executable: executable, arguments: arguments,
        environment: extra.merging([WorkerChannel.variable: String(WorkerChannel.inheritedDescriptor)]) { $1 },
        handing: [(channel.worker, WorkerChannel.inheritedDescriptor)])
    } catch {
      close(channel.parent)
      throw error
    }
    self.channel = channel.parent
  }

  /// Queues a request and writes what the channel takes now without blocking; `false` when
  /// the worker no longer reads (it died, or was told to stop).
  func send(_ request: WorkerRequest) -> Bool {
    guard channelOpen else { return false }
    unsent += request.line
    return flush()
  }

  /// Queues a test to run next (`run`), or side by side with others (`start`), under
  /// `ref` (``WorkerRunRequest/ref``, unique on the channel: its lane gives it); `false` when
  /// the worker no longer reads.
  func send(_ planned: Runner.PlannedTest, ref: Int, sideBySide: Bool = false) -> Bool {
    send(sideBySide ? .start(WorkerRunRequest(planned, ref: ref)) : .run(WorkerRunRequest(planned, ref: ref)))
  }

  /// Whether request bytes wait for the channel to take them.
  var hasUnsentRequests: Bool { unsentStart < unsent.count }

  /// Writes queued request bytes until the channel would block; `false` when the worker no
  /// longer reads.
  @discardableResult
  func flush() -> Bool {
    while hasUnsentRequests {
      let sent = unsent[unsentStart...].withUnsafeBytes {
        Foundation.send(channel, $0.baseAddress, $0.count, Self.noSignal)
      }
      if sent > 0 {
        unsentStart += sent
      } else if sent < 0 && errno == EINTR {
        continue
      } else if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
        return true
      } else {
        return false
      }
    }
    unsent.removeAll(keepingCapacity: unsent.count <= 65536)
    unsentStart = 0
    return true
  }

  /// Forgets the requests queued and not written yet: the runner asks for them again.
  func dropUnsentRequests() {
    unsent.removeAll()
    unsentStart = 0
  }

  #if canImport(Glibc)
  /// A write to a worker that died fails with EPIPE instead of raising SIGPIPE.
  private static let noSignal = Int32(MSG_NOSIGNAL)
  #else
  private static let noSignal: Int32 = 0
  #endif

  /// The channel: a socket pair, the parent's end non-blocking, both ends close-on-exec
  /// until the worker's is handed over as ``WorkerChannel/inheritedDescriptor``.
  private static func makeChannel() throws -> (parent: Int32, worker: Int32) {
    var descriptors: [Int32] = [0, 0]
    #if canImport(Glibc)
    let made = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &descriptors)
    #else
    let made = socketpair(AF_UNIX, SOCK_STREAM, 0, &descriptors)
    #endif
    guard made == 0 else { throw WorkerError("cannot make a socket pair for a worker: \(String(cString: strerror(errno)))") }
    for descriptor in descriptors { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
    _ = fcntl(descriptors[0], F_SETFL, fcntl(descriptors[0], F_GETFL) | O_NONBLOCK)
    #if !canImport(Glibc)
    var on: Int32 = 1
    setsockopt(descriptors[0], SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
    #endif
    return (descriptors[0], descriptors[1])
  }

  /// Sends `signal` to the worker's process group.
  func signal(_ signal: Int32) {
    process.signal(signal)
  }

  /// Tells the worker that no request follows: it exits once it reads this.
  func closeRequests() {
    guard channelOpen else { return }
    channelOpen = false
    dropUnsentRequests()
    shutdown(channel, Int32(SHUT_WR))
  }

  /// Waits for the worker to end and closes the parent's ends of its channel and pipe.
  func waitForExit() -> ProcessEnding {
    closeRequests()
    defer { close(channel) }
    return process.waitForExit()
  }
}

/// How a process ended: the status it exited with, or the signal that ended it.
@_spi(ForToolsIntegrationOnly) public enum ProcessEnding: Sendable, Equatable, CustomStringConvertible {
  /// It exited with this status.
  case exited(Int32)
  /// This signal ended it.
  case signaled(Int32)

  /// Reads a status from `waitpid`.
  init(waitStatus status: Int32) {
    let signal = status & 0x7F
    self = signal == 0 ? .exited((status >> 8) & 0xFF) : .signaled(signal)
  }

  /// `signal SIGILL (illegal instruction)` or `exit status 3`.
  @_spi(ForToolsIntegrationOnly) public var description: String {
    switch self {
    case .exited(let code): "exit status \(code)"
    case .signaled(let signal): "signal \(Self.name(of: signal))"
    }
  }

  /// `SIGSEGV (segmentation fault)`: the name and what the system calls it.
  static func name(of signal: Int32) -> String {
    let names: [Int32: String] = [
      SIGHUP: "SIGHUP", SIGINT: "SIGINT", SIGQUIT: "SIGQUIT", SIGILL: "SIGILL", SIGTRAP: "SIGTRAP",
      SIGABRT: "SIGABRT", SIGBUS: "SIGBUS", SIGFPE: "SIGFPE", SIGKILL: "SIGKILL", SIGSEGV: "SIGSEGV",
      SIGPIPE: "SIGPIPE", SIGALRM: "SIGALRM", SIGTERM: "SIGTERM",
    ]
    let meaning = strsignal(signal).map { String(cString: $0).lowercased() } ?? "unknown"
    return "\(names[signal] ?? "\(signal)") (\(meaning))"
  }
}
