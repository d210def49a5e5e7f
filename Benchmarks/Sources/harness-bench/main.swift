import Foundation

// harness-bench: wake latency, idle CPU, per-test overhead and failing suites of
// AsyncHarness beside XCTest, Swift Testing and Nimble. Figures are printed, never asserted.
//
//   swift run -c release harness-bench [--quick] [--reports]
//
// `--reports` runs only part 6 (what the JUnit and JSON Lines report files cost).
//
// `--child xctest pass|fail N` and `--child swift-testing serial|parallel` are the modes
// the benchmark starts itself in to run XCTest and Swift Testing as test runners.

let arguments = Array(CommandLine.arguments.dropFirst())
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
let counts = quick ? Counts.quick : Counts.full
let report = Report()
let start = monotonicNanos()
print("harness-bench (\(quick ? "quick" : "full") mode): \(ProcessInfo.processInfo.activeProcessorCount) cores")
if !arguments.contains("--reports") {
  measureWakeLatency(counts, report)
  measureIdleCPU(counts, report)
  measurePerTest(counts, report)
  measureFailingSuites(counts, report)
  measureScheduling(counts, report)
}
measureReports(counts, report)
report.add(Row(label: "JUnit: 100,000 / 1,000,000 testcases", ours: nil,
               anchorLabel: "see junit-bench", anchor: nil, unit: ""))
report.printTable()
print(String(format: "total time: %.1f s", Double(monotonicNanos() - start) / 1e9))
