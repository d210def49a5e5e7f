import AsyncHarness
import Foundation
import Synchronization

/// Checks a `Waiter` against the contract every strategy keeps.
///
/// It runs a fixture suite under the waiter, in-process, and compares each fixture's
/// verdict, message and timing with what the contract demands: waits end when fulfilled
/// from another thread or from the main queue; timeouts fail with XCTest's wording;
/// inverted, counted and ordered expectations behave as in XCTest; a failing callback ends
/// the wait at once, while a soft failure the test recorded before the wait does not; a
/// probe is judged by the evaluation that ended its wait; a wait decided before it begins
/// is not misuse, even inside a main-queue callout; a late fulfillment is reported against
/// its own test and satisfies nothing later; misuse is an issue, not a crash; waiting burns
/// no CPU.
///
/// Authors of a strategy run it from a test on the main thread (a synchronous XCTest
/// method, or a suites executable):
///
/// ```swift
/// func testMyWaiterKeepsTheContract() {
///   let report = WaiterConformance.run(MyWaiter())
///   XCTAssertEqual(report.failures, [])
/// }
/// ```
public enum WaiterConformance {
  /// The outcome of a conformance run.
  public struct Report: Sendable, CustomStringConvertible {
    /// The waiter's name.
    public var waiter: String
    /// The checks that ran.
    public var checked: [String]
    /// One line for each broken rule; empty when the waiter keeps the contract.
    public var failures: [String]

    /// What the run found: the number of checks passed, or each broken rule on a line of its own.
    public var description: String {
      failures.isEmpty
        ? "\(waiter): \(checked.count) conformance checks passed"
        : "\(waiter): \(failures.count) problems in \(checked.count) conformance checks:\n  " + failures.joined(separator: "\n  ")
    }
  }

  /// Which rules a conformance run checks.
  public struct Checks: OptionSet, Sendable {
    /// The checks as bits.
    public let rawValue: Int
    /// Creates a set of checks from its bits.
    /// - Parameter rawValue: The bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The contract every strategy keeps.
    public static let contract = Checks(rawValue: 1)
    /// The rules of a strategy that runs the test's queues itself (the scheduled
    /// strategy): the same schedule gives the same order and the same events every time; a
    /// wait that no pending work can satisfy ends at once, whatever its timeout; delayed
    /// work runs on virtual time, so a long delay costs nothing.
    public static let scheduling = Checks(rawValue: 2)
    /// The rules of a scheduling strategy that also takes Swift concurrency into its
    /// schedule (the scheduled strategy, on Swift 6.3 and later): tasks, detached tasks, child
    /// tasks, actor hops, the main actor, yields, sleeps and continuations resumed by
    /// scheduled work all run in a seeded order, the same every time, without a warning of
    /// outside work; sleeps end at their virtual deadlines, main-actor work runs on the main
    /// thread. Fails, naming the path, on a toolchain where a path escapes the schedule.
    public static let swiftConcurrency = Checks(rawValue: 4)
  }

  /// Runs the checks against `waiter` (the contract every strategy keeps, by default). Call
  /// on the main thread.
  ///
  /// ```swift
  /// XCTAssertEqual(WaiterConformance.run(MyScheduler(), checks: [.contract, .scheduling]).failures, [])
  /// ```
  public static func run(_ waiter: any Waiter, checks: Checks = .contract) -> Report {
    let recorder = EventRecorder()
    var configuration = Configuration()
    configuration.waiters = .named(waiter.name)
    configuration.defaultTimeout = .seconds(5)
    let registry = (try? WaiterRegistry([waiter])) ?? WaiterRegistry.builtIn
    let fixtures = (checks.contains(.contract) ? Fixture.all : []) + (checks.contains(.scheduling) ? Fixture.scheduling : [])
    let suite = Suite("Conformance", waiter: waiter) {
      fixtures.map(\.test)
    }
    var failures: [String] = []
    do {
      try Runner(suites: [suite], configuration: configuration, registry: registry, reporters: [recorder]).run()
    } catch {
      failures.append("the run could not start: \(error)")
    }
    let results = Dictionary(recorder.results.map { ($0.test.name, $0) }, uniquingKeysWith: { first, _ in first })
    for fixture in fixtures {
      guard let (id, result, duration) = results[fixture.test.name] else {
        failures.append("\(fixture.test.name): did not run")
        continue
      }
      let problems = fixture.check(Observed(result: result, duration: duration,
                                            lateIssues: recorder.lateIssues(of: id)))
      failures += problems.map { "\(fixture.test.name): \($0)" }
    }
    var checked = fixtures.map(\.test.name)
    if checks.contains(.scheduling) {
      checked.append(SchedulingDeterminism.name)
      failures += SchedulingDeterminism.check(waiter, registry: registry).map { "\(SchedulingDeterminism.name): \($0)" }
    }
    if checks.contains(.swiftConcurrency) {
      checked.append(SwiftConcurrencyScheduling.name)
      failures += SwiftConcurrencyScheduling.check(waiter, registry: registry).map { "\(SwiftConcurrencyScheduling.name): \($0)" }
    }
    return Report(waiter: waiter.name, checked: checked, failures: failures)
  }

  /// A suite with one test for each waiter, failing with the broken rules, so a suites
  /// executable can check third-party strategies next to its own tests.
  public static func suite(for waiters: [any Waiter]) -> Suite {
    Suite("WaiterConformance") {
      for waiter in waiters {
        Test(waiter.name) { t in
          let report = run(waiter)
          for failure in report.failures { t.fail(failure) }
        }
      }
    }
  }
}

/// What a fixture test did, as the checks see it.
struct Observed {
  var result: TestResult
  var duration: Double
  var lateIssues: [Issue]

  var failingMessages: [String] { result.issues.filter(\.isFailure).map(\.message) }
}
