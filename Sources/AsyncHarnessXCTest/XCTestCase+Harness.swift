import AsyncHarness
import XCTest

extension XCTestCase {
  /// Runs harness suites inside this XCTest method and records every failing issue as an
  /// XCTest failure at the issue's own file and line, prefixed with the harness test it
  /// belongs to (`Loader/greets [semaphore]: …`).
  ///
  /// Call it from a synchronous test method: XCTest runs those on the main thread, where
  /// blocking waits can turn the main run loop.
  ///
  /// ```swift
  /// func testLoaderUnderEveryWaiter() {
  ///   runHarness([loaderSuite], waiters: .all)
  /// }
  /// ```
  /// - Returns: the recorder holding every event, for further assertions.
  @discardableResult
  public func runHarness(_ suites: [Suite], waiters: Configuration.WaiterSelection = .all,
                         registry: WaiterRegistry = .builtIn, defaultTimeout: Duration = .seconds(1),
                         fileID: String = #fileID, filePath: String = #filePath,
                         line: Int = #line, column: Int = #column) -> EventRecorder {
    run(suites, waiters: waiters, registry: registry, defaultTimeout: defaultTimeout, namingTests: true,
        at: SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// Runs `body` as one harness test under `waiter`, inside this XCTest method, so an
  /// XCTest suite can use the harness's expectations, waits and queues.
  ///
  /// Failures are recorded with the harness's message alone (XCTest already names the
  /// method); an error `body` throws is attributed to the line of this call.
  ///
  /// ```swift
  /// func testGreets() {
  ///   harnessTest(waiter: .semaphore) { t in
  ///     let loaded = t.expectation("loaded")
  ///     loader.load { _ in loaded.fulfill() }
  ///     try t.wait(for: loaded)
  ///   }
  /// }
  /// ```
  public func harnessTest(waiter: some Waiter = .expectation, timeout: Duration = .seconds(1),
                          name: String = #function, fileID: String = #fileID, filePath: String = #filePath,
                          line: Int = #line, column: Int = #column,
                          body: @escaping @Sendable (TestContext) throws -> Void) {
    runAlone(Test(name, traits: [], fileID: fileID, filePath: filePath, line: line, column: column, body: body),
             waiter: waiter, timeout: timeout,
             at: SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// Runs `test` alone under `waiter` and records each failing issue with the harness's
  /// message alone (XCTest already names the method); an issue with no location, and a run
  /// that could not start, are recorded at `location`.
  func runAlone(_ test: Test, waiter: some Waiter, timeout: Duration, at location: SourceLocation?) {
    let registry: WaiterRegistry
    do {
      registry = try WaiterRegistry([waiter])
    } catch {
      recordHarnessFailure("\(error)", at: location)
      return
    }
    run([Suite("\(type(of: self))", waiter: waiter) { test }], waiters: .suiteDefault, registry: registry,
        defaultTimeout: timeout, namingTests: false, at: location)
  }

  /// Runs the suites and records each failing issue of each failing test; `namingTests`
  /// prefixes each message with its harness test.
  @discardableResult
  private func run(_ suites: [Suite], waiters: Configuration.WaiterSelection, registry: WaiterRegistry,
                   defaultTimeout: Duration, namingTests: Bool, at location: SourceLocation?) -> EventRecorder {
    let recorder = EventRecorder()
    var configuration = Configuration()
    configuration.waiters = waiters
    configuration.defaultTimeout = defaultTimeout
    do {
      try Runner(suites: suites, configuration: configuration, registry: registry, reporters: [recorder]).run()
    } catch {
      recordHarnessFailure("the harness run could not start: \(error)", at: location)
    }
    for (test, result, _) in recorder.results where result.verdict.isFailure {
      for issue in result.issues where issue.isFailure {
        recordHarnessFailure(namingTests ? "\(test): \(issue.message)" : issue.message, at: issue.sourceLocation ?? location)
      }
    }
    return recorder
  }

  /// Records a failure at `location`; without one, where XCTest records a failure it cannot
  /// place (on Linux `<EXPR>:0`, as for an error a test method threw).
  private func recordHarnessFailure(_ message: String, at location: SourceLocation?) {
    #if canImport(Darwin)
    let context = location.map {
      XCTSourceCodeContext(location: XCTSourceCodeLocation(filePath: $0.filePath, lineNumber: $0.line))
    }
    record(XCTIssue(type: .assertionFailure, compactDescription: message,
                    sourceCodeContext: context ?? XCTSourceCodeContext()))
    #else
    recordFailure(withDescription: message, inFile: location?.filePath ?? "<EXPR>", atLine: location?.line ?? 0,
                  expected: true)
    #endif
  }
}
