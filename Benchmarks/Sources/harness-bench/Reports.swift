import AsyncHarness
import AsyncHarnessJUnit
import Foundation

// MARK: 6. What the report files cost

/// Runs the same suite of tests that pass at once with the console reporter only, then with a
/// JUnit report beside it, then with a JUnit report and a JSON Lines stream (what `--junit
/// PATH --json PATH` makes), interleaved so that the machine's load falls on each alike; the
/// median of each is compared with the console-only run.
@MainActor
func measureReports(_ counts: Counts, _ report: Report) {
  let count = counts.reportTests
  report.section("6. Report files: \(count) tests that pass at once, console only, + JUnit, + JUnit + JSON Lines (s, median of \(counts.reportRepeats))")
  let directory = FileManager.default.temporaryDirectory.appendingPathComponent("harness-bench-reports-\(getpid())")
  try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: directory) }
  let junit = directory.appendingPathComponent("report.xml").path
  let json = directory.appendingPathComponent("events.jsonl").path

  let tests = (0..<count).map { index in Test("test \(index)") { _ in } }
  let sets: [(label: String, reporters: @Sendable () -> [any Reporter])] = [
    ("console only", { [] }),
    ("console + JUnit", { [try! JUnitReporter(path: junit)] }),
    ("console + JUnit + JSON Lines", { [try! JSONLinesReporter(path: json), try! JUnitReporter(path: junit)] }),
  ]
  var seconds = Array(repeating: [Double](), count: sets.count)
  for _ in 0..<counts.reportRepeats {
    for (index, set) in sets.enumerated() {
      let outcome = runOurs(tests, waiter: .expectation, place: .main, console: true, reporters: set.reporters)
      if outcome.summary.passed != count { report.note("\(set.label): \(outcome.summary.passed) of \(count) passed") }
      seconds[index].append(outcome.seconds)
    }
  }
  let medians = seconds.map { $0.sorted()[$0.count / 2] }
  for (index, set) in sets.enumerated() {
    let range = String(format: "%.3f–%.3f", seconds[index].min()!, seconds[index].max()!)
    let padded = set.label.padding(toLength: 30, withPad: " ", startingAt: 0)
    print(String(format: "%@ %7.3f s  (%@; %.2f× console only)", padded, medians[index], range, medians[index] / medians[0]))
    if index > 0 {
      report.add(Row(label: "reports · \(count) tests · \(set.label)", ours: medians[index],
                     anchorLabel: "console only (ours)", anchor: medians[0], unit: "s"))
    }
  }
  fflush(nil)
}
