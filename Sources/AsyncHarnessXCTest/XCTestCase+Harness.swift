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
    let location = SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    let registry: WaiterRegistry
    do {
      registry = try WaiterRegistry([waiter])
    } catch {
      recordHarnessFailure("\(error)", at: location)
      return
    }
    let test = Test(name, traits: [], fileID: fileID, filePath: filePath, line: line, column: column, body: body)
    run([Suite("\(type(of: self))", waiter: waiter) { test }], waiters: .suiteDefault, registry: registry,
        defaultTimeout: timeout, namingTests: false, at: location)
  }

  /// Runs the suites and records each failing issue of each failing test; `namingTests`
  /// prefixes each message with its harness test.
  @discardableResult
  private func run(_ suites: [Suite], waiters: Configuration.WaiterSelection, registry: WaiterRegistry,
                   defaultTimeout: Duration, namingTests: Bool, at location: SourceLocation) -> EventRecorder {
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

  private func recordHarnessFailure(_ message: String, at location: SourceLocation) {
    #if canImport(Darwin)
    record(XCTIssue(type: .assertionFailure, compactDescription: message,
                    sourceCodeContext: XCTSourceCodeContext(location: XCTSourceCodeLocation(filePath: location.filePath, lineNumber: location.line))))
    #else
    recordFailure(withDescription: message, inFile: location.filePath, atLine: location.line, expected: true)
    #endif
  }
}
