import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Names the test whose code crashes a worker running tests side by side: each such test's
/// task carries its notice (a task-local, inherited by the tasks it starts, and carried by the
/// work it sends to the test's queues, ``AsyncQueue``), and a handler of the signals a crash
/// raises (a trap, a bad access, `abort`) writes the notice of the code on the crashing thread
/// to the channel, then lets the signal end the process as it would have. The parent then
/// ends that test as crashed and runs the others again side by side, in one round: a crash
/// on a thread that runs none of a test's code (a raw `DispatchQueue`'s callback, a thread
/// of its own) names no one, and the tests then run again in halves until the one that
/// crashes runs alone.
///
/// The handler reads a task-local and writes bytes made when the test started: it takes no
/// lock and allocates nothing.
final class CrashNotice: Sendable {
  /// The notice of the test whose task runs this code, if any.
  @TaskLocal static var current: CrashNotice?

  /// The line written: a ``WorkerReply/crashing(ref:)`` reply, after a newline that ends any
  /// line another thread was writing.
  let line: [UInt8]

  init(ref: Int) {
    line = [0x0A] + WorkerReply.crashing(ref: ref).line
  }

  /// `work`, to run with the notice of the code that sends it, when that code has one.
  static func carrying(_ work: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
    guard let notice = current else { return work }
    return { $current.withValue(notice, operation: work) }
  }

  /// The channel the handler writes to.
  private static let channel = Atomic<Int32>(-1)

  /// The signals a crash raises.
  private static let signals = [SIGILL, SIGTRAP, SIGABRT, SIGSEGV, SIGBUS, SIGFPE]

  /// Installs the handler, which writes to `channel`.
  static func install(channel descriptor: Int32) {
    channel.store(descriptor, ordering: .releasing)
    var action = sigaction()
    #if canImport(Glibc)
    action.__sigaction_handler.sa_handler = handle
    #else
    action.__sigaction_u.__sa_handler = handle
    #endif
    // Reset to the default as it runs, so raising the signal again ends the process with it.
    action.sa_flags = Int32(truncatingIfNeeded: UInt32(truncatingIfNeeded: SA_RESETHAND) | UInt32(truncatingIfNeeded: SA_NODEFER))
    sigemptyset(&action.sa_mask)
    for signal in signals { sigaction(signal, &action, nil) }
  }

  private static let handle: @convention(c) (Int32) -> Void = { signal in
    let descriptor = CrashNotice.channel.load(ordering: .acquiring)
    if descriptor >= 0, let notice = CrashNotice.current {
      notice.line.withUnsafeBytes { _ = write(descriptor, $0.baseAddress, $0.count) }
    }
    raise(signal)
  }
}
