import AsyncHarness
import Foundation

// MARK: 11. harness test --explore against plain runs

/// The root package's OrderingBugs fixture (eight ordering bugs, four of Swift concurrency and
/// four of Dispatch, each in an XCTest and a Swift Testing test), built once: for each bug's test, how many of `--explore N`'s seeds find it
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
  // Reentrancy, check-then-act, task-group order and a lost wake-up, in XCTest then Swift Testing;
  // then the four Dispatch bugs (a write on a global queue, a first answer that wins, a write
  // on a concurrent queue without a barrier, a group left before its work is filed) in each.
  let methods = ["OrdersXCTests/testTwoWithdrawalsNeverOverdraw", "OrdersXCTests/testAThumbnailIsRenderedOnce",
                 "OrdersXCTests/testPagesComeInTheOrderAskedFor", "OrdersXCTests/testTheDoorbellWakesTheOneWaiting",
                 "DispatchOrdersXCTests/testTheLastThemeSavedIsKept", "DispatchOrdersXCTests/testTheCachedValueWins",
                 "DispatchOrdersXCTests/testTheTotalCountsEveryScore", "DispatchOrdersXCTests/testACompleteReportHasBothParts"]
  let functions = ["OrdersTests/twoWithdrawalsNeverOverdraw()", "OrdersTests/aThumbnailIsRenderedOnce()",
                   "OrdersTests/pagesComeInTheOrderAskedFor()", "OrdersTests/theDoorbellWakesTheOneWaiting()",
                   "DispatchOrdersTests/theLastThemeSavedIsKept()", "DispatchOrdersTests/theCachedValueWins()",
                   "DispatchOrdersTests/theTotalCountsEveryScore()", "DispatchOrdersTests/aCompleteReportHasBothParts()"]
  let bugs = methods.map { ("OrdersTests.\($0)", [bundle, "OrdersTests.\($0)"]) }
    + functions.map { ("OrdersTests.\($0)", [bundle, "--testing-library", "swift-testing", "--filter", "\($0)"]) }
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
    // The wall time of one test explored against as many plain runs: the first, which never
    // hangs, and the first Dispatch one.
    if index == 0 || test.hasSuffix("testTheLastThemeSavedIsKept") {
      report.add(Row(label: "harness test --explore \(seeds) · one \(index == 0 ? "" : "Dispatch ")XCTest test",
                     ours: explored.seconds, anchorLabel: "\(plainRuns) plain runs of its bundle ×\(seeds)/\(plainRuns)",
                     anchor: plainSeconds * Double(seeds) / Double(plainRuns), unit: "s"))
    }
  }
  measureScheduledDispatchBlock(harness: harness, fixture: fixture, bundle: bundle, scratch: scratch, seeds: seeds,
                                log: log, report)
}

/// The cost of one block under the schedule: a test that sends a thousand blocks to a serial
/// queue, explored under `seeds` schedules, against as many plain runs of it; the difference
/// per block.
private func measureScheduledDispatchBlock(harness: String, fixture: String, bundle: String, scratch: URL, seeds: Int,
                                           log: String, _ report: Report) {
  let test = "OrdersTests.DispatchCostTests/aThousandBlocksRunInTheOrderSent()"
  let explored = spawnToEnd([harness, "test", "--package-path", fixture, "--skip-build", "--explore", String(seeds),
                             "--filter", test, "--", "--scratch-path", scratch.path], output: log)
  var plainSeconds = 0.0
  for _ in 0..<seeds {
    plainSeconds += spawnToEnd([bundle, "--testing-library", "swift-testing", "--filter", "aThousandBlocksRunInTheOrderSent"],
                               output: log).seconds
  }
  let perBlock = max(0, explored.seconds - plainSeconds) / Double(seeds * 1_000) * 1_000_000
  print(String(format: "one Dispatch block under the schedule: %.1f µs more than Dispatch alone (%d schedules of 1,000 "
    + "blocks: %.2f s explored, %.2f s plain, exit %d)", perBlock, seeds, explored.seconds, plainSeconds, explored.status))
  report.note(String(format: "part 11: one scheduled Dispatch block costs %.1f µs more than Dispatch alone", perBlock))
}

/// How many schedules of the run whose events are in `path` ended failing.
private func failingSeeds(_ path: String) -> Int {
  ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").count { line in
    guard case .testEnded(_, let result)? = (try? Event(jsonLine: line))?.kind else { return false }
    return result.verdict.isFailure
  }
}
