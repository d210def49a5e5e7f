import AsyncHarness
import Foundation
import Synchronization

/// Swift concurrency joins the schedule (``WaiterConformance/Checks/swiftConcurrency``): for
/// each way code reaches Swift's executors (a task, a detached task, a child task, an actor
/// hop, the main actor, a yield, a sleep, a continuation resumed by scheduled work), two or
/// three pieces of work race through it under many seeds. Each schedule must give the same
/// order every time, seeds must give different orders, nothing may count as work from
/// outside the schedule (a warning), main-actor work must run on the main thread, and
/// sleeps must end at their virtual deadlines. A toolchain or platform where a path escapes
/// the scheduler fails here, naming the path.
enum SwiftConcurrencyScheduling {
  static let name = "swift concurrency: every path joins the schedule, in a seeded order"

  /// A path through Swift's executors: racing work that notes its steps.
  private struct Path: Sendable {
    let name: String
    let race: @Sendable (_ t: TestContext, _ note: @escaping @Sendable (String) -> Void) async throws -> Void
  }

  private static let paths: [Path] = [
    Path(name: "Task {}") { _, note in
      let first = Task { note("a") }
      let second = Task { note("b") }
      note("body")
      await first.value
      await second.value
    },
    Path(name: "Task.detached") { _, note in
      let first = Task.detached { note("a") }
      let second = Task.detached { note("b") }
      note("body")
      await first.value
      await second.value
    },
    Path(name: "child task") { _, note in
      await withTaskGroup(of: Void.self) { group in
        group.addTask { note("a") }
        group.addTask { note("b") }
        note("body")
      }
    },
    Path(name: "actor hop") { _, note in
      let tally = Tally()
      let first = Task { await tally.note("a", note); note("a back") }
      let second = Task { await tally.note("b", note); note("b back") }
      await first.value
      await second.value
    },
    Path(name: "main actor") { t, note in
      let first = Task { await MainActor.run { mainNote("a", t, note) }; note("a back") }
      let second = Task { await MainActor.run { mainNote("b", t, note) }; note("b back") }
      await first.value
      await second.value
    },
    Path(name: "Task.yield") { _, note in
      let first = Task { note("a0"); await Task.yield(); note("a1") }
      let second = Task { note("b0"); await Task.yield(); note("b1") }
      await first.value
      await second.value
    },
    Path(name: "sleep") { t, note in
      let first = Task { try await Task.sleep(for: .seconds(30)); note("a at \(virtualTime(t))") }
      let second = Task { try await ContinuousClock().sleep(for: .seconds(30)); note("b at \(virtualTime(t))") }
      try await first.value
      try await second.value
    },
    Path(name: "continuation") { _, note in
      let other = Task { note("other") }
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        Task { note("resumer"); continuation.resume() }
      }
      note("resumed")
      await other.value
    },
  ]

  static func check(_ waiter: any Waiter, registry: WaiterRegistry) -> [String] {
    let log = Mutex<[TestID: [String]]>([:])
    let suite = Suite("Conformance") {
      for path in paths {
        Test("\(name): \(path.name)") { t async throws in
          let id = t.id
          try await path.race(t) { step in log.withLock { $0[id, default: []].append(step) } }
        }
      }
    }
    let results: [RecordedRun]
    switch SchedulingDeterminism.run(suite, under: waiter, registry: registry, configure: { configuration in
      configuration.repetitions = 2
      configuration.explorations = 16
      // Where sleeps escape, they run in real time: the limit ends them.
      configuration.timeLimit = .seconds(2)
    }) {
    case .success(let recorded): results = recorded
    case .failure(let problem): return [problem.description]
    }
    var problems: [String] = []
    let orders = log.withLock { $0 }
    for path in paths {
      let runs = results.filter { $0.test.name == "\(name): \(path.name)" }
      guard !runs.isEmpty else {
        problems.append("\(path.name): did not run")
        continue
      }
      if let slowest = runs.map(\.duration).max(), slowest > 1 {
        problems.append("\(path.name): a run took \(slowest) s: its sleeps of 30 s did not run on virtual time")
      }
      let issues = Set(runs.flatMap(\.result.issues).map(\.message))
      if !issues.isEmpty {
        problems.append("\(path.name): recorded \(issues.sorted()) (a warning of outside work: the path escapes the schedule)")
      }
      problems += SchedulingDeterminism.disagreements(among: runs, orders: orders).map { "\(path.name): \($0)" }
      let seeded = Set(runs.map { orders[$0.test] ?? [] })
      if seeded.count < 2 {
        let seeds = Set(runs.map { $0.test.schedule ?? "" }).count
        problems.append("\(path.name): \(seeds) seeds all gave one order (\(seeded.first?.joined(separator: " ") ?? "")): the schedule does not order this path")
      }
      let wrongSteps = seeded.flatMap { $0 }.filter { $0.contains("not on the main thread") || ($0.contains(" at ") && !$0.hasSuffix(" at 30.0 seconds")) }
      if !wrongSteps.isEmpty {
        problems.append("\(path.name): \(Set(wrongSteps).sorted())")
      }
    }
    return problems
  }
}

/// An actor that notes a step in its own turn.
private actor Tally {
  func note(_ step: String, _ note: @Sendable (String) -> Void) { note(step) }
}

/// Notes `step` from main-actor code, saying so when it is not on the main thread.
@MainActor
private func mainNote(_ step: String, _ t: TestContext, _ note: @Sendable (String) -> Void) {
  note(Thread.isMainThread ? step : "\(step) not on the main thread")
}

/// The test's virtual time, when its clock is the scheduler's.
private func virtualTime(_ t: TestContext) -> String {
  (t.clock as? VirtualClock).map { "\($0.now.offset)" } ?? "real time"
}
