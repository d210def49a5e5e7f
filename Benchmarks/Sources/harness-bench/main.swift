import AsyncHarness
import AsyncHarnessJUnit
import Foundation

// harness-bench: wake latency, idle CPU, per-test overhead and failing suites of
// AsyncHarness beside XCTest, Swift Testing and Nimble. Figures are printed, never asserted.
//
//   swift run -c release harness-bench [--quick] [--part N ...]
//
// `--child xctest pass|fail N` and `--child swift-testing serial|parallel` are the modes
// the benchmark starts itself in to run XCTest and Swift Testing as test runners;
// `--harness-worker` makes it a worker process of parts 6 and 8, and the environment
// variable HARNESS_BENCH_SUITES a suites executable (part 6 times its bare start).

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--harness-worker" || ProcessInfo.processInfo.environment[WorkerSuites.commandLineKey] != nil {
  HarnessMain.run(WorkerSuites.fromEnvironment, junit: JUnitReporter.factory)
}
if arguments.first == "--child" {
  switch (arguments.dropFirst().first, arguments.dropFirst(2).first) {
  case ("xctest", let mode?):
    runXCTestChild(failing: mode == "fail", count: arguments.dropFirst(3).first.flatMap { Int($0) } ?? 0)
  case ("swift-testing", let mode?):
    runSwiftTestingChild(parallel: mode == "parallel")
  default:
    FileHandle.standardError.write(Data("unknown child mode: \(arguments)\n".utf8))
    exit(2)
  }
}

let quick = arguments.contains("--quick")
/// The parts `--part N` selects (repeatable); every part without it.
let parts = Set(zip(arguments, arguments.dropFirst()).filter { $0.0 == "--part" }.compactMap { Int($0.1) })
func runs(_ part: Int) -> Bool { parts.isEmpty || parts.contains(part) }
let counts = quick ? Counts.quick : Counts.full
let report = Report()
let start = monotonicNanos()
print("harness-bench (\(quick ? "quick" : "full") mode): \(ProcessInfo.processInfo.activeProcessorCount) cores")
if runs(1) { measureWakeLatency(counts, report) }
if runs(2) { measureIdleCPU(counts, report) }
let xctestPerTest = runs(3) ? measurePerTest(counts, report) : nil
if runs(4) { measureFailingSuites(counts, report) }
if runs(5) { measureScheduling(counts, report) }
if runs(6) { measureWorkers(counts, report, xctestPerTest: xctestPerTest) }
if runs(7) { measureReports(counts, report) }
if runs(8) { measureParallelTests(counts, report) }
if runs(9) { measureScale(counts, report) }
if runs(10) { measureHarnessTest(counts, report) }
if runs(11) { measureExploringExistingTests(counts, report) }
if runs(12) { measureReadingJSON(counts, report) }
if runs(13) { measurePrintingSideBySide(counts, report) }
report.add(Row(label: "JUnit: 100,000 / 1,000,000 testcases", ours: nil,
               anchorLabel: "see junit-bench", anchor: nil, unit: ""))
report.printTable()
print(String(format: "total time: %.1f s", Double(monotonicNanos() - start) / 1e9))
