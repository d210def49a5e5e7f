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

  /// Serves requests until standard input ends, then exits the process. The end of standard
  /// input while a test runs means the parent is gone: the worker exits at once.
  static func serve(_ suites: [Suite], registry: WaiterRegistry) -> Never {
    let channel = ReportingChannel([
      JSONLinesReporter(descriptor: eventDescriptor, name: "the worker's event channel", closing: false),
    ])
    // Output reaches the parent as it is written, so it lands on the test that wrote it and
    // survives a crash.
    StandardStreams.bufferStandardOutputByLine()
    let requests = RequestQueue()
    Thread.detachNewThread { requests.readStandardInput() }
    let executor = InProcessExecutor()
    while let line = requests.next() {
      let request: WorkerRequest
      do {
        request = try JSONDecoder().decode(WorkerRequest.self, from: Data(line.utf8))
      } catch {
        FileHandleOutput.standardError.write("AsyncHarness worker: unreadable request: \(line)\n")
        exit(2)
      }
      switch request.step(in: suites, registry: registry) {
      case .success(let step):
        _ = executor.run(step, events: channel.sink)
      case .failure(let error):
        let id = TestID(suite: request.suite, name: request.test, waiter: request.waiter,
                        repetition: request.repetition, attempt: request.attempt)
        channel.sink(.testStarted(id))
        channel.sink(.testEnded(id, TestResult(verdict: .errored, issues: [
          Issue(kind: .apiMisused, message: "\(error)"),
        ]), duration: 0))
      }
      if (try? channel.checkReporters()) == nil {
        FileHandleOutput.standardError.write("AsyncHarness worker: the parent stopped reading events\n")
        exit(2)
      }
    }
    exit(0)
  }
}

/// The lines the parent writes on standard input, read on a thread of their own so that the
/// end of the input is noticed even while a test runs.
private final class RequestQueue: Sendable {
  private let lines = Mutex<(pending: [String], ended: Bool)>(([], false))
  private let available = DispatchSemaphore(value: 0)

  /// Reads lines until the end of standard input. When it ends while a test runs (the
  /// parent died or stopped this worker), the process exits at once.
  func readStandardInput() {
    while let line = Swift.readLine(strippingNewline: true) {
      lines.withLock { $0.pending.append(line) }
      available.signal()
    }
    lines.withLock { $0.ended = true }
    available.signal()
    if isRunningATest { _exit(0) }
  }

  private let running = Atomic<Bool>(false)
  private var isRunningATest: Bool { running.load(ordering: .acquiring) }

  /// The next request, waiting for it; `nil` when standard input ended.
  func next() -> String? {
    running.store(false, ordering: .releasing)
    while true {
      let next = lines.withLock { state -> String?? in
        if !state.pending.isEmpty { return .some(state.pending.removeFirst()) }
        return state.ended ? .some(nil) : nil
      }
      if let next {
        running.store(next != nil, ordering: .releasing)
        return next
      }
      available.wait()
    }
  }
}
