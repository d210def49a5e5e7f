import AsyncHarness
import AsyncHarnessJUnit
import Foundation

// MARK: 6. What the report files cost

/// Runs the same suite of tests that pass at once with the console reporter only, then with a
/// JUnit report beside it, then with a JUnit report and a JSON Lines stream (what `--junit
/// PATH --json PATH` makes), then with a trace and an HTML page (what `--trace PATH
/// --report-html PATH` makes), interleaved so that the machine's load falls on each alike.
/// Each set's median wall time and median process CPU time (the CPU time moves less on a
/// shared machine) are compared with the console-only run's; the trace's and the page's sizes
/// are printed per 10,000 tests.
@MainActor
func measureReports(_ counts: Counts, _ report: Report) {
  let count = counts.reportTests
  report.section("7. Report files: \(count) tests that pass at once, console only, + JUnit, + JUnit + JSON Lines, "
    + "+ trace + HTML (s, median of \(counts.reportRepeats))")
  let directory = FileManager.default.temporaryDirectory.appendingPathComponent("harness-bench-reports-\(getpid())")
  try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: directory) }
  let junit = directory.appendingPathComponent("report.xml").path
  let json = directory.appendingPathComponent("events.jsonl").path
  let trace = directory.appendingPathComponent("trace.json").path
  let html = directory.appendingPathComponent("report.html").path

  let tests = (0..<count).map { index in Test("test \(index)") { _ in } }
  // Each set's label, its short form for the comparison table, and its reporters.
  let sets: [(label: String, row: String, reporters: @Sendable () -> [any Reporter])] = [
    ("console only", "", { [] }),
    ("console + JUnit", "+JUnit", { [try! JUnitReporter(path: junit)] }),
    ("console + JUnit + JSON Lines", "+JUnit +JSON",
     { [try! JSONLinesReporter(path: json), try! JUnitReporter(path: junit)] }),
    ("console + trace + HTML", "+trace +HTML", { [try! TraceReporter(path: trace), try! HTMLReporter(path: html)] }),
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
  for (name, path) in [("trace (--trace)", trace), ("HTML page (--report-html)", html)] {
    let bytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    print(String(format: "%@: %.2f MB for %d tests, %.2f MB per 10,000 tests", name, Double(bytes) / 1e6, count,
                 Double(bytes) / 1e6 * 10_000 / Double(count)))
  }
  fflush(nil)
  measureTraceAndPageFlags(counts, report, in: directory)
}

/// What `--trace PATH --report-html PATH` add to a command-line run as users make it: this
/// executable as the suites executable of part 6's trivially-async tests (`--filter trivial/`,
/// one worker process), without and with the two flags, interleaved, `reportRepeats` times
/// each. The row compares the fastest run of each: on a shared machine other work only ever
/// adds time, in bursts that can double one run, so the fastest is the least disturbed; the
/// medians are printed beside it.
func measureTraceAndPageFlags(_ counts: Counts, _ report: Report, in directory: URL) {
  let count = counts.tests
  let executable = Bundle.main.executablePath ?? "/proc/self/exe"
  let flags = ["--trace", directory.appendingPathComponent("trace.json").path,
               "--report-html", directory.appendingPathComponent("report.html").path]
  var neither: [Double] = []
  var both: [Double] = []
  for _ in 0..<counts.reportRepeats {
    neither.append(runSuitesExecutable(executable, tests: count, ["--filter", "trivial/"], samplingMemory: false).seconds)
    both.append(runSuitesExecutable(executable, tests: count, ["--filter", "trivial/"] + flags, samplingMemory: false).seconds)
  }
  let (plain, traced) = (neither.min() ?? .nan, both.min() ?? .nan)
  let (plainMedian, tracedMedian) = (neither.sorted()[neither.count / 2], both.sorted()[both.count / 2])
  print(String(format: "%d trivially-async tests in a worker, fastest of %d: neither %.3f s, --trace --report-html %.3f s, "
               + "%.2f× (medians %.3f s and %.3f s, %.2f×)", count, neither.count, plain, traced, traced / plain,
               plainMedian, tracedMedian, tracedMedian / plainMedian))
  report.add(Row(label: "\(count) tests in a worker · --trace --report-html", ours: traced,
                 anchorLabel: "neither (ours) × 1.2 (target)", anchor: plain * 1.2, unit: "s"))
  fflush(nil)
}
