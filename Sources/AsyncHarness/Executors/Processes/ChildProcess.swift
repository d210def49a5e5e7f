import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A process that runs tests for this one, started with `posix_spawn` as the leader of a
/// process group of its own, its standard output and standard error on one pipe to this
/// process (so their order is kept), and nothing else of this process open but its standard
/// input and the descriptors handed to it. A worker process (``WorkerProcess``) and a test
/// bundle's worker (``BundleExecutor``) are both one.
///
/// Report files and every other descriptor stay behind: on Linux the spawn closes them
/// (`posix_spawn_file_actions_addclosefrom_np`, glibc 2.34), on macOS the spawn closes what
/// it is not told to keep (`POSIX_SPAWN_CLOEXEC_DEFAULT`). Leading its own group, a stopped
/// process takes whatever it started with it, and Ctrl-C in a terminal reaches only this
/// process, which decides.
final class ChildProcess {
  let pid: pid_t
  /// The read end of the pipe carrying its standard output and standard error.
  let output: Int32

  /// Starts `executable` with `arguments`, this process's environment and `environment`,
  /// handing over each of `descriptors` as its `to` descriptor, in `directory` when one is
  /// given (else in this process's). The Swift runtime's crash backtracer is turned off
  /// unless `SWIFT_BACKTRACE` is set (it takes seconds to symbolicate, and this process
  /// reports the crash itself), or unless `keepsBacktracer`: a process that prints its own
  /// crash, as SwiftPM and a test bundle's listing do, keeps it as the environment says.
  init(executable: String, arguments: [String], environment extra: [String: String],
       handing descriptors: [(descriptor: Int32, to: Int32)] = [], directory: String? = nil,
       keepsBacktracer: Bool = false) throws {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    if let directory { try Self.changeDirectory(to: directory, in: &actions) }
    let output = try Self.makePipe()
    posix_spawn_file_actions_adddup2(&actions, output.write, 1)
    posix_spawn_file_actions_adddup2(&actions, output.write, 2)
    for handed in descriptors { posix_spawn_file_actions_adddup2(&actions, handed.descriptor, handed.to) }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var flags = Int32(POSIX_SPAWN_SETPGROUP)
    #if canImport(Darwin)
    // Only what the actions name is open in the child; standard input is kept as it is.
    flags |= Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)
    posix_spawn_file_actions_addinherit_np(&actions, 0)
    #else
    Self.closeFrom((descriptors.map(\.to) + [2]).max()! + 1, in: &actions)
    #endif
    posix_spawnattr_setflags(&attributes, Int16(flags))
    posix_spawnattr_setpgroup(&attributes, 0)

    var environment = ProcessInfo.processInfo.environment
    if environment["SWIFT_BACKTRACE"] == nil && !keepsBacktracer { environment["SWIFT_BACKTRACE"] = "enable=no" }
    environment.merge(extra) { $1 }
    let argv = [executable] + arguments
    var pid: pid_t = 0
    let status = withCStrings(argv) { argv in
      withCStrings(environment.map { "\($0.key)=\($0.value)" }) { envp in
        posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
      }
    }
    close(output.write)
    guard status == 0 else {
      close(output.read)
      throw WorkerError("cannot start \(executable): \(String(cString: strerror(status)))")
    }
    self.pid = pid
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

  private typealias AddChangeDirectory = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?,
                                                         UnsafePointer<CChar>?) -> Int32
  /// glibc's `posix_spawn_file_actions_addchdir_np` (2.29 and later), which Swift's Glibc
  /// module does not declare; `nil` on an older C library.
  private static let addChangeDirectory: AddChangeDirectory? = dlsym(UnsafeMutableRawPointer(bitPattern: 0),
                                                                     "posix_spawn_file_actions_addchdir_np")
    .map { unsafeBitCast($0, to: AddChangeDirectory.self) }

  /// Has the started process begin in `directory`.
  /// - Throws: ``WorkerError`` on a C library too old to say so.
  private static func changeDirectory(to directory: String, in actions: inout posix_spawn_file_actions_t) throws {
    guard let addChangeDirectory else {
      throw WorkerError("cannot start a process in \(directory): this C library lacks posix_spawn_file_actions_addchdir_np")
    }
    _ = addChangeDirectory(&actions, directory)
  }
  #else
  /// Has the started process begin in `directory`.
  private static func changeDirectory(to directory: String, in actions: inout posix_spawn_file_actions_t) throws {
    _ = posix_spawn_file_actions_addchdir_np(&actions, directory)
  }
  #endif

  /// Sends `signal` to the process's group: the process and whatever it started.
  func signal(_ signal: Int32) {
    kill(-pid, signal)
  }

  /// Waits for the process to end and closes the read end of its output pipe.
  func waitForExit() -> ProcessEnding {
    // A blocking wait returns only once the process is reaped.
    let ending = self.ending(waiting: true) ?? .exited(0)
    if outputOpen {
      outputOpen = false
      close(output)
    }
    return ending
  }

  private var reaped: ProcessEnding?
  private var outputOpen = true

  /// Everything it writes to its output pipe, once every process holding the pipe closed it
  /// (it and whatever it started), read in this thread.
  func readOutputToEnd() -> [UInt8] {
    var buffer = ReadBuffer()
    var bytes: [UInt8] = []
    while true {
      let count = buffer.read(from: output)
      if count > 0 {
        bytes += buffer.prefix(count)
      } else if count == 0 || errno != EINTR {
        return bytes
      }
    }
  }

  /// How the process ended, once it has (it is reaped then, once), waiting for that or not;
  /// `nil` while it runs. Its output pipe stays open: a process it started may still write
  /// there.
  func ending(waiting: Bool) -> ProcessEnding? {
    if let reaped { return reaped }
    var status: Int32 = 0
    var waited: pid_t
    repeat { waited = waitpid(pid, &status, waiting ? 0 : WNOHANG) } while waited < 0 && errno == EINTR
    guard waited == pid else { return nil }
    self.reaped = ProcessEnding(waitStatus: status)
    return self.reaped
  }

  /// A descriptor that polls readable once the process has exited (Linux's pidfd, glibc 2.36
  /// and later), which the caller closes; `nil` where there is none: then poll with a timeout
  /// and ask ``ending(waiting:)``.
  func exitDescriptor() -> Int32? {
    #if canImport(Glibc)
    guard let open = Self.pidfdOpen else { return nil }
    let descriptor = open(pid, 0)
    guard descriptor >= 0 else { return nil }
    _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
    return descriptor
    #else
    return nil
    #endif
  }

  /// The read end of the output pipe, made non-blocking: a read returns what is there.
  func readOutputWithoutBlocking() {
    _ = fcntl(output, F_SETFL, fcntl(output, F_GETFL) | O_NONBLOCK)
  }

  #if canImport(Glibc)
  private typealias PidfdOpen = @convention(c) (pid_t, UInt32) -> Int32
  /// glibc's `pidfd_open`, which Swift's Glibc module does not declare.
  private static let pidfdOpen: PidfdOpen? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pidfd_open")
    .map { unsafeBitCast($0, to: PidfdOpen.self) }
  #endif

  /// A pipe whose ends are closed in processes this one starts, unless handed over.
  static func makePipe() throws -> (read: Int32, write: Int32) {
    var descriptors: [Int32] = [0, 0]
    let made = pipe(&descriptors)
    if made == 0 { for descriptor in descriptors { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) } }
    guard made == 0 else { throw WorkerError("cannot make a pipe for a worker: \(String(cString: strerror(errno)))") }
    return (descriptors[0], descriptors[1])
  }
}

/// Calls `body` with a NULL-terminated array of C strings.
private func withCStrings<Result>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> Result) -> Result {
  let pointers = strings.map { strdup($0) } + [nil]
  defer { for pointer in pointers { free(pointer) } }
  return body(pointers)
}
