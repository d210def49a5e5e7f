import AsyncHarness
import Foundation
import Synchronization
import XCTest

/// Reports the XCTest tests of this process to a `Reporter`, as the harness's
/// own events: any XCTest run, harness tests or not, reaches the console, JSON Lines or
/// JUnit reporters.
///
/// Each `XCTestCase` class becomes a suite named after the class (`Module.Class`) whose
/// waiter is the class's ``HarnessTestCase/waiter`` for a ``HarnessTestCase``, and empty
/// for other classes; each test method becomes a test named after the method. A test with a
/// recorded failure fails, at the failure's file and line; a thrown error (or, on Apple
/// platforms, an uncaught exception) makes it error; `XCTSkip` makes it skipped. XCTest
/// does not tell observers why a test was skipped, so skips carry no reason.
///
/// The reporter is made when the test bundle starts, so a process that runs no XCTest tests
/// (the Swift Testing pass of `swift test`) writes nothing, and finished when it ends.
/// Register it once, before the tests start:
///
/// ```swift
/// XCTestObservationCenter.shared.addTestObserver(
///   XCTestObserver { try JSONLinesReporter(path: "xctest.jsonl") })
/// ```
///
/// To write JUnit, use `AsyncHarnessXCTestJUnit`, which registers one from an environment
/// variable.
public final class XCTestObserver: NSObject, XCTestObservation, Sendable {
  private let makeReporter: @Sendable () throws -> any Reporter
  private let run = Mutex(ObservedRun())

  /// Creates an observer that reports to the reporter `makeReporter` makes when the test
  /// bundle starts.
  ///
  /// - Parameter makeReporter: Makes the reporter. When it throws, the error is written to
  ///   standard error and the run is not reported.
  public init(_ makeReporter: @escaping @Sendable () throws -> any Reporter) {
    self.makeReporter = makeReporter
  }

  /// Makes the reporter and starts the run.
  public func testBundleWillStart(_ testBundle: Bundle) {
    do {
      let reporter = try makeReporter()
      deliver(.runStarted(RunInfo()), to: reporter)
      run.withLock { $0.reporter = reporter; $0.started = Date() }
    } catch {
      Self.complain("cannot report the XCTest run: \(error)")
    }
  }

  /// Starts a suite when `testSuite` is a test class's suite.
  public func testSuiteWillStart(_ testSuite: XCTestSuite) {
    guard let suite = Self.classSuite(testSuite) else { return }
    send(.suiteStarted(suite))
  }

  /// Starts a test.
  public func testCaseWillStart(_ testCase: XCTestCase) {
    let test = Self.testID(testCase)
    run.withLock { $0.running = RunningTest(test: test, issues: [], thrownErrors: 0) }
    send(.testStarted(test))
  }

  #if canImport(Darwin)
  /// Records an issue of the running test.
  public func testCase(_ testCase: XCTestCase, didRecord issue: XCTIssue) {
    let location = issue.sourceCodeContext.location.map {
      Self.location(testCase, path: $0.fileURL.path, line: $0.lineNumber)
    }
    let thrown = issue.type == .thrownError || issue.type == .uncaughtException
    record(Issue(kind: thrown ? .errorThrown : .expectationFailed, message: issue.compactDescription,
                 sourceLocation: location), of: testCase)
  }
  #else
  /// Records a failure of the running test.
  public func testCase(
    _ testCase: XCTestCase, didFailWithDescription description: String, inFile filePath: String?, atLine lineNumber: Int
  ) {
    // XCTest counts the failure before telling observers: a new unexpected one is an error
    // the test threw, which XCTest reports at `<EXPR>:0`.
    let thrownErrors = testCase.testRun?.unexpectedExceptionCount ?? 0
    let thrown = thrownErrors > run.withLock { $0.running?.thrownErrors ?? 0 }
    let location = thrown ? nil : filePath.map { Self.location(testCase, path: $0, line: lineNumber) }
    run.withLock { $0.running?.thrownErrors = thrownErrors }
    record(Issue(kind: thrown ? .errorThrown : .expectationFailed, message: description, sourceLocation: location),
           of: testCase)
  }
  #endif

  /// Ends the running test with its verdict.
  public func testCaseDidFinish(_ testCase: XCTestCase) {
    let test = Self.testID(testCase)
    let issues = run.withLock { run in
      defer { run.running = nil }
      return run.running?.test == test ? run.running?.issues ?? [] : []
    }
    let testRun = testCase.testRun
    let untold = testRun?.hasBeenSkipped == true ? [] : Self.untold(by: testRun, besides: issues)
    let result = testRun?.hasBeenSkipped == true
      ? TestResult(verdict: .skipped, issues: issues)
      : TestResult(judging: issues + untold, knownIssue: nil)
    run.withLock { $0.suiteSummary.count(result.verdict) }
    for issue in untold { send(.issueRecorded(test, issue)) }
    send(.testEnded(test, TestEnd(once: result, duration: testRun?.totalDuration ?? 0)))
  }

  /// A failure XCTest counted for the test but never told its observers of (the one rule,
  /// `Issue.untoldByXCTest`), so that the verdict judged from the recorded issues can never be
  /// greener than XCTest's own.
  private static func untold(by testRun: XCTestRun?, besides issues: [Issue]) -> [Issue] {
    guard let testRun else { return [] }
    return Issue.untoldByXCTest(counted: testRun.totalFailureCount, unexpected: testRun.unexpectedExceptionCount,
                                failed: !testRun.hasSucceeded, told: issues).map { [$0] } ?? []
  }

  /// Ends a test class's suite.
  public func testSuiteDidFinish(_ testSuite: XCTestSuite) {
    guard let suite = Self.classSuite(testSuite) else { return }
    let summary = run.withLock { run in
      defer { run.summary.add(run.suiteSummary); run.suiteSummary = Summary() }
      return run.suiteSummary
    }
    send(.suiteEnded(suite, summary, duration: testSuite.testRun?.totalDuration ?? 0))
  }

  /// Ends the run and finishes the reporter.
  public func testBundleDidFinish(_ testBundle: Bundle) {
    let (reporter, summary, started) = run.withLock { run in
      defer { run.reporter = nil }
      return (run.reporter, run.summary, run.started)
    }
    guard let reporter else { return }
    deliver(.runEnded(summary, duration: Date().timeIntervalSince(started)), to: reporter)
    do {
      try reporter.finish()
    } catch {
      Self.complain("cannot finish the XCTest report: \(error)")
    }
  }

  // MARK: Events

  private func record(_ issue: Issue, of testCase: XCTestCase) {
    let test = Self.testID(testCase)
    run.withLock { if $0.running?.test == test { $0.running?.issues.append(issue) } }
    send(.issueRecorded(test, issue))
  }

  private func send(_ kind: Event.Kind) {
    guard let reporter = run.withLock({ $0.reporter }) else { return }
    deliver(kind, to: reporter)
  }

  /// Hands one event to the reporter; a reporter that throws stops the report.
  private func deliver(_ kind: Event.Kind, to reporter: any Reporter) {
    do {
      try reporter.handle(Event(kind))
    } catch {
      run.withLock { $0.reporter = nil }
      Self.complain("stopped reporting the XCTest run: \(error)")
    }
  }

  private static func complain(_ message: String) {
    FileHandle.standardError.write(Data("AsyncHarness: \(message)\n".utf8))
  }

  // MARK: Names

  /// The suite of a test class (a suite whose tests are test cases), named `Module.Class`;
  /// `nil` for the suites that group classes (the bundle, all tests).
  private static func classSuite(_ testSuite: XCTestSuite) -> SuiteRun? {
    guard let first = testSuite.tests.first as? XCTestCase else { return nil }
    return suiteRun(type(of: first))
  }

  private static func suiteRun(_ testClass: XCTestCase.Type) -> SuiteRun {
    let waiter = (testClass as? HarnessTestCase.Type)?.waiter.name ?? ""
    return SuiteRun(suite: String(reflecting: testClass), host: waiter)
  }

  /// The test's suite and method name: XCTest names a test `Class.method` on Linux and
  /// `-[Class method]` on Apple platforms.
  private static func testID(_ testCase: XCTestCase) -> TestID {
    let suite = suiteRun(type(of: testCase))
    let name = testCase.name
    let method = name.hasPrefix("-[")
      ? name.split(separator: " ").last.map { String($0.dropLast()) } ?? name
      : name.split(separator: ".").last.map(String.init) ?? name
    return TestID(suite: suite.suite, name: method, host: suite.host)
  }

  /// A location XCTest gives as a path and a line; the file ID is `Module/File.swift`, the
  /// module being the test class's.
  private static func location(_ testCase: XCTestCase, path: String, line: Int) -> SourceLocation {
    let module = String(reflecting: type(of: testCase)).split(separator: ".").first.map(String.init) ?? ""
    let file = URL(fileURLWithPath: path).lastPathComponent
    return SourceLocation(fileID: "\(module)/\(file)", filePath: path, line: line, column: 1)
  }
}

/// What the observer knows of the run so far.
private struct ObservedRun {
  var reporter: (any Reporter)?
  var started = Date()
  var running: RunningTest?
  var suiteSummary = Summary()
  var summary = Summary()
}

/// The test that is running, with the issues it recorded.
private struct RunningTest {
  var test: TestID
  var issues: [Issue]
  /// The unexpected failures (thrown errors) XCTest had counted at the last failure.
  var thrownErrors: Int
}
