@_spi(ForToolsIntegrationOnly) import AsyncHarness
import Foundation
import Synchronization

// MARK: 5. The scheduled strategy

/// How fast the scheduled strategy explores schedules, and what virtual time saves: a suite
/// whose waits total six delays or timeouts, under every strategy.
@MainActor
func measureScheduling(_ counts: Counts, _ report: Report) {
  report.section("5. The scheduled strategy: schedules explored per second, and a suite that waits \(format(6 * counts.timedWait)) s")
  for (label, test) in [("race on three queues (9 items)", raceTest()), ("fixed profile screen (decodes JSON)", profileTest())] {
    var configuration = Configuration()
    configuration.waiters = .named(ScheduledWaiter().name)
    configuration.explorations = counts.schedules
    let sampler = FailureSampler()
    let start = monotonicNanos()
    _ = try? Runner(suites: [Suite("explore") { test }], configuration: configuration, reporters: [sampler]).run()
    let seconds = Double(monotonicNanos() - start) / 1e9
    let perSecond = Double(counts.schedules) / seconds
    print(padded("--explore · \(label)") + String(format: " %10.0f schedules/s (%d schedules, %d failing issues)",
                                                   perSecond, counts.schedules, sampler.failures))
    report.add(Row(label: "schedules/s · \(label)", ours: perSecond, anchorLabel: "-", anchor: nil, unit: "/s"))
  }
  let total = 6 * counts.timedWait
  for waiter in WaiterRegistry.builtIn.waiters {
    let outcome = runOurs(timedTests(counts.timedWait), waiter: waiter, place: .main)
    print(padded("suite of delays and timeouts · \(waiter.name)")
            + String(format: " %10.3f s (waits total %.2f s; %d failing issues)", outcome.seconds, total, outcome.failures))
    report.add(Row(label: "waits of \(format(total)) s · \(waiter.name)", ours: outcome.seconds,
                   anchorLabel: "the waits' own total", anchor: total, unit: "s"))
  }
  measureSwiftConcurrency(counts, report)
}

/// Swift concurrency under the scheduled strategy: `--explore` of an `async` test whose tasks
/// sleep 60 s in all (virtual time), and the cost of a job taken into the schedule against
/// the same tasks on Swift's own executors (under `expectation`), measured before the first
/// scheduled `async` test installs the harness's executors, and again after (what every job
/// of the process pays for their forwarding).
@MainActor
private func measureSwiftConcurrency(_ counts: Counts, _ report: Report) {
  let (tasks, yields) = (counts.schedules / 10, 10)
  let jobs = Double(tasks * (yields + 1))
  let hops = Test("\(tasks) tasks of \(yields) yields") { t async throws in
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<tasks {
        group.addTask { for _ in 0..<yields { await Task.yield() } }
      }
    }
  }
  _ = runOurs([hops], waiter: ExpectationWaiter(), place: .main)  // warms the cooperative pool
  let platform = runOurs([hops], waiter: ExpectationWaiter(), place: .main)

  var configuration = Configuration()
  configuration.waiters = .named(ScheduledWaiter().name)
  configuration.explorations = 100
  let sleeps = Suite("sleeps") {
    Test("three tasks sleep 20 s each, then report") { t async throws in
      let done = t.expectation("all reported", expectedFulfillmentCount: 3)
      for _ in 0..<3 {
        Task {
          try await Task.sleep(for: .seconds(20))
          done.fulfill()
        }
      }
      try await t.wait(for: done, timeout: .seconds(120))
    }
  }
  let explored = runOurs([sleeps], configuration: configuration, executor: InProcessExecutor())
  print(padded("--explore 100 · three tasks sleep 20 s each")
          + String(format: " %10.3f s (sleeps total 6000 s; %d failing issues)", explored.seconds, explored.failures))
  report.add(Row(label: "--explore 100 of 60 s of Task.sleep · scheduled", ours: explored.seconds,
                 anchorLabel: "the sleeps' own total", anchor: 6_000, unit: "s"))

  let scheduled = runOurs([hops], waiter: ScheduledWaiter(), place: .main)
  let forwarded = runOurs([hops], waiter: ExpectationWaiter(), place: .main)
  for (label, outcome) in [("Swift's executors (expectation)", platform), ("scheduled", scheduled),
                           ("Swift's executors, harness's installed", forwarded)] {
    print(padded("per job · \(tasks) tasks of \(yields) yields · \(label)")
            + String(format: " %10.2f µs (%d failing issues)", outcome.seconds / jobs * 1e6, outcome.failures))
  }
  report.add(Row(label: "µs per Swift concurrency job · scheduled", ours: scheduled.seconds / jobs * 1e6,
                 anchorLabel: "Swift's executors", anchor: platform.seconds / jobs * 1e6, unit: "µs"))
  report.add(Row(label: "µs per job outside any test · harness's executors installed", ours: forwarded.seconds / jobs * 1e6,
                 anchorLabel: "Swift's executors", anchor: platform.seconds / jobs * 1e6, unit: "µs"))
}

private func format(_ seconds: Double) -> String { String(format: "%g", seconds) }

private func padded(_ label: String) -> String { label.padding(toLength: 54, withPad: " ", startingAt: 0) }

/// Work on three queues, some of it sent by other work: nine items a schedule.
private func raceTest() -> Test {
  Test("race") { t in
    let done = t.expectation("done", expectedFulfillmentCount: 6)
    let queues = [t.main, t.background, t.queue("io")]
    for (index, queue) in queues.enumerated() {
      queue.async { done.fulfill() }
      queue.async { queues[(index + 1) % 3].async { done.fulfill() } }
    }
    try t.wait(for: done)
  }
}

/// The examples' fixed profile screen, in miniature: a cached and a fresh answer, the fresh
/// one decoded from JSON on its own queue.
private func profileTest() -> Test {
  Test("profile") { t in
    let name = Mutex<(name: String, fresh: Bool)>(("", false))
    let answered = t.expectation("answered", expectedFulfillmentCount: 2)
    let (disk, network, decoding) = (t.queue("disk"), t.queue("network"), t.queue("decoding"))
    disk.async { t.main.async { name.withLock { if !$0.fresh { $0.name = "Ada" } }; answered.fulfill() } }
    network.async {
      decoding.async {
        let decoded = (try? JSONDecoder().decode([String: String].self, from: Data(#"{"name":"Ada Lovelace"}"#.utf8)))?["name"] ?? ""
        t.main.async { name.withLock { $0 = (decoded, true) }; answered.fulfill() }
      }
    }
    try t.wait(for: answered)
    t.expectEqual(name.withLock { $0.name }, "Ada Lovelace")
  }
}

/// Six tests: three retry after a delay and wait for it, three wait out a timeout (an
/// inverted expectation): six times `seconds` of waiting on real time.
private func timedTests(_ seconds: Double) -> [Test] {
  let delay = Duration.milliseconds(Int64(seconds * 1000))
  return (1...3).flatMap { index in [
    Test("retries after a delay \(index)") { t in
      let retried = t.expectation("retried")
      t.queue("retry").asyncAfter(delay) { retried.fulfill() }
      try t.wait(for: retried, timeout: delay * 2)
    },
    Test("nothing happens within the timeout \(index)") { t in
      let never = t.expectation("must not happen", isInverted: true)
      try t.wait(for: never, timeout: delay)
    },
  ] }
}
