import AsyncHarness
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: 10. harness test against swift test

/// Three generated packages of XCTest and Swift Testing tests, one XCTest-heavy, one Swift
/// Testing-heavy, and one whose Swift Testing tests sit in one big suite (each blocking its
/// thread, so that one process runs them two at a time on two cores), each built once and run
/// by `swift test` and by the root package's `harness test` (the `harness` executable built
/// beside this one, a dependency of this target): wall time with one worker and with
/// `--workers 2` against `swift test`, and, with one crashing
/// test in the first class and in the first suite of the Swift Testing-heavy package
/// (`HARNESS_BENCH_CRASH=1`, the same build), how many tests each ran.
func measureHarnessTest(_ counts: Counts, _ report: Report) {
  let shape = counts.existingTests
  report.section("10. harness test against swift test: an XCTest-heavy and a Swift Testing-heavy package of "
    + "\(shape.classes)×\(shape.perClass) tests of one library and \(shape.perClass) of the other, each awaiting "
    + "\(shape.sleepMilliseconds) ms, and one of a Swift Testing suite of \(shape.classes * shape.perClass) tests that "
    + "each block \(shape.sleepMilliseconds) ms (wall, median of \(shape.repeats))")
  guard let scratch = makeScratch("existing") else { return }
  defer { try? FileManager.default.removeItem(at: scratch) }
  let log = scratch.appendingPathComponent("out.txt").path
  guard let harness = harnessExecutable(log: log) else { return }
  for heavy in ExistingTestsShape.Library.allCases {
    let package = scratch.appendingPathComponent("BenchExisting\(heavy.rawValue)")
    do {
      try generateExistingTestsPackage(at: package, shape: shape, heavy: heavy)
    } catch {
      print("cannot write the package: \(error)")
      return
    }
    let build = spawnToEnd(["swift", "build", "--build-tests", "--package-path", package.path], output: log)
    print(String(format: "build: the \(heavy.rawValue)-heavy package's tests (swift build --build-tests, debug) "
      + "%.1f s, exit %d", build.seconds, build.status))
    guard build.status == 0 else {
      print((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
      return
    }
    fflush(nil)
    measure(package, heavy: heavy, harness: harness, shape: shape, log: log, report: report,
            json: scratch.appendingPathComponent("events.jsonl").path)
  }
  profileSmallRun(in: scratch, harness: harness, repeats: max(shape.repeats, 5), log: log, report: report)
}

/// Where the time of a small run goes (issue 51): a package of 50 tests that pass at once (40
/// XCTest in 4 classes, 10 Swift Testing), built; each process a run starts, timed alone, beside
/// the whole runs of `swift test` and `harness test`, with and without `--skip-build`.
private func profileSmallRun(in scratch: URL, harness: String, repeats: Int, log: String, report: Report) {
  // HARNESS_BENCH_BASELINE_HARNESS names another build of `harness` (the one before a change),
  // timed beside this one in the same run on a copy of the package of its own (a kept listing
  // names the harness that listed it: the two builds would list again at every turn).
  let baseline = ProcessInfo.processInfo.environment["HARNESS_BENCH_BASELINE_HARNESS"]
  var packages: [URL] = []
  for name in ["BenchExistingSmall"] + (baseline == nil ? [] : ["BenchExistingSmallBaseline"]) {
    let package = scratch.appendingPathComponent(name)
    do {
      try generateExistingTestsPackage(at: package, shape: ExistingTestsShape(classes: 4, perClass: 10, sleepMilliseconds: 0,
                                                                              repeats: repeats), heavy: .xctest)
    } catch {
      return print("cannot write the package: \(error)")
    }
    guard spawnToEnd(["swift", "build", "--build-tests", "--package-path", package.path], output: log).status == 0 else {
      return print((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
    }
    packages.append(package)
  }
  let package = packages[0]
  let bundle = package.appendingPathComponent(".build/debug/BenchExistingPackageTests.xctest").path
  let here = ["--package-path", package.path]
  let baselineRows: [(String, [String])] = baseline.map { baseline in [
    ("harness test (baseline build)", [baseline, "test", "--package-path", packages[1].path]),
    ("harness test --skip-build (baseline build)", [baseline, "test", "--skip-build", "--package-path", packages[1].path]),
  ] } ?? []
  let rows: [(String, [String])] = baselineRows + [
    ("swift test", ["swift", "test"] + here),
    ("harness test", [harness, "test"] + here),
    ("swift test --skip-build", ["swift", "test", "--skip-build"] + here),
    ("harness test --skip-build", [harness, "test", "--skip-build"] + here),
    ("  SwiftPM with nothing to build (swift build --build-tests)", ["swift", "build", "--build-tests"] + here),
    ("  the XCTest listing (bundle --list-tests)", [bundle, "--list-tests"]),
    ("  the Swift Testing listing", [bundle, "--testing-library", "swift-testing", "--list-tests",
                                     "--event-stream-output-path", "/dev/null", "--event-stream-version", "0"]),
    ("  the XCTest tests alone (bundle)", [bundle]),
    ("  the Swift Testing tests alone (bundle --testing-library swift-testing)", [bundle, "--testing-library", "swift-testing"]),
  ]
  print("where a small run's time goes: 50 tests that pass at once (median of \(repeats), the rows in turns; harness test "
    + "--skip-build starts the two listings at once, then one bundle per library in its worker; harness test starts SwiftPM once before)")
  // Rows in turns, round after round, so that a change in the machine's load falls on every row.
  var runs: [String: [Double]] = [:]
  for _ in 0..<repeats {
    for (label, arguments) in rows { runs[label, default: []].append(spawnToEnd(arguments, output: log).seconds) }
  }
  var seconds: [String: Double] = [:]
  for (label, _) in rows {
    seconds[label] = runs[label]!.sorted()[repeats / 2]
    print(label.padding(toLength: 74, withPad: " ", startingAt: 0) + String(format: " %6.0f ms", seconds[label]! * 1000))
  }
  fflush(nil)
  report.add(Row(label: "harness test · 50 tests · 1 worker", ours: seconds["harness test"]!,
                 anchorLabel: "swift test (target ≤ 1.1×)", anchor: seconds["swift test"]!, unit: "s"))
  report.add(Row(label: "harness test --skip-build · 50 tests", ours: seconds["harness test --skip-build"]!,
                 anchorLabel: "swift test --skip-build (≤ 0.6×)", anchor: seconds["swift test --skip-build"]!, unit: "s"))
}

/// Part 10's runs of one package.
private func measure(_ package: URL, heavy: ExistingTestsShape.Library, harness: String, shape: ExistingTestsShape,
                     log: String, report: Report, json: String) {
  let swiftTest = ["swift", "test", "--skip-build", "--package-path", package.path]
  let harnessTest = [harness, "test", "--package-path", package.path, "--skip-build"]
  /// The median wall time of `shape.repeats` runs of `arguments`, and the last run's exit status.
  func median(_ label: String, _ arguments: [String]) -> (seconds: Double, status: Int32) {
    var runs: [SpawnResult] = []
    for _ in 0..<shape.repeats { runs.append(spawnToEnd(arguments, output: log)) }
    let seconds = runs.map(\.seconds).sorted()[runs.count / 2]
    let runList = runs.map { String(format: "%.2f", $0.seconds) }.joined(separator: ", ")
    print(label.padding(toLength: 42, withPad: " ", startingAt: 0)
      + String(format: " %7.2f s", seconds) + "  (runs: \(runList); exit \(runs.last!.status))")
    fflush(nil)
    return (seconds, runs.last!.status)
  }

  print("\(heavy.rawValue)-heavy:")
  let anchor = median("swift test --skip-build", swiftTest)
  let serial = median("harness test --skip-build (--workers 1)", harnessTest + ["--workers", "1"])
  let two = median("harness test --skip-build --workers 2", harnessTest + ["--workers", "2"])
  report.add(Row(label: "harness test · \(heavy.rawValue)-heavy · 1 worker", ours: serial.seconds,
                 anchorLabel: "swift test (target ≤ 1.1×)", anchor: anchor.seconds, unit: "s"))
  report.add(Row(label: "harness test · \(heavy.rawValue)-heavy · --workers 2", ours: two.seconds,
                 anchorLabel: "swift test (target < 1×)", anchor: anchor.seconds, unit: "s"))
  let trace = URL(fileURLWithPath: json).deletingLastPathComponent().appendingPathComponent("lanes.json").path
  _ = spawnToEnd(harnessTest + ["--workers", "2", "--trace", trace], output: log)
  print(laneProfile(trace: trace))
  guard heavy == .swiftTesting else { return }

  // One crashing test in each library: what each run gets to.
  let total = (shape.classes + 1) * shape.perClass + 2
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

/// Where the time of a run's lanes went, from its trace (`--trace`, each test an `X` slice on
/// its lane's track, in microseconds from the run's start): each lane's tests, the suites it
/// ran (a class cut in pieces counts in each lane that ran a piece), when its last test ended,
/// and how long it then waited for the other; and the tests that took over 50 ms, which here
/// are the machine's hiccups (each test waits 5 ms).
func laneProfile(trace: String) -> String {
  guard let data = FileManager.default.contents(atPath: trace),
        let events = (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["traceEvents"] as? [[String: Any]]
  else { return "  lanes: no trace at \(trace)" }
  var ends: [Int: Double] = [:]
  var tests: [Int: Int] = [:]
  var suites: [Int: Set<Substring>] = [:]
  var hiccups = 0
  for event in events where event["ph"] as? String == "X" {
    guard let lane = event["tid"] as? Int, let start = event["ts"] as? Double, let duration = event["dur"] as? Double,
          let name = event["name"] as? String else { continue }
    ends[lane] = max(ends[lane] ?? 0, (start + duration) / 1e6)
    tests[lane, default: 0] += 1
    suites[lane, default: []].insert(name.split(separator: "/").first ?? "")
    if duration > 50_000 { hiccups += 1 }
  }
  let last = ends.values.max() ?? 0
  return "  lanes of one --workers 2 run (--trace): " + ends.keys.sorted().map { lane in
    String(format: "lane %d: %d tests of %d suites, done at %.2f s (idle %.2f s)", lane, tests[lane] ?? 0,
           suites[lane]?.count ?? 0, ends[lane]!, last - ends[lane]!)
  }.joined(separator: "; ") + "; \(hiccups) tests over 50 ms"
}

/// A scratch directory of this process for a part (`harness-bench-<name>-<pid>` in the
/// temporary directory), made now; `nil`, said, when it cannot be. The part removes it.
func makeScratch(_ name: String) -> URL? {
  let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("harness-bench-\(name)-\(getpid())")
  do {
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
  } catch {
    print("cannot make \(scratch.path): \(error)")
    return nil
  }
  return scratch
}

/// The `harness` executable: the one built beside this executable (the package's target
/// depends on the product, so `swift build`/`swift run` of harness-bench builds it in the same
/// configuration), else built from the root package in release, its build time printed.
func harnessExecutable(log: String) -> String? {
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

/// The shape of part 10's packages: `classes` classes (or suites) of `perClass` tests of the
/// heavy library, one of the other, each test awaiting `sleepMilliseconds`, and how many runs
/// give each median.
struct ExistingTestsShape {
  /// The library a package has most tests of.
  enum Library: String, CaseIterable {
    case xctest = "XCTest"
    case swiftTesting = "SwiftTesting"
    /// Swift Testing tests in one suite that is not serialized, which only a cut can spread
    /// over workers: `classes × perClass` tests, each blocking its thread (`usleep`).
    case oneSuite = "OneSuite"
  }

  var classes: Int
  var perClass: Int
  var sleepMilliseconds: Int
  var repeats: Int
}

/// Writes a package with one test target: `shape.classes` XCTest classes or Swift Testing
/// suites (the `heavy` library) and one of the other, `shape.perClass` tests each, each
/// sleeping (XCTest) or awaiting a sleep (Swift Testing) for `shape.sleepMilliseconds`; the
/// second test of the first class and of the first suite reads an array past its end when
/// `HARNESS_BENCH_CRASH=1`.
private func generateExistingTestsPackage(at package: URL, shape: ExistingTestsShape,
                                          heavy: ExistingTestsShape.Library) throws {
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
  let sleep = shape.sleepMilliseconds
  var xctest = "import Foundation\nimport XCTest\n\n"
  var swiftTesting = "import Foundation\nimport Testing\n\n"
  for group in 0..<(heavy == .xctest ? shape.classes : 1) {
    xctest += "final class Class\(group)Tests: XCTestCase {\n"
    for index in 0..<shape.perClass {
      // XCTest on Linux runs a class's tests in name order: test0, test0Crashes, test1, test10…
      if group == 0 && index == 1 { xctest += "  func test0Crashes() { XCTAssertEqual(crashIfAsked(), 1) }\n" }
      xctest += "  func test\(index)() { usleep(\(sleep * 1000)); XCTAssertEqual(\(index) + \(index), \(2 * index)) }\n"
    }
    xctest += "}\n\n"
  }
  for group in 0..<(heavy == .swiftTesting ? shape.classes : 1) {
    swiftTesting += "@Suite struct Suite\(group) {\n"
    for index in 0..<(heavy == .oneSuite ? shape.classes * shape.perClass : shape.perClass) {
      if group == 0 && index == 1 { swiftTesting += "  @Test func test0Crashes() { #expect(crashIfAsked() == 1) }\n" }
      swiftTesting += heavy == .oneSuite
        ? "  @Test func test\(index)() {\n    usleep(\(sleep * 1000))\n    #expect(\(index) + \(index) == \(2 * index))\n  }\n"
        : "  @Test func test\(index)() async throws {\n"
          + "    try await Task.sleep(for: .milliseconds(\(sleep)))\n    #expect(\(index) + \(index) == \(2 * index))\n  }\n"
    }
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
    if case .testEnded(_, let result)? = (try? Event(jsonLine: line))?.kind { verdicts[result.verdict, default: 0] += 1 }
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
