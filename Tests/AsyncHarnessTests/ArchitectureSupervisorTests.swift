import Foundation
import XCTest

/// The README of `Executors/Supervision/` (which docs/ARCHITECTURE.md links) draws a worker
/// process's watch: what wakes its loop (`WorkerWatch`) and the calls of its state machine
/// (`WorkerSupervision`). This keeps the drawing true: every input of `WorkerSupervision` (its
/// mutating calls) is named in the section, every call the drawing names exists, and the loop
/// waits on each descriptor the section says wakes it.
final class ArchitectureSupervisorTests: XCTestCase {
  private static let root = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
  private static let supervision = root.appendingPathComponent("Sources/AsyncHarness/Executors/Supervision")

  /// The README's section with the drawing, up to the next section or the page's end.
  private func section() throws -> String {
    let page = try String(contentsOf: Self.supervision.appendingPathComponent("README.md"), encoding: .utf8)
    let start = try XCTUnwrap(page.range(of: "\n## The watch, drawn\n"), "the section is on the page")
    let end = page.range(of: "\n## ", range: start.upperBound..<page.endIndex)?.lowerBound ?? page.endIndex
    return String(page[start.lowerBound..<end])
  }

  private func source(_ file: String) throws -> String {
    try String(contentsOf: Self.supervision.appendingPathComponent(file), encoding: .utf8)
  }

  func testEveryInputOfTheStateMachineIsOnThePageAndEveryCallTheDiagramNamesExists() throws {
    let section = try section()
    let code = try source("WorkerSupervision.swift")
    let inputs = code.matches(of: /\n  mutating func (\w+)\(/).map { String($0.1) }
    XCTAssertGreaterThanOrEqual(inputs.count, 8, "the state machine's inputs: \(inputs)")
    for input in inputs {
      XCTAssertNotNil(section.firstMatch(of: try Regex("\\b\(input)\\b")),
                      "Executors/Supervision/README.md's drawing section does not name the input \(input)")
    }
    // The diagram's arrows name the calls that move the state: `(what happens: call)`.
    let arrows = section.matches(of: /\(([^():]+): (\w+)\)/).map { String($0.2) }
    XCTAssertEqual(arrows, ["tick", "tick", "sawExit"], "the diagram's arrows")
    for call in arrows { XCTAssertTrue(code.contains("func \(call)("), "WorkerSupervision has no \(call), which the diagram names") }
  }

  func testTheLoopWaitsOnWhatThePageSaysWakesIt() throws {
    let section = try section()
    let watch = try source("WorkerWatch.swift") + source("LaneWatch.swift")
    let wakers: [(page: String, code: String)] = [
      ("channel readable", "pollfd(fd: reading && channelOpen ? channel"),
      ("output readable", "pollfd(fd: reading && outputOpen ? process.output"),
      ("the process exited", "pollfd(fd: exitWatch"), ("the run interrupted", "stop?.descriptor"),
      ("the next deadline", "supervision.timeout(at:"), ("channel writable while requests wait", "POLLOUT"),
    ]
    for waker in wakers {
      XCTAssertTrue(section.contains(waker.page), "the page says \(waker.page) wakes the loop")
      XCTAssertTrue(watch.contains(waker.code), "the lane's loop waits on \(waker.page) (\(waker.code))")
    }
  }
}
