// Part of the library `harness test` preloads into a package's test bundle
// (AsyncHarnessBundleChannel.swift): the XCTest observer that writes each test's start,
// failures and end, and each class's, to the channel.
#if os(Linux)
import Glibc
import Synchronization
import XCTest

/// Writes each XCTest test's start, failures and end to the channel.
final class ChannelObserver: NSObject, XCTestObservation, Sendable {
  private let writer: ChannelWriter
  /// The unexpected errors seen so far of each test running (a test may run XCTest tests of
  /// its own inside it).
  private let thrownSeen = Mutex<[ObjectIdentifier: Int]>([:])

  init(writer: ChannelWriter) {
    self.writer = writer
  }

  /// XCTest's own observer, which prints each test's start, failures and end on standard
  /// output, is removed as the run starts: those words come on the channel, and standard
  /// output holds only what the tests print.
  func testBundleWillStart(_ testBundle: Bundle) {
    let center = XCTestObservationCenter.shared
    guard let observers = Mirror(reflecting: center).descendant("observers") else { return }
    for wrapper in Mirror(reflecting: observers).children {
      guard let observer = Mirror(reflecting: wrapper.value).descendant("object") as? XCTestObservation,
        String(describing: type(of: observer)) == "PrintObserver"
      else { continue }
      center.removeTestObserver(observer)
    }
  }

  /// A class's tests begin: its `class func setUp()` runs next.
  func testSuiteWillStart(_ testSuite: XCTestSuite) {
    guard let name = Self.className(of: testSuite) else { return }
    writer.send(.classStarted(name))
  }

  /// A class's tests and its `class func tearDown()` ran.
  func testSuiteDidFinish(_ testSuite: XCTestSuite) {
    guard let name = Self.className(of: testSuite) else { return }
    writer.send(.classEnded(name))
  }

  /// `Module.Class` of a suite that holds one class's tests; `nil` for the suites that hold
  /// suites (the bundle's, `Selected tests`).
  private static func className(of suite: XCTestSuite) -> String? {
    (suite.tests.first as? XCTestCase).map { String(reflecting: type(of: $0)) }
  }

  func testCaseWillStart(_ testCase: XCTestCase) {
    guard !(testCase is WorkLeftCase) else { return }
    thrownSeen.withLock { $0[ObjectIdentifier(testCase)] = 0 }
    writer.send(.started(test: id(of: testCase)))
    BundleExplorer.testStarted(holdingTheMainThread: true)
  }

  func testCase(_ testCase: XCTestCase, didFailWithDescription description: String, inFile filePath: String?,
                atLine lineNumber: Int) {
    if let workLeft = testCase as? WorkLeftCase {
      // A failure of the work a test left, after its `tearDown()`: the test's own.
      workLeft.failures.add(1, ordering: .sequentiallyConsistent)
      let place: ChannelRecord.IssuePlace = filePath.map { .file($0, line: lineNumber) } ?? .unknown
      return writer.send(.issue(test: workLeft.test, message: description, place: place))
    }
    // XCTest counts an unexpected error before it tells observers: a new one is a thrown error.
    let unexpected = testCase.testRun?.unexpectedExceptionCount ?? 0
    let thrown = thrownSeen.withLock { seen in
      let before = seen[ObjectIdentifier(testCase)] ?? 0
      seen[ObjectIdentifier(testCase)] = max(before, unexpected)
      return unexpected > before
    }
    // A thrown error is told at `<EXPR>`, line 0; every other failure at its file and line, even
    // one XCTest counts as unexpected (an API violation, expectations never waited for).
    let place: ChannelRecord.IssuePlace = if let filePath, filePath != Self.thrownErrorFile {
      .file(filePath, line: lineNumber)
    } else {
      thrown ? .thrown : .unknown
    }
    writer.send(.issue(test: id(of: testCase), message: description, place: place))
  }

  /// The file XCTest names for an error a test threw: it knows no place of it.
  private static let thrownErrorFile = "<EXPR>"

  func testCaseDidFinish(_ testCase: XCTestCase) {
    guard !(testCase is WorkLeftCase) else { return }
    thrownSeen.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(testCase)) }
    // Under a schedule, the work the test left may still fail it, after its `tearDown()`.
    let lateFailures = BundleExplorer.exploring ? WorkLeftCase.awaitWorkLeft(by: id(of: testCase)) : 0
    let run = testCase.testRun
    let outcome: ChannelRecord.Outcome = run?.hasBeenSkipped == true ? .skipped(reason: Self.skipReason(of: testCase))
      : run?.hasSucceeded == true && lateFailures == 0 ? .passed : .failed
    writer.send(.ended(test: id(of: testCase), outcome: outcome, duration: run?.totalDuration ?? 0,
                       failures: (run?.totalFailureCount ?? 0) + lateFailures, unexpected: run?.unexpectedExceptionCount ?? 0),
                endsATest: true)
  }

  /// `Module.Class/method`, as the bundle lists the test.
  private func id(of testCase: XCTestCase) -> String {
    let method = testCase.name.split(separator: ".").last.map(String.init) ?? testCase.name
    return "\(String(reflecting: type(of: testCase)))/\(method)"
  }

  /// The reason of an `XCTSkip`, which XCTest keeps in a private property of the test case
  /// and tells no public observer: read by reflection, empty when not found. It is XCTest's
  /// own words after `Test skipped`: what `XCTSkipIf` found (`required true value but got
  /// false`) and the message (` - the ledger is closed`), else the message alone.
  private static func skipReason(of testCase: XCTestCase) -> String {
    var mirror: Mirror? = Mirror(reflecting: testCase)
    while let current = mirror {
      if let skip = current.descendant("skip") as? XCTSkip { return words(of: skip) }
      mirror = current.superclassMirror
    }
    return ""
  }

  /// An `XCTSkip`'s summary (internal to XCTest: `Test skipped: EXPLANATION - MESSAGE`) less
  /// its `Test skipped` and the separator after it; its message when it has no summary.
  private static func words(of skip: XCTSkip) -> String {
    let prefix = "Test skipped"
    guard let summary = Mirror(reflecting: skip).descendant("summary") as? String, summary.hasPrefix(prefix) else {
      return skip.message ?? ""
    }
    let rest = summary.dropFirst(prefix.count)
    for separator in [": ", " - "] where rest.hasPrefix(separator) { return String(rest.dropFirst(separator.count)) }
    return String(rest)
  }
}
#endif
