@_spi(ForToolsIntegrationOnly) @testable import AsyncHarness
import XCTest

/// Which tests a new worker of a test bundle is given (`harness test`): the step asked for,
/// the prepared steps after it and, in a run of one lane, the steps of the entries after
/// those, of its own library only, and never more than one argument of the bundle holds.
final class BundleBatchTests: XCTestCase {
  /// `classes` XCTest classes and `suites` Swift Testing suites of `perSuite` tests each
  /// (at most 10,000), named `test0000` and on, padded with `x` to `nameLength` characters.
  private func bundle(classes: Int, suites: Int, perSuite: Int, nameLength: Int = 8) throws -> Runner.Plan {
    func tests(_ library: TestLibrary, _ suite: String) -> [ExistingTest] {
      (0..<perSuite).map { index in
        let digits = String(index)
        let name = "test" + String(repeating: "0", count: 4 - digits.count) + digits
          + String(repeating: "x", count: max(0, nameLength - 8))
        return ExistingTest(library: library, suite: suite, name: name,
                            id: library == .xctest ? "\(suite)/\(name)" : "\(suite)/\(name)()/File.swift:\(index):4",
                            isParameterized: false)
      }
    }
    let catalog = Catalog(existing: (0..<classes).flatMap { tests(.xctest, "Module.Class\($0)") }
      + (0..<suites).flatMap { tests(.swiftTesting, "Module.Suite\($0)") })
    return try Runner.Plan(catalog: catalog, configuration: Configuration(), registry: .builtIn)
  }

  /// The lane of a bundle that no test here starts, told it is handed `plan`'s entry at
  /// `entry`, and told of the entries after it when `alone`.
  private func lane(_ plan: Runner.Plan, entry: Int = 0, alone: Bool) -> BundleLaneMachine {
    var runs = BundleLaneMachine(bundle: "/nonexistent/Tests.xctest")
    XCTAssertTrue(runs.handle(.prepared(plan.plannedTests(of: plan.entries[entry], repetition: 1))).isEmpty)
    if alone { XCTAssertTrue(runs.handle(.following(plan.entries[(entry + 1)...], plan.configuration)).isEmpty) }
    return runs
  }

  func testAWorkerOfTheOnlyLaneRunsEveryLaterClassOfItsLibraryAndNoOtherLibrarys() throws {
    let plan = try bundle(classes: 3, suites: 2, perSuite: 2)
    let runs = lane(plan, alone: true)
    let batch = runs.batch(from: runs.prepared![0])
    XCTAssertEqual(batch.map(\.test.id), (0..<3).flatMap { ["Module.Class\($0)/test0000", "Module.Class\($0)/test0001"] })
    XCTAssertEqual(batch.map(\.planned.id.suite), batch.map(\.test.suite))

    // The first Swift Testing suite's worker runs both suites.
    let swiftTesting = lane(plan, entry: 3, alone: true)
    XCTAssertEqual(swiftTesting.batch(from: swiftTesting.prepared![0]).map(\.test.suite),
                   ["Module.Suite0", "Module.Suite0", "Module.Suite1", "Module.Suite1"])
  }

  func testAWorkerOfOneOfSeveralLanesRunsItsOwnClassOnly() throws {
    let plan = try bundle(classes: 3, suites: 0, perSuite: 2)
    let runs = lane(plan, alone: false)
    XCTAssertEqual(runs.batch(from: runs.prepared![1]).map(\.test.id), ["Module.Class0/test0001"])
  }

  func testAStepThatWasNeverPreparedRunsAlone() throws {
    let plan = try bundle(classes: 2, suites: 0, perSuite: 2)
    let runs = lane(plan, alone: true)
    let unprepared = plan.plannedTests(of: plan.entries[1], repetition: 2)[0]
    XCTAssertEqual(runs.batch(from: unprepared).map(\.test.id), ["Module.Class1/test0000"])
  }

  /// 4,000 tests whose IDs take 40 bytes each: the list ends before the limit, and the next
  /// worker, started at the first test left out, goes on from there.
  func testTheListOfTestsStopsBeforeOneArgumentIsFull() throws {
    let plan = try bundle(classes: 4, suites: 0, perSuite: 1000, nameLength: 26)
    let runs = lane(plan, alone: true)
    let batch = runs.batch(from: runs.prepared![0])
    let listBytes = batch.map(\.test.id.utf8.count).reduce(0, +) + batch.count - 1
    XCTAssertEqual(batch.map(\.test.id.utf8.count).max(), 40)
    XCTAssertLessThanOrEqual(listBytes, BundleInvocation.listLimit)
    XCTAssertGreaterThan(listBytes + 41, BundleInvocation.listLimit, "the list stopped early")
    XCTAssertEqual(batch.count, (BundleInvocation.listLimit + 1) / 41)

    let next = plan.entries.lazy.flatMap { plan.plannedTests(of: $0, repetition: 1) }.dropFirst(batch.count).first!
    let later = lane(plan, entry: plan.entries.firstIndex { $0.group.name == next.id.suite }!, alone: true)
    XCTAssertEqual(later.batch(from: next).first?.planned.id, next.id)
  }
}
