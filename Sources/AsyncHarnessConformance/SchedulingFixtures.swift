import AsyncHarness
import Foundation
import Synchronization

// MARK: A wait no pending work can satisfy; virtual time

extension Fixture {
  /// The optional rules of a strategy that runs the test's queues itself
  /// (``WaiterConformance/Checks/scheduling``).
  static let scheduling: [Fixture] = [
    Fixture(Test("scheduling: a wait no pending work can satisfy ends at once") { t in
      let never = t.expectation("never fulfilled")
      t.background.async { t.main.async {} }
      try t.wait(for: never, timeout: .seconds(60))
    }, verdict: .failed, messages: ["Exceeded timeout of 60 seconds, with unfulfilled expectations: \"never fulfilled\""],
       maximumDuration: 5),
    Fixture(Test("scheduling: a probe no pending work can satisfy ends at once") { t in
      let flag = Atomic<Bool>(false)
      t.queue("io").async {}
      try t.wait(until: "never set", timeout: .seconds(60)) { flag.load(ordering: .acquiring) }
    }, verdict: .failed, messages: ["Exceeded timeout of 60 seconds waiting until \"never set\""], maximumDuration: 5),
    Fixture(Test("scheduling: an async wait no pending work can satisfy ends at once") { t async throws in
      let never = t.expectation("never fulfilled")
      try await t.wait(for: never, timeout: .seconds(60))
    }, verdict: .failed, messages: ["Exceeded timeout of 60 seconds"], maximumDuration: 5),
    Fixture(Test("scheduling: a 60 s delay runs on virtual time") { t in
      let retried = t.expectation("retried")
      t.queue("retry").asyncAfter(.seconds(60)) { retried.fulfill() }
      try t.wait(for: retried, timeout: .seconds(120))
    }, verdict: .passed, maximumDuration: 5, extra: { observed in
      observed.result.issues.isEmpty ? [] : ["recorded \(observed.result.issues.map(\.message))"]
    }),
  ]
}

// MARK: Determinism

/// The same schedule gives the same order of work and the same events every time: a test
/// whose work on three queues (some sent by other work, some delayed) is logged runs
/// several times under each of a few schedules.
enum SchedulingDeterminism {
  static let name = "scheduling: the same schedule gives the same order and events"

  static func check(_ waiter: any Waiter, registry: WaiterRegistry) -> [String] {
    let log = Mutex<[TestID: [String]]>([:])
    let suite = Suite("Conformance") {
      Test(name) { t in
        let done = t.expectation("done", expectedFulfillmentCount: 9)
        let queues = [t.main, t.background, t.queue("io")]
        let id = t.id
        @Sendable func note(_ text: String) { log.withLock { $0[id, default: []].append(text) } }
        for (index, queue) in queues.enumerated() {
          queue.async { note("\(index)a"); done.fulfill() }
          queue.asyncAfter(.milliseconds(index)) { note("\(index)d"); done.fulfill() }
          queue.async {
            note("\(index)b")
            queues[(index + 1) % 3].async { note("\(index)c"); done.fulfill() }
          }
        }
        try t.wait(for: done)
      }
    }
    let results: [RecordedRun]
    switch run(suite, under: waiter, registry: registry, configure: { configuration in
      configuration.repetitions = 5
      configuration.explorations = 4
    }) {
    case .success(let recorded): results = recorded
    case .failure(let problem): return [problem.description]
    }
    var problems: [String] = []
    if results.isEmpty { problems.append("did not run") }
    for (test, result, _) in results where result.verdict != .passed {
      problems.append("\(test) ended \(result.verdict.rawValue): \(result.issues.map(\.message))")
    }
    problems += disagreements(among: results, orders: log.withLock { $0 })
    // Verdicts and issues; the steps (the trace) are the orders compared above.
    for (schedule, runs) in Dictionary(grouping: results, by: { $0.test.schedule ?? "" }).sorted(by: { $0.key < $1.key }) {
      let outcomes = Set(runs.map { TestResult(verdict: $0.result.verdict, reason: $0.result.reason, issues: $0.result.issues) })
      if outcomes.count > 1 {
        problems.append("runs under schedule \(schedule.isEmpty ? "(none)" : schedule) gave different results: \(outcomes)")
      }
    }
    return problems
  }

  /// Runs `suite` under `waiter` with the settings `configure` makes; its results, or why the
  /// run could not start.
  static func run(_ suite: Suite, under waiter: any Waiter, registry: WaiterRegistry,
                  configure: (inout Configuration) -> Void) -> Result<[RecordedRun], RunProblem> {
    var configuration = Configuration()
    configuration.waiters = .named(waiter.name)
    configure(&configuration)
    let recorder = EventRecorder()
    do {
      try Runner(suites: [suite], configuration: configuration, registry: registry, reporters: [recorder]).run()
    } catch {
      return .failure(RunProblem(description: "the run could not start: \(error)"))
    }
    return .success(recorder.results)
  }

  /// The runs under one schedule (the same token, or none) that noted different orders of
  /// steps, one problem a schedule.
  static func disagreements(among runs: [RecordedRun], orders: [TestID: [String]]) -> [String] {
    Dictionary(grouping: runs, by: { $0.test.schedule ?? "" }).sorted(by: { $0.key < $1.key }).compactMap { schedule, runs in
      let distinct = Set(runs.map { orders[$0.test] ?? [] })
      guard distinct.count > 1 else { return nil }
      return "\(runs.count) runs under schedule \(schedule.isEmpty ? "(none)" : schedule) gave \(distinct.count) orders: \(distinct.map { $0.joined(separator: " ") }.sorted())"
    }
  }
}

/// One test's run, as an ``EventRecorder`` saw it end.
typealias RecordedRun = (test: TestID, result: TestResult, duration: Double)

/// Why a conformance run could not start.
struct RunProblem: Error, CustomStringConvertible {
  let description: String
}
