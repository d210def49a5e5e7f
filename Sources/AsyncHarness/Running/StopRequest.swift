import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A request to stop a run early, made by SIGINT (Ctrl-C) or SIGTERM: the runner starts no
/// more tests, a worker executor stops the worker running the current one (which ends
/// as an ``Issue/Kind/interrupted`` error), and every report is finished with what ran.
public final class StopRequest: Sendable {
  private let signalNumber = Atomic<Int32>(0)
  /// Readable once a stop is requested: executors waiting on other descriptors poll it.
  let descriptor: Int32
  private let wakeDescriptor: Int32

  /// Creates a request that nothing has made yet.
  public init() {
    var ends: [Int32] = [0, 0]
    if pipe(&ends) != 0 { ends = [-1, -1] }
    for end in ends where end >= 0 { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    descriptor = ends[0]
    wakeDescriptor = ends[1]
  }

  /// The signal that requested the stop, if one did.
  public var signal: Int32? {
    let number = signalNumber.load(ordering: .acquiring)
    return number == 0 ? nil : number
  }

  /// Requests the stop on behalf of `signal`; only the first request counts.
  public func request(signal: Int32) {
    guard signalNumber.compareExchange(expected: 0, desired: signal, ordering: .acquiringAndReleasing).exchanged else { return }
    var byte: UInt8 = 1
    _ = write(wakeDescriptor, &byte, 1)
  }

  /// Handles SIGINT and SIGTERM for the rest of the process: the first one requests this
  /// stop (and says so on standard error), a second one exits at once with status 128 +
  /// signal. A signal the process ignores (started with `nohup`) stays ignored.
  public func handleInterrupts() {
    for number in [SIGINT, SIGTERM] {
      let previous = ignore(number)
      if previous.map({ unsafeBitCast($0, to: Int.self) }) == unsafeBitCast(SIG_IGN, to: Int.self) { continue }
      Self.sources.withLock { sources in
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler { [self] in
          if self.signal != nil { exit(128 + number) }
          FileHandleOutput.standardError.write(
            "\n\(ProcessEnding.name(of: number)): stopping the run after reporting what ran; send it again to exit at once\n")
          request(signal: number)
        }
        // The source is armed on the manager thread after `resume()` returns; until then
        // the ignored signal would be lost.
        let armed = DispatchSemaphore(value: 0)
        source.setRegistrationHandler { armed.signal() }
        source.resume()
        _ = armed.wait(timeout: .now() + .seconds(2))
        sources.append(source)
      }
    }
  }

  /// Ignores `number` (a dispatch source then receives it) and returns its previous handler.
  private func ignore(_ number: Int32) -> (@convention(c) (Int32) -> Void)? {
    #if canImport(Glibc)
    Glibc.signal(number, SIG_IGN)
    #else
    Darwin.signal(number, SIG_IGN)
    #endif
  }

  /// Keeps the signal sources alive for the life of the process.
  private static let sources = Mutex<[any DispatchSourceSignal]>([])
}
