extension Summary {
  /// `N passed, N flaky, N failed, N skipped, N failed outside tests in 1.234s`: the console's
  /// closing `Result:` line and the HTML report's headline (`N flaky, ` and `N failed outside
  /// tests` only when some were; known issues count as passed, errors as failed).
  func result(in duration: Double) -> String {
    "\(passed + knownIssues) passed, \(flaky > 0 ? "\(flaky) flaky, " : "")\(failed + errored) failed, \(skipped) skipped"
      + (outsideFailures > 0 ? ", \(outsideFailures) failed outside tests" : "") + " in \(ConsoleReporter.seconds(duration))"
  }
}
