import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The temporary files this process is writing beside its reports, so that no run leaves
/// `.NAME.body.tmp-*` files behind.
///
/// A file is removed when its writer goes away, also when the run stops on an error. The files
/// still registered are removed when the process calls `exit` or receives SIGINT (Ctrl-C),
/// SIGTERM or SIGHUP; the signal is then delivered again with the handling the process had
/// before, so it still ends the process as it would have. A process that crashes or is killed
/// with SIGKILL cannot clean up: ``removeStale(of:in:olderThan:)`` removes its files on the
/// next run that writes the same report.
enum TemporaryFiles {
  private static let paths = Mutex<Set<String>>([])

  /// Registers `path`, installing the exit and signal handlers on first use.
  static func add(_ path: String) {
    _ = handlersInstalled
    paths.withLock { _ = $0.insert(path) }
  }

  /// Forgets `path`: it was renamed into place or removed.
  static func remove(_ path: String) {
    paths.withLock { _ = $0.remove(path) }
  }

  /// Removes the temporary files of reports named `names` in `directory` (any
  /// ``XMLWriter/temporaryName(for:)`` of them) last modified before `start`: left by a run
  /// that crashed or was killed. Files this process is writing are never touched.
  static func removeStale(of names: [String], in directory: String, olderThan start: Date) {
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
    let patterns = names.map { XMLWriter.temporaryName(for: $0) }
    let ours = paths.withLock { $0 }
    for entry in entries where patterns.contains(where: { matches(entry, $0) }) {
      let path = "\(directory)/\(entry)"
      guard !ours.contains(path),
            let modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date,
            modified < start
      else { continue }
      unlink(path)
    }
  }

  /// Whether `name` is `pattern` with its trailing `XXXXXX` replaced by six characters.
  private static func matches(_ name: String, _ pattern: String) -> Bool {
    let prefix = pattern.dropLast(6)
    return name.utf8.count == pattern.utf8.count && name.hasPrefix(prefix)
  }

  private static func removeAll() {
    for path in paths.withLock({ $0 }) { unlink(path) }
  }

  private static let handlersInstalled: Void = {
    atexit { TemporaryFiles.removeAll() }
    for number in [SIGINT, SIGTERM, SIGHUP] {
      // An ignored signal (nohup) stays ignored, and one the process already handles (a
      // suites executable stops its run on SIGINT and SIGTERM, then calls `exit`, which
      // removes the files) keeps its handler: replacing it would silence it.
      guard currentHandler(of: number) == address(SIG_DFL) else { continue }
      let previous = signal(number, SIG_IGN)
      signalSources.withLock { sources in
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler {
          removeAll()
          signal(number, previous)
          kill(getpid(), number)  // to the process: dispatch threads block signals
        }
        // The source is armed on the manager thread after `resume()` returns; until then the
        // ignored signal would be lost. Wait (briefly) until it is armed.
        let armed = DispatchSemaphore(value: 0)
        source.setRegistrationHandler { armed.signal() }
        source.resume()
        _ = armed.wait(timeout: .now() + .seconds(2))
        sources.append(source)
      }
    }
  }()

  /// The address of the handler `number` has now, read without changing it.
  private static func currentHandler(of number: Int32) -> Int {
    var current = sigaction()
    sigaction(number, nil, &current)
    #if canImport(Glibc)
    return address(current.__sigaction_handler.sa_handler)
    #else
    return address(current.__sigaction_u.__sa_handler)
    #endif
  }

  /// A signal handler's address, to compare handlers (C function pointers are not Equatable).
  private static func address(_ handler: (@convention(c) (Int32) -> Void)?) -> Int {
    handler.map { unsafeBitCast($0, to: Int.self) } ?? 0
  }

  /// Keeps the signal sources alive for the life of the process.
  private static let signalSources = Mutex<[any DispatchSourceSignal]>([])
}
