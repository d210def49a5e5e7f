import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The worker side of `--isolation worker`: a suites executable started with
/// ``WorkerMain/flag`` runs the steps its parent asks for, one at a time, on its main
/// thread (so blocking waits turn a real main run loop), and writes their events to file
/// descriptor 3.
enum WorkerMain {
  /// The first argument that makes a suites executable a worker.
  static let flag = "--harness-worker"
  /// The descriptor the events go to.
  static let eventDescriptor: Int32 = 3
  /// The environment variable holding the marker line the worker writes to its output as
  /// each test starts.
  static let markerVariable = "ASYNC_HARNESS_WORKER_MARKER"

  /// Serves requests until standard input ends, then exits the process. The end of standard
  /// input while a test runs means the parent is gone: the worker exits at once.
  static func serve(_ suites: [Suite], registry: WaiterRegistry) -> Never {
    let channel = ReportingChannel([
      JSONLinesReporter(descriptor: eventDescriptor, name: "the worker's event channel", closing: false),
    ])
    // A partial line the test printed reaches the parent before the test's end does.
    let events = EventSink { event in
      if case .testEnded = event.kind { fflush(nil) }
      channel.sink.send(event)
    }
    // Output reaches the parent as it is written, so it lands on the test that wrote it and
    // survives a crash.
    StandardStreams.bufferStandardOutputByLine()
    let catalog = WorkerCatalog(suites, registry: registry)
    let requests = RequestReader()
    let executor = InProcessExecutor()
    let marker = ProcessInfo.processInfo.environment[markerVariable].map { Array($0.utf8) + [0x0A] }
    while let line = requests.next() {
      if line.elementsEqual(WorkerRequest.resumeLine.dropLast()) { continue }
      let request: WorkerRequest
      do {
        request = try WorkerRequest(line: line)
      } catch {
        FileHandleOutput.standardError.write("AsyncHarness worker: unreadable request (\(error)): \(String(decoding: line, as: UTF8.self))\n")
        exit(2)
      }
      if let marker {
        fflush(nil)  // a partial line a test printed lands before the marker
        _ = marker.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
      }
      let result: TestResult
      switch catalog.step(for: request) {
      case .success(let step):
        result = executor.run(step, events: events)
      case .failure(let error):
        let id = TestID(suite: request.suite, name: request.test, waiter: request.waiter,
                        repetition: request.repetition, attempt: request.attempt, schedule: request.schedule)
        result = TestResult(verdict: .errored, issues: [Issue(kind: .apiMisused, message: "\(error)")])
        events(.testStarted(id))
        events(.testEnded(id, result, duration: 0))
      }
      if result.verdict.isFailure { requests.dropUntilResumeLine() }
      if (try? channel.checkReporters()) == nil {
        FileHandleOutput.standardError.write("AsyncHarness worker: the parent stopped reading events\n")
        exit(2)
      }
    }
    exit(0)
  }
}

/// The request lines the parent writes on standard input, read on the main thread between
/// tests (no hand-over from another thread). A watcher thread notices the end of the input
/// while a test runs (the parent died or stopped this worker) and exits the process at once.
private final class RequestReader {
  /// Bytes read and not yet returned start at `consumed`.
  private var pending: [UInt8] = []
  private var consumed = 0
  private var ended = false
  private var buffer = [UInt8](repeating: 0, count: 65536)

  init() {
    Thread.detachNewThread {
      // A pipe whose writer is gone reports POLLHUP, read or not.
      var input = pollfd(fd: 0, events: 0, revents: 0)
      while poll(&input, 1, -1) < 0 && errno == EINTR {}
      if runningATest.load(ordering: .acquiring) { _exit(0) }
    }
  }

  /// Drops the lines up to the next ``WorkerRequest/resumeLine``: the requests the parent
  /// sent ahead of a failing test.
  func dropUntilResumeLine() {
    let resume = WorkerRequest.resumeLine.dropLast()
    while let line = next(), !line.elementsEqual(resume) {}
    runningATest.store(false, ordering: .releasing)
  }

  /// The next request line, without its newline, waiting for it; `nil` when standard input
  /// ended.
  func next() -> ArraySlice<UInt8>? {
    runningATest.store(false, ordering: .releasing)
    while true {
      if let newline = pending[consumed...].firstIndex(of: 0x0A) {
        let line = pending[consumed..<newline]
        consumed = newline + 1
        runningATest.store(true, ordering: .releasing)
        return line
      }
      if ended { return nil }
      pending.removeFirst(consumed)
      consumed = 0
      let count = read(0, &buffer, buffer.count)
      if count < 0 && errno == EINTR { continue }
      if count <= 0 { ended = true } else { pending += buffer[..<count] }
    }
  }
}

/// Whether the worker is running a test (the end of its input then means its parent is gone).
private let runningATest = Atomic<Bool>(false)
