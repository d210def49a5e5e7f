import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The worker side of `--isolation worker`: a suites executable started with
/// ``WorkerMain/flag`` runs the tests its parent asks for on its private channel
/// (``WorkerChannel``), one at a time, on its main thread (so blocking waits turn a real main
/// run loop), or `async` tests side by side as tasks (``SideBySideTests``), and streams their
/// issues back on the same channel.
///
/// Test code sees an ordinary process: standard input is the one the run was given,
/// standard output and standard error go to its parent as the test's output, and the
/// channel is out of reach (close-on-exec, above the descriptors a test opens). Before each
/// test, descriptors 0, 1 and 2 are put back as the worker started with them, so a test that
/// closes or redirects them changes nothing for the next one.
enum WorkerMain {
  /// The first argument that makes a suites executable a worker.
  static let flag = "--harness-worker"
  /// The environment variable holding the marker the worker writes to its output as each
  /// test starts, followed by the test's number in the worker and a newline.
  static let markerVariable = "ASYNC_HARNESS_WORKER_MARKER"

  /// Serves requests until told to stop (or the channel ends), then exits the process.
  static func serve(_ suites: [Suite], registry: WaiterRegistry) -> Never {
    let channel: WorkerChannel
    do {
      channel = try WorkerChannel.adopt()
    } catch {
      FileHandleOutput.standardError.write("AsyncHarness worker: \(error)\n")
      exit(2)
    }
    let marker = ProcessInfo.processInfo.environment[markerVariable]
    unsetenv(markerVariable)
    // Output reaches the parent as it is written, so it lands on the test that wrote it and
    // survives a crash.
    StandardStreams.bufferStandardOutputByLine()
    let streams = StandardStreams.Saved()
    let catalog = WorkerCatalog(suites, registry: registry)
    let executor = InProcessExecutor.inWorker
    var leaks = LeakCheck()
    let sideBySide = SideBySideTests(channel: channel)
    CrashNotice.install(channel: channel.descriptor)
    var requests = WorkerRequests(channel: channel, sideBySide: sideBySide)
    var paused = false
    /// The tests started, each after its numbered marker (``MarkedOutput``).
    var testsStarted = 0
    while let request = requests.next() {
      switch request {
      case .stop:
        exit(0)
      case .resume:
        paused = false
      case .start(let request):
        switch catalog.plannedTest(for: request) {
        case .success(let planned) where planned.runsSideBySide:
          sideBySide.start(planned, ref: request.ref, executor: executor)
        case .success:
          channel.send(.cannotRun(request.id, reason: "\(request.id.path) cannot run side by side with other tests: "
            + "only an async test of a real-time strategy can"))
        case .failure(let error):
          channel.send(.cannotRun(request.id, reason: error.description))
        }
      case .run(let request):
        if paused { continue }
        sideBySide.awaitNoneRunning()
        channel.testStarts()
        streams.restore()
        testsStarted += 1
        if let marker {
          fflush(nil)  // a partial line a test printed lands before the marker
          try? writeWhole(Array("\(marker)\(testsStarted)\n".utf8), to: 1, path: "standard output")
        }
        switch catalog.plannedTest(for: request) {
        case .success(let planned):
          let failed = Atomic(false)
          let events = EventSink { event in
            if case .issueRecorded(planned.id, let issue) = event.kind, issue.isFailure { failed.store(true, ordering: .relaxed) }
            channel.send(event, ref: request.ref)
          }
          let canary = PoolCanary(countingPoolJobs: leaks.countsPoolJobs)
          let (end, exceededTimeLimit) = executor.attempt(planned, events: events, afterAsyncCode: canary.send)
          // A test past its limit retires its worker anyway, and its body may hold the pool.
          let leaked = exceededTimeLimit ? (messages: [], retire: false) : leaks.findings(canary: canary)
          for message in leaked.messages {
            events(.issueRecorded(planned.id, Issue(kind: .leaked, message: message, sourceLocation: planned.test.sourceLocation)))
          }
          // A partial line the test printed reaches the parent before the test's end does.
          fflush(nil)
          let (duration, trace) = if case .returned(let duration, let trace) = end { (duration, trace) } else { (0.0, nil) }
          paused = failed.load(ordering: .relaxed)
          channel.send(.returned(planned.id, duration: duration, trace: trace, paused: paused,
                                 retire: exceededTimeLimit ? .exceededTimeLimit : leaked.retire ? .leakedWork : nil))
        case .failure(let error):
          paused = true
          channel.send(.cannotRun(request.id, reason: error.description))
        }
      }
    }
    exit(0)
  }
}

/// The tests a worker can run, found by their position among the suites it was given:
/// the same suites, built by the same code, as its parent's.
struct WorkerCatalog {
  private let catalog: Catalog
  private let registry: WaiterRegistry

  init(_ suites: [Suite], registry: WaiterRegistry) {
    catalog = Catalog(suites: suites)
    self.registry = registry
  }

  /// The test `request` names, or why there is none.
  func plannedTest(for request: WorkerRunRequest) -> Result<Runner.PlannedTest, WorkerError> {
    let position = request.position
    let id = request.id
    let groups = catalog.groups
    guard groups.indices.contains(position.suite), groups[position.suite].tests.indices.contains(position.test) else {
      return .failure(WorkerError("the worker has no test \(position.test + 1) in suite \(position.suite + 1) "
        + "(\(id.path)): its suites differ from its parent's"))
    }
    let group = groups[position.suite]
    let test = group.tests[position.test]
    guard group.name == id.suite, test.name == id.name else {
      return .failure(WorkerError("the worker's suites differ from its parent's: test \(position.test + 1) of suite "
        + "\(position.suite + 1) is \(group.name)/\(test.name) in the worker, \(id.path) in the parent; suites must be "
        + "built the same way in every process"))
    }
    guard let waiter = registry.waiter(named: id.host) else {
      return .failure(WorkerError("the worker has no waiter strategy \(id.host)"))
    }
    return .success(Runner.PlannedTest(
      group: group, test: test, host: .waiter(waiter), id: id, position: position,
      defaultTimeout: .seconds(request.defaultTimeout), timeLimit: request.timeLimit.map { .seconds($0) },
      schedule: id.schedule.flatMap { ScheduleToken($0)?.schedule }, jitter: request.jitterSeed.map(Jitter.init(seed:)),
      retries: 0, reportsWaits: request.reportsWaits)) // The parent's runner decides retries.
  }
}
