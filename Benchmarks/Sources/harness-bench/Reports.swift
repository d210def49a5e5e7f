import AsyncHarness
import AsyncHarnessJUnit
import Foundation

// MARK: 6. What the report files cost

/// Runs the same suite of tests that pass at once with the console reporter only, then with a
/// JUnit report beside it, then with a JUnit report and a JSON Lines stream (what `--junit
/// PATH --json PATH` makes), interleaved so that the machine's load falls on each alike. Each
/// set's median wall time and median process CPU time (the CPU time moves less on a shared
/// machine) are compared with the console-only run's.
@MainActor
func measureReports(_ counts: Counts, _ report: Report) {
  let count = counts.reportTests
  report.section("7. Report files: \(count) tests that pass at once, console only, + JUnit, + JUnit + JSON Lines "
    + "(s, median of \(counts.reportRepeats))")
  let directory = FileManager.default.temporaryDirectory.appendingPathComponent("harness-bench-reports-\(getpid())")
  try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: directory) }
  let junit = directory.appendingPathComponent("report.xml").path
  let json = directory.appendingPathComponent("events.jsonl").path

  let tests = (0..<count).map { index in Test("test \(index)") { _ in } }
  // Each set's label, its short form for the comparison table, and its reporters.
  let sets: [(label: String, row: String, reporters: @Sendable () -> [any Reporter])] = [
    ("console only", "", { [] }),
    ("console + JUnit", "+JUnit", { [try! JUnitReporter(path: junit)] }),
    ("console + JUnit + JSON Lines", "+JUnit +JSON",
     { [try! JSONLinesReporter(path: json), try! JUnitReporter(path: junit)] }),
  ]
  var wall = Array(repeating: [Double](), count: sets.count)
  var cpu = Array(repeating: [Double](), count: sets.count)
  for _ in 0..<counts.reportRepeats {
    for (index, set) in sets.enumerated() {
      let cpuBefore = processCPUSeconds()
      let outcome = runOurs(tests, waiter: .expectation, place: .main, console: true, reporters: set.reporters)
      cpu[index].append(processCPUSeconds() - cpuBefore)
      if outcome.summary.passed != count { report.note("\(set.label): \(outcome.summary.passed) of \(count) passed") }
      wall[index].append(outcome.seconds)
    }
  }
  func median(_ figures: [Double]) -> Double { figures.sorted()[figures.count / 2] }
  let wallMedians = wall.map(median)
  let cpuMedians = cpu.map(median)
  for (index, set) in sets.enumerated() {
    let label = set.label.padding(toLength: 30, withPad: " ", startingAt: 0)
    print(String(format: "%@ wall %6.3f s (%.3f–%.3f) %5.2f×   CPU %6.3f s (%.3f–%.3f) %5.2f×", label,
                 wallMedians[index], wall[index].min()!, wall[index].max()!, wallMedians[index] / wallMedians[0],
                 cpuMedians[index], cpu[index].min()!, cpu[index].max()!, cpuMedians[index] / cpuMedians[0]))
    if index > 0 {
      report.add(Row(label: "reports · \(count) tests · \(set.row) · wall", ours: wallMedians[index],
                     anchorLabel: "console only (ours)", anchor: wallMedians[0], unit: "s"))
      report.add(Row(label: "reports · \(count) tests · \(set.row) · CPU", ours: cpuMedians[index],
                     anchorLabel: "console only (ours)", anchor: cpuMedians[0], unit: "s"))
    }
  }
  fflush(nil)
}
