/// How the schedules a test ran under ended (`--explore N`): for each test and waiter that
/// ran under more than one schedule, how many passed, how many took work from outside their
/// schedule (when the steps say so: a schedule's order was then partly not its own), and the
/// first failing replay token. The console prints it at the end of the run.
struct ExplorationTally: Sendable {
  private struct Row {
    var key: String
    var passed = 0
    var total = 0
    /// The schedules whose steps say work came from outside them.
    var outside = 0
    var firstFailure: String?
  }

  private var rows: [Row] = []
  /// Where each key's row is: a run can hold a million scheduled tests.
  private var rowIndex: [String: Int] = [:]

  /// Counts one ended test.
  mutating func count(_ test: TestID, _ end: TestEnd) {
    guard let token = end.replayToken(of: test) else { return }
    let key = "\(test.path) [\(test.host)]"
    let index = rowIndex[key] ?? {
      rows.append(Row(key: key))
      rowIndex[key] = rows.count - 1
      return rows.count - 1
    }()
    rows[index].total += 1
    if end.lastAttempt.scheduleTrace?.firstOutsideStep != nil { rows[index].outside += 1 }
    if end.verdict.isFailure {
      if rows[index].firstFailure == nil { rows[index].firstFailure = token }
    } else {
      rows[index].passed += 1
    }
  }

  /// The report: one line a test explored under several schedules, or nothing.
  var report: String {
    let explored = rows.filter { $0.total > 1 }
    guard !explored.isEmpty else { return "" }
    return "\nExplored schedules:\n" + explored.map { row in
      let outside = row.outside == 0 ? "" : "; \(row.outside) took work from outside the schedule"
      let failure = row.firstFailure.map { "; first failure replay: --schedule \($0)" } ?? ""
      return "  \(row.key): \(row.passed) of \(row.total) passed\(outside)\(failure)\n"
    }.joined()
  }
}
