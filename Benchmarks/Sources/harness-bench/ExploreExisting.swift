import AsyncHarness
import Foundation

// MARK: 11. harness test --explore against plain runs

/// The root package's OrderingBugs fixture (four ordering bugs, each in an XCTest and a Swift
/// Testing test), built once: for each bug's test, how many of `--explore N`'s seeds find it
/// (`harness test --explore N --filter TEST`), against how many of M plain runs of the same
/// test fail (its bundle run as `swift test --skip-build --filter` runs it, each run in a
/// process of its own, a run still going after 5 s counted as hung); and the wall time of
/// exploring one test against as many plain runs of it.
func measureExploringExistingTests(_ counts: Counts, _ report: Report) {
  let (seeds, plainRuns) = counts.exploredExistingTests
  report.section("11. harness test --explore \(seeds) against \(plainRuns) plain runs of each bug's test "
    + "(Tests/Fixtures/OrderingBugs)")
  guard let scratch = makeScratch("explore") else { return }
  defer { try? FileManager.default.removeItem(at: scratch) }
  let log = scratch.appendingPathComponent("out.txt").path
  let json = scratch.appendingPathComponent("events.jsonl").path
  guard let harness = harnessExecutable(log: log) else { return }
  let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Tests/Fixtures/OrderingBugs").path
  let build = spawnToEnd(["swift", "build", "--build-tests", "--package-path", fixture, "--scratch-path", scratch.path],
                         output: log)
  print(String(format: "build: the fixture's tests (debug) %.1f s, exit %d", build.seconds, build.status))
  let bundle = scratch.appendingPathComponent("debug/OrderingBugsPackageTests.xctest").path
  guard build.status == 0, FileManager.default.isExecutableFile(atPath: bundle) else {
    print((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
    return
  }
  // Reentrancy, check-then-act, task-group order and a lost wake-up, in XCTest then Swift Testing.
  let methods = ["testTwoWithdrawalsNeverOverdraw", "testAThumbnailIsRenderedOnce", "testPagesComeInTheOrderAskedFor",
                 "testTheDoorbellWakesTheOneWaiting"]
  let functions = ["twoWithdrawalsNeverOverdraw()", "aThumbnailIsRenderedOnce()", "pagesComeInTheOrderAskedFor()",
                   "theDoorbellWakesTheOneWaiting()"]
  let bugs = methods.map { ("OrdersTests.OrdersXCTests/\($0)", [bundle, "OrdersTests.OrdersXCTests/\($0)"]) }
    + functions.map { ("OrdersTests.OrdersTests/\($0)", [bundle, "--testing-library", "swift-testing", "--filter", "OrdersTests/\($0)"]) }
  print("test".padding(toLength: 62, withPad: " ", startingAt: 0) + " explored: seeds finding it · plain: runs failing")
  for (index, (test, plain)) in bugs.enumerated() {
    let explored = spawnToEnd([harness, "test", "--package-path", fixture, "--skip-build", "--explore", String(seeds),
                               "--filter", test, "--json", json, "--", "--scratch-path", scratch.path], output: log)
    let found = failingSeeds(json)
    var failed = 0
    var plainSeconds = 0.0
    for _ in 0..<plainRuns {
      let run = spawnToEnd(["timeout", "5"] + plain, output: log)
      plainSeconds += run.seconds
      if run.status != 0 { failed += 1 }
    }
    print(test.padding(toLength: 62, withPad: " ", startingAt: 0)
      + String(format: " %3d of %d (%.0f %%, %.2f s) · %d of %d (%.0f %%, %.2f s)", found, seeds,
               100 * Double(found) / Double(seeds), explored.seconds, failed, plainRuns,
               100 * Double(failed) / Double(plainRuns), plainSeconds))
    fflush(nil)
    report.note("part 11, \(test): --explore \(seeds) found it in \(found) seeds, \(failed) of \(plainRuns) plain runs failed")
    // The wall time of one test explored against as many plain runs: the first, which never hangs.
    if index == 0 {
      report.add(Row(label: "harness test --explore \(seeds) · one XCTest test", ours: explored.seconds,
                     anchorLabel: "\(plainRuns) plain runs of its bundle ×\(seeds)/\(plainRuns)",
                     anchor: plainSeconds * Double(seeds) / Double(plainRuns), unit: "s"))
    }
  }
}

/// How many schedules of the run whose events are in `path` ended failing.
private func failingSeeds(_ path: String) -> Int {
  ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").count { line in
    guard case .testEnded(_, let result)? = (try? Event(jsonLine: line))?.kind else { return false }
    return result.verdict.isFailure
  }
}
