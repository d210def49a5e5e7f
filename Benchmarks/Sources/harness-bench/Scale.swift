import AsyncHarness
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: 9. Many tests

/// Whole runs of 10,000, 100,000 and 1,000,000 trivially-async tests (part 6's suite) in
/// worker processes with a JUnit report and a JSON Lines stream, beside `--list` of the
/// same tests: the wall time, the time per test against the smallest run's, and the peak
/// memory of the parent and of a worker against `--list`'s peak (what the suites alone
/// take). This executable is started as the suites executable (``WorkerSuites``).
func measureScale(_ counts: Counts, _ report: Report) {
  report.section("9. Many tests: trivially-async tests in 2 workers with --junit and --json, beside --list (wall, peak memory)")
  let directory = FileManager.default.temporaryDirectory.appendingPathComponent("harness-bench-scale-\(getpid())")
  try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: directory) }
  let executable = Bundle.main.executablePath ?? "/proc/self/exe"
  var firstPerTest: Double?
  for count in counts.scaleTests {
    let list = runSuitesExecutable(executable, tests: count, ["--list"])
    let run = runSuitesExecutable(executable, tests: count, [
      "--filter", "trivial/", "--workers", "2",
      "--junit", directory.appendingPathComponent("junit.xml").path,
      "--json", directory.appendingPathComponent("events.jsonl").path,
    ])
    let perTest = run.seconds / Double(count) * 1e6
    firstPerTest = firstPerTest ?? perTest
    func mebibytes(_ kibibytes: Int?) -> String { kibibytes.map { String(format: "%7.1f MiB", Double($0) / 1024) } ?? "   (not measured)" }
    func ratio(_ kibibytes: Int?) -> String {
      guard let kibibytes, let listPeak = list.parentPeak, listPeak > 0 else { return "" }
      return String(format: " (%.2f× --list)", Double(kibibytes) / Double(listPeak))
    }
    print(String(format: "%9d tests: --list %6.2f s, peak %@; run %7.2f s, %6.1f µs/test (%.2f× the first), exit %d",
                 count, list.seconds, mebibytes(list.parentPeak), run.seconds, perTest, perTest / firstPerTest!, run.status))
    print("                 peak: parent \(mebibytes(run.parentPeak))\(ratio(run.parentPeak)), a worker \(mebibytes(run.workerPeak))\(ratio(run.workerPeak))")
    if count == counts.scaleTests.last {
      let label = "\(count / 1000)k tests"
      report.add(Row(label: "\(label) · parent peak", ours: run.parentPeak.map { Double($0) / 1024 },
                     anchorLabel: "--list peak × 1.5 (target)", anchor: list.parentPeak.map { Double($0) / 1024 * 1.5 }, unit: "MiB"))
      report.add(Row(label: "\(label) · worker peak", ours: run.workerPeak.map { Double($0) / 1024 },
                     anchorLabel: "--list peak × 1.5 (target)", anchor: list.parentPeak.map { Double($0) / 1024 * 1.5 }, unit: "MiB"))
      report.add(Row(label: "\(label) · per test", ours: perTest, anchorLabel: "\(counts.scaleTests[0]) tests × 1.2 (target)",
                     anchor: firstPerTest! * 1.2, unit: "µs"))
    }
    fflush(nil)
  }
}

/// How a run of the suites executable went.
struct SuitesRun {
  var seconds: Double
  var status: Int32
  /// The peak resident memory in KiB of the process, and of the largest of its worker
  /// processes (Linux, sampled from `/proc` every 10 ms); `nil` where not measured.
  var parentPeak: Int?
  var workerPeak: Int?
}

/// Starts this executable as a suites executable of `tests` trivial tests with `arguments`
/// (`posix_spawn`: Foundation's `Process.waitUntilExit` polls every 50 ms on Linux) and
/// waits for it; with `samplingMemory`, samples its peak memory and its workers' meanwhile.
func runSuitesExecutable(_ executable: String, tests: Int, _ arguments: [String], samplingMemory: Bool = true) -> SuitesRun {
  let environment = ProcessInfo.processInfo.environment.merging(
    [WorkerSuites.commandLineKey: "1", WorkerSuites.countKey: "\(tests)"]) { $1 }.map { "\($0)=\($1)" }
  var actions = posix_spawn_file_actions_t()
  posix_spawn_file_actions_init(&actions)
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0)
  defer { posix_spawn_file_actions_destroy(&actions) }
  let argv = ([executable] + arguments).map { strdup($0) } + [nil]
  let envp = environment.map { strdup($0) } + [nil]
  defer { (argv + envp).forEach { free($0) } }
  var pid = pid_t()
  let start = monotonicNanos()
  guard posix_spawn(&pid, executable, &actions, nil, argv, envp) == 0 else { return SuitesRun(seconds: .nan, status: -1) }
  var run = SuitesRun(seconds: 0, status: 0)
  var status: Int32 = 0
  if !samplingMemory { waitpid(pid, &status, 0) }
  while samplingMemory && waitpid(pid, &status, WNOHANG) == 0 {
    if let peak = peakKibibytes(of: pid) { run.parentPeak = max(run.parentPeak ?? 0, peak) }
    for child in children(of: pid) {
      if let peak = peakKibibytes(of: child) { run.workerPeak = max(run.workerPeak ?? 0, peak) }
    }
    usleep(10_000)  // the sampling interval
  }
  run.seconds = Double(monotonicNanos() - start) / 1e9
  run.status = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
  return run
}

/// `VmHWM` of `/proc/PID/status`: the process's peak resident memory so far, in KiB.
private func peakKibibytes(of pid: pid_t) -> Int? {
  guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return nil }
  return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
}

/// The processes `pid`'s threads started (`/proc/PID/task/*/children`).
private func children(of pid: pid_t) -> [pid_t] {
  let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
  return tasks.flatMap { task in
    ((try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? "")
      .split(separator: " ").compactMap { pid_t($0) }
  }
}
