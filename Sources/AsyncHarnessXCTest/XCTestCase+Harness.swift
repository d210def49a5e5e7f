import AsyncHarness
import XCTest

extension XCTestCase {
  /// Runs harness suites inside this XCTest method and records every failing issue as an
  /// XCTest failure at the issue's own file and line.
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
                         file: StaticString = #filePath, line: UInt = #line) -> EventRecorder {
    let recorder = EventRecorder()
    var configuration = Configuration()
    configuration.waiters = waiters
    configuration.defaultTimeout = defaultTimeout
    do {
      try Runner(suites: suites, configuration: configuration, registry: registry, reporters: [recorder]).run()
    } catch {
      XCTFail("the harness run could not start: \(error)", file: file, line: line)
    }
    for (test, result, _) in recorder.results where result.verdict.isFailure {
      for issue in result.issues where issue.isFailure {
        recordHarnessFailure("\(test): \(issue.message)", at: issue.sourceLocation, file: file, line: line)
      }
    }
    return recorder
  }

  /// Runs `body` as one harness test under `waiter`, inside this XCTest method, so an
  /// XCTest suite can use the harness's expectations, waits and queues.
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
                          name: String = #function, file: StaticString = #filePath, line: UInt = #line,
                          body: @escaping @Sendable (TestContext) throws -> Void) {
    let registry: WaiterRegistry
    do {
      registry = try WaiterRegistry([waiter])
    } catch {
      XCTFail("\(error)", file: file, line: line)
      return
    }
    runHarness([Suite("\(type(of: self))", waiter: waiter) { Test(name, body: body) }], waiters: .suiteDefault,
               registry: registry, defaultTimeout: timeout, file: file, line: line)
  }

  private func recordHarnessFailure(_ message: String, at location: SourceLocation?, file: StaticString, line: UInt) {
    guard let location else {
      XCTFail(message, file: file, line: line)
      return
    }
    #if canImport(Darwin)
    record(XCTIssue(type: .assertionFailure, compactDescription: message,
                    sourceCodeContext: XCTSourceCodeContext(location: XCTSourceCodeLocation(filePath: location.filePath, lineNumber: location.line))))
    #else
    recordFailure(withDescription: message, inFile: location.filePath, atLine: location.line, expected: true)
    #endif
  }
}
