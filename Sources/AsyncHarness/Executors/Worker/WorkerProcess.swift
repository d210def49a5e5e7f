import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A running worker process, seen from its parent: its private channel (a socket carrying
/// requests one way and events the other) and the pipe carrying its standard output and
/// standard error (one pipe for both, so their order is kept).
///
/// The worker is started with nothing of this process open but its standard input (the one
/// the run was given: `/dev/null` in CI), the capture pipe as its standard output and
/// standard error, and its end of the channel as descriptor ``WorkerChannel/inheritedDescriptor``,
/// named by ``WorkerChannel/variable``; the worker moves it out of the way and marks it
/// close-on-exec before any test runs, so test code and the processes it starts never see
/// it. Report files and every other descriptor stay behind: on Linux the spawn closes them
/// (`posix_spawn_file_actions_addclosefrom_np`, glibc 2.34), on macOS the spawn closes what
/// it is not told to keep (`POSIX_SPAWN_CLOEXEC_DEFAULT`).
///
/// The parent's end of the channel never blocks: ``send(_:)`` queues what the socket cannot
/// take now, and the executor's poll loop writes it (``flush()``) while it reads.
///
/// The worker leads a process group of its own: a time limit stops it and whatever it
/// started, and Ctrl-C in a terminal reaches only the parent, which decides.
final class WorkerProcess {
  let pid: pid_t
  /// The parent's end of the channel: non-blocking, close-on-exec.
  let channel: Int32
  let output: Int32
  private var channelOpen = true
  /// Request bytes the socket did not take yet, from `unsentStart` on.
  private var unsent: [UInt8] = []
  private var unsentStart = 0

  /// Starts `executable` with `arguments`, this process's environment and `environment`.
  /// The Swift runtime's crash backtracer is turned off in the worker unless
  /// `SWIFT_BACKTRACE` is set: it takes seconds to symbolicate, and the parent reports the
  /// crash itself.
  init(executable: String, arguments: [String], environment extra: [String: String]) throws {
    let channel = try Self.makeChannel()
    let output: (read: Int32, write: Int32)
    do { output = try Self.makePipe() } catch {
      close(channel.parent); close(channel.worker)
      throw error
    }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, output.write, 1)
    posix_spawn_file_actions_adddup2(&actions, output.write, 2)
    posix_spawn_file_actions_adddup2(&actions, channel.worker, WorkerChannel.inheritedDescriptor)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var flags = Int32(POSIX_SPAWN_SETPGROUP)
    #if canImport(Darwin)
    // Only what the actions name is open in the worker; standard input is kept as it is.
    flags |= Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)
    posix_spawn_file_actions_addinherit_np(&actions, 0)
    #else
    Self.closeFrom(WorkerChannel.inheritedDescriptor + 1, in: &actions)
    #endif
    posix_spawnattr_setflags(&attributes, Int16(flags))
    posix_spawnattr_setpgroup(&attributes, 0)

    var environment = ProcessInfo.processInfo.environment
    if environment["SWIFT_BACKTRACE"] == nil { environment["SWIFT_BACKTRACE"] = "enable=no" }
    environment.merge(extra) { $1 }
    environment[WorkerChannel.variable] = String(WorkerChannel.inheritedDescriptor)
    let argv = [executable] + arguments
    var pid: pid_t = 0
    let status = withCStrings(argv) { argv in
      withCStrings(environment.map { "\($0.key)=\($0.value)" }) { envp in
        posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
      }
    }
    close(channel.worker)
    close(output.write)
    guard status == 0 else {
      close(channel.parent)
      close(output.read)
      throw WorkerError("cannot start a worker process (\(executable)): \(String(cString: strerror(status)))")
    }
    self.pid = pid
    self.channel = channel.parent
    self.output = output.read
  }

  #if canImport(Glibc)
  private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32
  /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc
  /// module does not declare; `nil` on an older C library, where every descriptor the
  /// harness opens is close-on-exec anyway.
  private static let addCloseFrom: AddCloseFrom? = dlsym(UnsafeMutableRawPointer(bitPattern: 0),
                                                         "posix_spawn_file_actions_addclosefrom_np")
    .map { unsafeBitCast($0, to: AddCloseFrom.self) }

  /// Closes every descriptor from `first` on in the started process.
  private static func closeFrom(_ first: Int32, in actions: inout posix_spawn_file_actions_t) {
    _ = addCloseFrom?(&actions, first)
  }
  #endif

  /// Queues a request and writes what the channel takes now without blocking; `false` when
  /// the worker no longer reads (it died, or was told to stop).
  func send(_ request: WorkerRequest) -> Bool {
    guard channelOpen else { return false }
    unsent += request.line
    return flush()
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
    kill(-pid, signal)
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
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    close(channel)
    close(output)
    return ProcessEnding(waitStatus: status)
  }

  /// A pipe whose ends are closed in processes this one starts, unless handed over.
  private static func makePipe() throws -> (read: Int32, write: Int32) {
    var descriptors: [Int32] = [0, 0]
    let made = pipe(&descriptors)
    if made == 0 { for descriptor in descriptors { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) } }
    guard made == 0 else { throw WorkerError("cannot make a pipe for a worker: \(String(cString: strerror(errno)))") }
    return (descriptors[0], descriptors[1])
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

/// Calls `body` with a NULL-terminated array of C strings.
private func withCStrings<Result>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> Result) -> Result {
  let pointers = strings.map { strdup($0) } + [nil]
  defer { for pointer in pointers { free(pointer) } }
  return body(pointers)
}
