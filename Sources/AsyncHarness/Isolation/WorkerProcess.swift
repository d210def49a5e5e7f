import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A running worker process, seen from its parent: the pipe its requests go into, the pipe
/// its events come out of, and the pipe carrying its standard output and standard error
/// (one pipe for both, so their order is kept).
///
/// The worker leads a process group of its own: a time limit stops it and whatever it
/// started, and Ctrl-C in a terminal reaches only the parent, which decides.
final class WorkerProcess {
  let pid: pid_t
  private(set) var requests: Int32
  let events: Int32
  let output: Int32

  /// Starts `executable` with `arguments`, this process's environment and `environment`.
  /// The Swift runtime's crash backtracer is turned off in the worker unless
  /// `SWIFT_BACKTRACE` is set: it takes seconds to symbolicate, and the parent reports the
  /// crash itself.
  init(executable: String, arguments: [String], environment extra: [String: String]) throws {
    let input = try Self.makeRequestChannel()
    let events = try Self.makePipe()
    let output = try Self.makePipe()
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, input.read, 0)
    posix_spawn_file_actions_adddup2(&actions, output.write, 1)
    posix_spawn_file_actions_adddup2(&actions, output.write, 2)
    posix_spawn_file_actions_adddup2(&actions, events.write, WorkerMain.eventDescriptor)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
    posix_spawnattr_setpgroup(&attributes, 0)

    var environment = ProcessInfo.processInfo.environment
    if environment["SWIFT_BACKTRACE"] == nil { environment["SWIFT_BACKTRACE"] = "enable=no" }
    environment.merge(extra) { $1 }
    let argv = [executable] + arguments
    var pid: pid_t = 0
    let status = withCStrings(argv) { argv in
      withCStrings(environment.map { "\($0.key)=\($0.value)" }) { envp in
        posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
      }
    }
    for descriptor in [input.read, events.write, output.write] { close(descriptor) }
    guard status == 0 else {
      for descriptor in [input.write, events.read, output.read] { close(descriptor) }
      throw WorkerError("cannot start a worker process (\(executable)): \(String(cString: strerror(status)))")
    }
    self.pid = pid
    self.requests = input.write
    self.events = events.read
    self.output = output.read
  }

  /// Writes one request line; `false` when the worker no longer reads (it died).
  func send(_ line: [UInt8]) -> Bool {
    var bytes = line[...]
    while !bytes.isEmpty {
      let sent = bytes.withUnsafeBytes { Foundation.send(requests, $0.baseAddress, $0.count, Self.noSignal) }
      if sent < 0, errno == EINTR { continue }
      guard sent > 0 else { return false }
      bytes = bytes.dropFirst(sent)
    }
    return true
  }

  #if canImport(Glibc)
  /// A write to a worker that died fails with EPIPE instead of raising SIGPIPE.
  private static let noSignal = Int32(MSG_NOSIGNAL)
  #else
  private static let noSignal: Int32 = 0
  #endif

  /// The channel requests go through: a socket pair rather than a pipe, so that a request
  /// sent ahead to a worker that died fails instead of raising SIGPIPE in this process.
  private static func makeRequestChannel() throws -> (read: Int32, write: Int32) {
    var descriptors: [Int32] = [0, 0]
    #if canImport(Glibc)
    let made = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &descriptors)
    #else
    let made = socketpair(AF_UNIX, SOCK_STREAM, 0, &descriptors)
    #endif
    guard made == 0 else { throw WorkerError("cannot make a socket pair for a worker: \(String(cString: strerror(errno)))") }
    for descriptor in descriptors { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
    #if !canImport(Glibc)
    var on: Int32 = 1
    setsockopt(descriptors[1], SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
    #endif
    return (descriptors[0], descriptors[1])
  }

  /// Sends `signal` to the worker's process group.
  func signal(_ signal: Int32) {
    kill(-pid, signal)
  }

  /// Closes the worker's standard input.
  func closeRequests() {
    if requests >= 0 { close(requests) }
    requests = -1
  }

  /// Waits for the worker to end and closes the parent's ends of its pipes.
  func waitForExit() -> WorkerExit {
    closeRequests()
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    close(events)
    close(output)
    return WorkerExit(waitStatus: status)
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

/// How a worker process ended.
enum WorkerExit: Equatable {
  case exited(Int32)
  case signaled(Int32)

  init(waitStatus status: Int32) {
    let signal = status & 0x7F
    self = signal == 0 ? .exited((status >> 8) & 0xFF) : .signaled(signal)
  }

  /// `signal SIGILL (illegal instruction)` or `exit status 3`.
  var description: String {
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
