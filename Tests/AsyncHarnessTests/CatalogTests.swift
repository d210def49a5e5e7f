@_spi(ForToolsIntegrationOnly) @testable import AsyncHarness
import XCTest

/// The catalog a run plans from: harness suites, or another package's listed tests
/// (`harness test`), which are not harness suites in disguise.
final class CatalogTests: XCTestCase {
  private func existing(_ library: TestLibrary, _ suite: String, _ name: String, displayName: String? = nil,
                        line: Int? = nil) -> ExistingTest {
    ExistingTest(library: library, suite: suite, name: name, displayName: displayName, id: "\(suite)/\(name)",
                 isParameterized: false,
                 sourceLocation: line.map { SourceLocation(fileID: "M/F.swift", filePath: "/p/M/F.swift", line: $0, column: 4) })
  }

  func testAnotherPackagesTestsAreGroupedBySuiteAndLibraryInTheOrderListed() throws {
    let catalog = Catalog(existing: [
      existing(.xctest, "M.AClass", "testOne"), existing(.xctest, "M.BClass", "testTwo"),
      existing(.xctest, "M.AClass", "testThree"),
      // A Swift Testing suite with an XCTest class's name is a group of its own, numbered.
      existing(.swiftTesting, "M.AClass", "works()", line: 12),
      existing(.swiftTesting, "M", "free()", displayName: "A free function", line: 30),
    ])
    XCTAssertEqual(catalog.groups.map(\.name), ["M.AClass", "M.BClass", "M.AClass#01", "M"])
    XCTAssertEqual(catalog.groups.map { $0.tests.map(\.name) },
                   [["testOne", "testThree"], ["testTwo"], ["works()"], ["A free function"]])
    XCTAssertEqual(catalog.groups[0].tests.map(\.index), [0, 1])
    XCTAssertEqual(catalog.suites.count, 0, "no harness suite stands for another package's tests")

    let plan = try Runner.Plan(catalog: catalog, configuration: Configuration(), registry: .builtIn)
    XCTAssertEqual(plan.waiterNames, ["xctest", "swift-testing"])
    let step = try XCTUnwrap(plan.plannedTests(of: plan.entries[2], repetition: 1).first)
    XCTAssertEqual(step.id.path, "M.AClass#01/works()")
    XCTAssertEqual(step.id.host, "swift-testing")
    XCTAssertEqual(step.existing?.id, "M.AClass/works()")
    XCTAssertNil(step.harness)
    XCTAssertEqual(step.test.sourceLocation.line, 12)
  }

  func testTestNamesASuiteRepeatsAreNumberedAndAnUnplacedTestIsPlacedAtItsModule() throws {
    let catalog = Catalog(existing: [
      existing(.swiftTesting, "M.S", "f(x:)", line: 3), existing(.swiftTesting, "M.S", "f(x:)", line: 9),
      existing(.swiftTesting, "M.S", "g()", displayName: "f(x:)", line: 15),
      existing(.xctest, "Module.Class", "testPlain"),
    ])
    XCTAssertEqual(catalog.groups[0].tests.map(\.name), ["f(x:)", "f(x:)#01", "f(x:)#02"])
    let unplaced = try XCTUnwrap(catalog.groups.last?.tests.first)
    XCTAssertEqual(unplaced.sourceLocation.fileID, "Module")
    XCTAssertEqual(unplaced.sourceLocation.line, 0)
    XCTAssertNil(unplaced.skipReason)
    XCTAssertNil(unplaced.knownIssue)
    XCTAssertFalse(unplaced.isAsync)
  }

  /// `--waiter all` and `--parallel` are about harness suites: a library's group runs once,
  /// under its library, whole in one lane (the library decides how its tests run beside
  /// each other).
  func testALibrarysGroupRunsUnderItsLibraryWhateverTheWaitersAndNeverSpreadsOverLanes() throws {
    var configuration = Configuration()
    configuration.waiters = .all
    configuration.parallelTests = true
    let catalog = Catalog(existing: [existing(.xctest, "M.C", "testA"), existing(.xctest, "M.C", "testB")])
    let plan = try Runner.Plan(catalog: catalog, configuration: configuration, registry: .builtIn)
    XCTAssertEqual(plan.entries.map(\.suiteRun), [SuiteRun(suite: "M.C", host: "xctest")])
    XCTAssertFalse(catalog.groups[0].runsTestsInParallel(byDefault: true))
    XCTAssertEqual(WorkQueue(plan: plan, splitsParallelEntries: true, sideBySide: true, lanes: 4).mostAtOnce, 1)

    // Harness suites under the same configuration: every strategy, spread over the lanes.
    let suites = Catalog(suites: [Suite("S") { Test("t") { _ in } }])
    let harness = try Runner.Plan(catalog: suites, configuration: configuration, registry: .builtIn)
    XCTAssertEqual(harness.waiterNames, WaiterRegistry.builtIn.names)
    XCTAssertTrue(suites.groups[0].runsTestsInParallel(byDefault: true))
  }

  /// An executor of harness tests given another package's test does not run a placeholder:
  /// the attempt cannot start, and says why.
  func testTheInProcessExecutorRefusesAnotherPackagesTest() throws {
    let plan = try Runner.Plan(catalog: Catalog(existing: [existing(.xctest, "M.C", "testA")]),
                               configuration: Configuration(), registry: .builtIn)
    let step = try XCTUnwrap(plan.plannedTests(of: plan.entries[0], repetition: 1).first)
    let end = InProcessExecutor(capturesOutput: false).run(step, events: EventSink { _ in })
    guard case .couldNotStart(let reason) = end else { return XCTFail("ran: \(end)") }
    XCTAssertEqual(reason, "M.C/testA is a test of another package's test bundle, which only that bundle runs")
  }

  func testTheCatalogOfSuitesNamesThemAsTheRunnerDoes() {
    let catalog = Catalog(suites: [Suite("A") { Test("x") { _ in }; Test("x") { _ in } }, Suite("A") {}])
    XCTAssertEqual(catalog.groups.map(\.name), ["A", "A#01"])
    XCTAssertEqual(catalog.groups[0].tests.map(\.name), ["x", "x#01"])
    XCTAssertEqual(catalog.testPaths, [TestPath(suite: "A", name: "x"), TestPath(suite: "A", name: "x#01")])
    XCTAssertEqual(catalog.suites.map(\.name), ["A", "A#01"])
  }

  func testALibraryIsFoundByTheNameReportsGiveIt() {
    XCTAssertEqual(TestLibrary(named: "xctest"), .xctest)
    XCTAssertEqual(TestLibrary(named: "swift-testing"), .swiftTesting)
    XCTAssertNil(TestLibrary(named: "expectation"))
  }
}
