/// The table of suites × waiters that the console and the HTML report end with: each suite's
/// counts under each waiter, rows in the order suites start in (the plan's), whichever ends first.
struct SummaryTable {
  /// The columns: the run's waiters.
  var waiters: [String] = []
  /// The rows: each suite's counts under each waiter that ran it to its end.
  private(set) var rows: [(suite: String, cells: [String: Summary])] = []

  /// Adds the suite's row when it starts.
  mutating func start(_ run: SuiteRun) {
    if !rows.contains(where: { $0.suite == run.suite }) { rows.append((run.suite, [:])) }
  }

  /// Fills the suite's cell under its waiter when it ends.
  mutating func record(_ summary: Summary, of run: SuiteRun) {
    start(run)
    if let index = rows.firstIndex(where: { $0.suite == run.suite }) { rows[index].cells[run.host] = summary }
  }

  /// A cell: the tests that did not fail / the tests run, then ` FAIL` when some failed; `-`
  /// for a suite that did not run (or end) under that waiter.
  static func cell(_ summary: Summary?) -> String {
    guard let summary else { return "-" }
    let good = summary.total - summary.failed - summary.errored
    return good == summary.total ? "\(good)/\(summary.total)" : "\(good)/\(summary.total) FAIL"
  }
}
