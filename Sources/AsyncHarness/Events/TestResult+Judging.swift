extension TestResult {
  /// Judges an attempt from what it recorded: the one rule every runner of harness tests
  /// uses (the runner's test owner, and the XCTest and Swift Testing bridges).
  ///
  /// An error among the failing issues makes the attempt `.errored`, another failing issue
  /// `.failed`, none `.passed`. A test that carries a known issue ends `.knownIssue` when it
  /// recorded a failure, and fails when it recorded none, because the known issue did not
  /// occur: that failure is added, at `location`.
  /// - Parameters:
  ///   - issues: every issue the attempt recorded, in order.
  ///   - knownIssue: the known issue the test carries, if any.
  ///   - location: where the test is declared, when known.
  package init(judging issues: [Issue], knownIssue: String?, at location: SourceLocation? = nil) {
    let failing = issues.filter(\.isFailure)
    guard let knownIssue else {
      let verdict: Verdict = failing.contains(where: \.isError) ? .errored : failing.isEmpty ? .passed : .failed
      self.init(verdict: verdict, issues: issues)
      return
    }
    guard failing.isEmpty else {
      self.init(verdict: .knownIssue, reason: knownIssue, issues: issues)
      return
    }
    let missing = Issue(kind: .expectationFailed, message: "Known issue did not occur: \(knownIssue)",
                        sourceLocation: location)
    self.init(verdict: .failed, reason: knownIssue, issues: issues + [missing])
  }
}

extension Issue {
  /// What XCTest counted of a test's failures and never told its observers of, as one issue,
  /// so that a verdict judged from the issues told is never greener than XCTest's own: the
  /// one rule of the XCTest observer (AsyncHarnessXCTest) and of `harness test`'s XCTest
  /// workers. `nil` when XCTest told every failure it counted, and the test did not fail
  /// without telling any.
  /// - Parameters:
  ///   - counted: the failures XCTest counted (`XCTestRun.totalFailureCount`).
  ///   - unexpected: of them, errors thrown (`XCTestRun.unexpectedExceptionCount`).
  ///   - failed: whether XCTest failed the test (`!XCTestRun.hasSucceeded`, not skipped).
  ///   - told: the issues its observers were told of.
  package static func untoldByXCTest(counted: Int, unexpected: Int, failed: Bool, told: [Issue]) -> Issue? {
    let failures = told.filter(\.isFailure)
    guard counted > failures.count || (failed && failures.isEmpty) else { return nil }
    let thrown = unexpected > failures.filter { $0.kind == .errorThrown }.count
    return Issue(kind: thrown ? .errorThrown : .expectationFailed,
                 message: "XCTest counted \(max(counted - failures.count, 1)) more failure(s) than it reported to its observers")
  }
}
