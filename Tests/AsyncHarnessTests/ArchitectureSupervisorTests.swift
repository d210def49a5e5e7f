import Foundation
import XCTest

/// docs/ARCHITECTURE.md draws the lane supervisor: what wakes its loop and the calls of its
/// state machine. This keeps the drawing true: every input of `WorkerSupervision` (its
/// mutating calls) is named on the page, every call the page names exists, and the loop
/// waits on each descriptor the page says wakes it.
final class ArchitectureSupervisorTests: XCTestCase {
  private static let root = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
  private static let supervision = root.appendingPathComponent("Sources/AsyncHarness/Executors/Supervision")

  /// The page's section on the supervisor.
  private func section() throws -> String {
    let page = try String(contentsOf: Self.root.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
    let start = try XCTUnwrap(page.range(of: "**The parent's side: the lane supervisor.**"), "the section is on the page")
    let end = try XCTUnwrap(page.range(of: "**When a worker is replaced.**", range: start.upperBound..<page.endIndex))
    return String(page[start.lowerBound..<end.lowerBound])
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
                      "ARCHITECTURE.md's supervisor section does not name the input \(input)")
    }
    // The diagram's arrows name the calls that move the state: `(what happens: call)`.
    let arrows = section.matches(of: /\(([^():]+): (\w+)\)/).map { String($0.2) }
    XCTAssertEqual(arrows, ["tick", "sawExit"], "the diagram's arrows")
    for call in arrows { XCTAssertTrue(code.contains("func \(call)("), "WorkerSupervision has no \(call), which the diagram names") }
  }

  func testTheLoopWaitsOnWhatThePageSaysWakesIt() throws {
    let section = try section()
    let watch = try source("WorkerWatch.swift")
    let wakers: [(page: String, code: String)] = [
      ("channel readable", "pollfd(fd: channelOpen ? channel"), ("output readable", "pollfd(fd: outputOpen ? process.output"),
      ("the process exited", "pollfd(fd: exitWatch"), ("the run interrupted", "stop?.descriptor"),
      ("the next deadline", "supervision.timeout(at:"), ("channel writable while requests wait", "POLLOUT"),
    ]
    for waker in wakers {
      XCTAssertTrue(section.contains(waker.page), "the page says \(waker.page) wakes the loop")
      XCTAssertTrue(watch.contains(waker.code), "WorkerWatch waits on \(waker.page) (\(waker.code))")
    }
  }
}
