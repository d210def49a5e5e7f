/// A failure that belongs to no single test's body: an XCTest class's `class func setUp()` or
/// `class func tearDown()` that crashed, a Swift Testing suite's trait or issue, an issue
/// recorded once no test ran, the process ending while no test of the run ran in it (a crash
/// left behind by a test that returned, between tests, at exit), or a listing of the tests
/// that failed.
///
/// It is a result of its own, carried by an ``Event/Kind/outsideFailure(_:)`` event: the
/// console, the event stream, the JUnit report (a testcase named `initializationError` or
/// `executionError` under its suite, as Maven Surefire names one) and the HTML page show it,
/// the run's ``Summary/outsideFailures`` counts it, and the run fails. It is no test's
/// attempt: `--retries` never reruns it nor turns it into a flaky pass.
public struct OutsideFailure: Sendable, Hashable {
  /// Where it happened.
  public enum Place: String, Sendable, Hashable, CaseIterable {
    /// An XCTest class's `class func setUp()`, before any of its tests ran.
    case classSetUp
    /// An XCTest class's `class func tearDown()`, after its tests ran.
    case classTearDown
    /// A Swift Testing suite: a trait of it, or an issue it recorded.
    case suite
    /// An issue that no test recorded: one recorded once its test had returned.
    case noTest
    /// The process that ran the tests ended while none of them ran: after a test returned,
    /// between tests, or at its exit.
    case process
    /// The listing of the tests.
    case listing

    /// What a report calls the place: `class func tearDown()`, `the listing of the tests` ….
    public var description: String {
      switch self {
      case .classSetUp: "class func setUp()"
      case .classTearDown: "class func tearDown()"
      case .suite: "the suite"
      case .noTest: "no test"
      case .process: "the test process"
      case .listing: "the listing of the tests"
      }
    }
  }

  /// Where it happened.
  public var place: Place
  /// The suite it is reported under: the XCTest class or Swift Testing suite where it
  /// happened, else that of the tests it followed, else the test bundle's.
  public var suite: SuiteRun
  /// What happened, in the words of whoever said it (the testing library, the process's
  /// crash), at its source location when known.
  public var issue: Issue
  /// The tests that ran last in the same process before it, latest last: those that may have
  /// left behind what failed (`Suite/test`, as `--only` reads them).
  public var suspects: [String]
  /// Whether a test of its suite had run before it: a JUnit report names its testcase
  /// `executionError`, else `initializationError`.
  public var afterTests: Bool

  /// Creates a failure outside any test's body.
  /// - Parameters:
  ///   - place: where it happened.
  ///   - suite: the suite it is reported under.
  ///   - issue: what happened.
  ///   - suspects: the tests that ran last before it in the same process, latest last.
  ///   - afterTests: whether a test of its suite had run before it.
  public init(place: Place, suite: SuiteRun, issue: Issue, suspects: [String] = [], afterTests: Bool) {
    self.place = place
    self.suite = suite
    self.issue = issue
    self.suspects = suspects
    self.afterTests = afterTests
  }

  /// The name of its testcase in a JUnit report, as Maven Surefire names such a testcase:
  /// `executionError` once a test of its suite had run, else `initializationError`.
  public var testcaseName: String { afterTests ? "executionError" : "initializationError" }

  /// `Suite [waiter] class func tearDown(): MESSAGE`, the message's first line only: the line
  /// a console lists it with.
  public var headline: String {
    "\(suite) \(place.description): \(issue.message.prefix { $0 != "\n" })"
  }

  /// The sentence naming the suspects, or `nil` when there are none.
  public var suspectsSentence: String? {
    suspects.isEmpty ? nil : "The tests that ran last in that process before it: \(suspects.joined(separator: ", "))"
  }
}
