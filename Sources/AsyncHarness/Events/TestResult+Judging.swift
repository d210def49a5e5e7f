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
