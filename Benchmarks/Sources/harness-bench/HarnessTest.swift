import AsyncHarness
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: 10. harness test against swift test

/// A generated package of quick XCTest and Swift Testing tests, built once, run by `swift
/// test` and by the root package's `harness test` (the `harness` executable built beside
/// this one, a dependency of this target): wall time with one worker against `swift test`, with `--workers 4` against `swift
/// test --parallel`, and, with one crashing test in the first XCTest class and in the first
/// Swift Testing suite (`HARNESS_BENCH_CRASH=1`, the same build), how many tests each ran.
func measureHarnessTest(_ counts: Counts, _ report: Report) {
  let shape = counts.existingTests
  report.section("10. harness test against swift test: \(shape.classes)×\(shape.perClass) XCTest + "
    + "\(shape.classes)×\(shape.perClass) Swift Testing tests (wall, median of \(shape.repeats))")
  let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("harness-bench-existing-\(getpid())")
  let package = scratch.appendingPathComponent("BenchExisting")
  defer { try? FileManager.default.removeItem(at: scratch) }
  do {
    try generateExistingTestsPackage(at: package, shape: shape)
  } catch {
    print("cannot write the package: \(error)")
    return
  }
  let log = scratch.appendingPathComponent("out.txt").path
  guard let harness = harnessExecutable(log: log) else { return }
  let build = spawnToEnd(["swift", "build", "--build-tests", "--package-path", package.path], output: log)
  print(String(format: "build: the package's tests (swift build --build-tests, debug) %.1f s, exit %d", build.seconds, build.status))
  guard build.status == 0 else {
    print((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
    return
  }
  fflush(nil)

  let swiftTest = ["swift", "test", "--skip-build", "--package-path", package.path]
  let harnessTest = [harness, "test", "--package-path", package.path, "--skip-build"]
  let json = scratch.appendingPathComponent("events.jsonl").path
  /// The median wall time of `shape.repeats` runs of `arguments`, and the last run's exit status.
  func median(_ label: String, _ arguments: [String], crash: Bool = false) -> (seconds: Double, status: Int32) {
    var runs: [SpawnResult] = []
    for _ in 0..<shape.repeats {
      runs.append(spawnToEnd(arguments, output: log, environment: crash ? ["HARNESS_BENCH_CRASH": "1"] : [:]))
    }
    let seconds = runs.map(\.seconds).sorted()[runs.count / 2]
    let runList = runs.map { String(format: "%.2f", $0.seconds) }.joined(separator: ", ")
    print(label.padding(toLength: 42, withPad: " ", startingAt: 0)
      + String(format: " %7.2f s", seconds) + "  (runs: \(runList); exit \(runs.last!.status))")
    fflush(nil)
    return (seconds, runs.last!.status)
  }

  let serialAnchor = median("swift test --skip-build", swiftTest)
  let serial = median("harness test --skip-build (--workers 1)", harnessTest + ["--workers", "1"])
  let parallelAnchor = median("swift test --parallel --skip-build", swiftTest + ["--parallel"])
  let parallel = median("harness test --skip-build --workers 4", harnessTest + ["--workers", "4"])
  // What every harness run pays before its first test, for the bundle's path and the list.
  _ = median("  its part: swift build --show-bin-path", ["swift", "build", "--show-bin-path", "--package-path", package.path])
  report.add(Row(label: "harness test · 1 worker", ours: serial.seconds,
                 anchorLabel: "swift test (target ≤ 1.25×)", anchor: serialAnchor.seconds, unit: "s"))
  report.add(Row(label: "harness test · --workers 4", ours: parallel.seconds,
                 anchorLabel: "swift test --parallel (target < 1×)", anchor: parallelAnchor.seconds, unit: "s"))

  // One crashing test in each library: what each run gets to.
  let total = 2 * shape.classes * shape.perClass + 2
  let crashed = spawnToEnd(swiftTest, output: log, environment: ["HARNESS_BENCH_CRASH": "1"])
  let swiftCounts = swiftTestCounts((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
  let harnessCrashed = spawnToEnd(harnessTest + ["--workers", "1", "--json", json], output: log,
                                  environment: ["HARNESS_BENCH_CRASH": "1"])
  let harnessCounts = harnessVerdicts(json)
  print("with a crashing test in the first XCTest class and the first Swift Testing suite (\(total) tests):")
  print("  swift test:   \(swiftCounts)" + String(format: " (%.2f s, exit %d)", crashed.seconds, crashed.status))
  print("  harness test: \(harnessCounts)"
    + String(format: " (%.2f s, exit %d)", harnessCrashed.seconds, harnessCrashed.status))
  report.note("part 10, a crashing test in each library (\(total) tests): swift test \(swiftCounts.description); "
    + "harness test \(harnessCounts)")
}

/// The `harness` executable: the one built beside this executable (the package's target
/// depends on the product, so `swift build`/`swift run` of harness-bench builds it in the same
/// configuration), else built from the root package in release, its build time printed.
private func harnessExecutable(log: String) -> String? {
  let beside = (Bundle.main.executableURL ?? URL(fileURLWithPath: "/proc/self/exe")).resolvingSymlinksInPath()
    .deletingLastPathComponent().appendingPathComponent("harness").path
  if FileManager.default.isExecutableFile(atPath: beside) {
    print("harness: \(beside) (built with harness-bench)")
    return beside
  }
  let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().path
  let build = spawnToEnd(["swift", "build", "-c", "release", "--product", "harness", "--package-path", root], output: log)
  print(String(format: "build: harness (release, root package) %.1f s, exit %d", build.seconds, build.status))
  let binPath = spawnToEnd(["swift", "build", "-c", "release", "--show-bin-path", "--package-path", root], output: log)
  let harness = (try? String(contentsOfFile: log, encoding: .utf8))?.split(separator: "\n").last
    .map { "\($0.trimmingCharacters(in: .whitespaces))/harness" } ?? ""
  guard build.status == 0, binPath.status == 0, FileManager.default.isExecutableFile(atPath: harness) else {
    print("the harness executable did not build: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
    return nil
  }
  return harness
}

/// How many classes (and as many suites) of how many tests part 10 generates, and how many
/// runs give each median.
struct ExistingTestsShape {
  var classes: Int
  var perClass: Int
  var repeats: Int
}

/// Writes a package with one test target: `shape.classes` XCTest classes and as many Swift
/// Testing suites, `shape.perClass` trivial tests each; the second test of the first class and
/// of the first suite reads an array past its end when `HARNESS_BENCH_CRASH=1`.
private func generateExistingTestsPackage(at package: URL, shape: ExistingTestsShape) throws {
  let tests = package.appendingPathComponent("Tests/BenchExistingTests")
  try FileManager.default.createDirectory(at: tests, withIntermediateDirectories: true)
  try """
    // swift-tools-version: 6.0
    import PackageDescription
    let package = Package(name: "BenchExisting", targets: [.testTarget(name: "BenchExistingTests")])

    """.write(to: package.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
  let crash = """
    import Foundation
    /// Reads an array past its end when HARNESS_BENCH_CRASH=1.
    func crashIfAsked() -> Int {
      let values = [1, 2, 3]
      let index = ProcessInfo.processInfo.environment["HARNESS_BENCH_CRASH"] == "1" ? values.count : 0
      return values[index]
    }

    """
  var xctest = "import XCTest\n\n"
  var swiftTesting = "import Testing\n\n"
  for group in 0..<shape.classes {
    xctest += "final class Class\(group)Tests: XCTestCase {\n"
    swiftTesting += "@Suite struct Suite\(group) {\n"
    for index in 0..<shape.perClass {
      if group == 0 && index == 1 {
        // XCTest on Linux runs a class's tests in name order: test0, test0Crashes, test1, test10…
        xctest += "  func test0Crashes() { XCTAssertEqual(crashIfAsked(), 1) }\n"
        swiftTesting += "  @Test func test0Crashes() { #expect(crashIfAsked() == 1) }\n"
      }
      xctest += "  func test\(index)() { XCTAssertEqual(\(index) + \(index), \(2 * index)) }\n"
      swiftTesting += "  @Test func test\(index)() { #expect(\(index) + \(index) == \(2 * index)) }\n"
    }
    xctest += "}\n\n"
    swiftTesting += "}\n\n"
  }
  try crash.write(to: tests.appendingPathComponent("Crash.swift"), atomically: true, encoding: .utf8)
  try xctest.write(to: tests.appendingPathComponent("XCTests.swift"), atomically: true, encoding: .utf8)
  try swiftTesting.write(to: tests.appendingPathComponent("SwiftTests.swift"), atomically: true, encoding: .utf8)
}

/// The tests `swift test` reported as ended, from its output (standard output and standard
/// error): XCTest's `Test Case '…' passed/failed (…)` lines, Swift Testing's `Test … passed
/// after` / `failed after` lines.
private struct SwiftTestCounts: CustomStringConvertible {
  var xctestEnded = 0
  var xctestStarted = 0
  var swiftTestingEnded = 0
  var swiftTestingStarted = 0
  var description: String {
    "XCTest \(xctestEnded) ended (\(xctestStarted) started), Swift Testing \(swiftTestingEnded) ended "
      + "(\(swiftTestingStarted) started): \(xctestEnded + swiftTestingEnded) reported"
  }
}

private func swiftTestCounts(_ output: String) -> SwiftTestCounts {
  var counts = SwiftTestCounts()
  for line in output.split(separator: "\n") {
    if line.hasPrefix("Test Case '") {
      if line.hasSuffix("' started.") || line.contains("' started at ") {
        counts.xctestStarted += 1
      } else if line.contains("' passed (") || line.contains("' failed (") || line.contains("' skipped (") {
        counts.xctestEnded += 1
      }
    } else if line.contains(" Test ") && !line.contains(" Test run ") {
      if line.hasSuffix(" started.") {
        counts.swiftTestingStarted += 1
      } else if line.contains(" passed after ") || line.contains(" failed after ") || line.contains(" skipped") {
        counts.swiftTestingEnded += 1
      }
    }
  }
  return counts
}

/// The tests a `harness test` JSON Lines stream ended, by verdict.
private func harnessVerdicts(_ path: String) -> String {
  var verdicts: [Verdict: Int] = [:]
  for line in ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n") {
    if case .testEnded(_, let result, _)? = (try? Event(jsonLine: line))?.kind { verdicts[result.verdict, default: 0] += 1 }
  }
  let ended = verdicts.values.reduce(0, +)
  return "\(ended) reported (" + Verdict.allCases.compactMap { verdict in
    verdicts[verdict].map { "\($0) \(verdict.rawValue)" }
  }.joined(separator: ", ") + ")"
}

/// How a spawned command went.
struct SpawnResult {
  var seconds: Double
  var status: Int32
}

/// Runs `arguments` (`posix_spawnp`, the first looked up on the `PATH`) with its standard
/// output and standard error into the file `output`, and waits for it (`waitpid`:
/// Foundation's `Process.waitUntilExit` polls every 50 ms on Linux).
func spawnToEnd(_ arguments: [String], output: String, environment: [String: String] = [:]) -> SpawnResult {
  let environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }.map { "\($0)=\($1)" }
  var actions = posix_spawn_file_actions_t()
  posix_spawn_file_actions_init(&actions)
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO)
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
  defer { posix_spawn_file_actions_destroy(&actions) }
  let argv = arguments.map { strdup($0) } + [nil]
  let envp = environment.map { strdup($0) } + [nil]
  defer { (argv + envp).forEach { free($0) } }
  var pid = pid_t()
  let start = monotonicNanos()
  guard posix_spawnp(&pid, arguments[0], &actions, nil, argv, envp) == 0 else { return SpawnResult(seconds: .nan, status: -1) }
  var status: Int32 = 0
  while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
  let seconds = Double(monotonicNanos() - start) / 1e9
  return SpawnResult(seconds: seconds, status: (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F))
}
