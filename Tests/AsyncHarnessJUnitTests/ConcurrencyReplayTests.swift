import AsyncHarness
import Foundation
import HarnessTestSupport
import XCTest

/// Issue 21, end to end: the `harness-fixture` executable's lost update between two tasks,
/// explored under the scheduled strategy in a worker, then replayed from its token in two
/// more processes, which must give the same events and the same output, times (and how the
/// output was cut into events) aside.
final class ConcurrencyReplayTests: ReportTestCase {
  func testATokenReplaysTheSameInterleavingOfTasksInAnotherProcess() throws {
    let fixture = try harnessFixture()
    let explored = try runToEnd(fixture, ["--filter", "Concurrency/", "--explore", "30"], limit: 120)
    XCTAssertEqual(explored.status, 1, explored.output + explored.errors)
    let summary = try XCTUnwrap(explored.output.split(separator: "\n").first { $0.contains("[scheduled]: ") && $0.contains(" of 30 passed") },
                                explored.output)
    let counts = try XCTUnwrap(summary.components(separatedBy: "[scheduled]: ").last)
    let passed = try XCTUnwrap(Int(counts.prefix { $0.isNumber }), String(summary))
    XCTAssertTrue((1...29).contains(passed), "some schedules find the lost update, some do not: \(summary)")
    let token = try XCTUnwrap(explored.output.split(separator: "\n").first { $0.hasPrefix("    replay: --schedule ") }
      .map { String($0.dropFirst("    replay: --schedule ".count)) })

    var streams: [[String]] = []
    var outputs: [String] = []
    for run in 0..<2 {
      let events = path("replay-\(run).jsonl")
      let replay = try runToEnd(fixture, ["--schedule", token, "--json", events], limit: 120)
      XCTAssertEqual(replay.status, 1, replay.output + replay.errors)
      XCTAssertTrue(replay.output.contains("Expected 2, got 1"), replay.output)
      XCTAssertFalse(replay.output.contains("diverged"), "the replay took the token's steps: \(replay.output)")
      XCTAssertTrue(replay.output.contains("    replay: --schedule \(token)\n"), replay.output)
      let lines = try String(contentsOfFile: events, encoding: .utf8).split(separator: "\n")
      var output = ""
      streams.append(try lines.compactMap { line in
        let event = try Event(jsonLine: line).withoutTimes
        if case .outputCaptured(_, let text) = event.kind {
          output += text
          return nil
        }
        return event.jsonLine
      })
      outputs.append(output)
    }
    XCTAssertEqual(streams[0], streams[1])
    XCTAssertEqual(outputs[0], outputs[1])
    XCTAssertTrue(outputs[0].contains("task 0 loaded 0") && outputs[0].contains("task 1 loaded 0"),
                  "both tasks loaded before either saved: \(outputs[0])")
  }
}
