import Foundation
import XCTest

/// docs/ARCHITECTURE.md's thread table names, for each kind of thread, the files of the core
/// module that start it. This keeps that column true: a file that starts a thread, a timer,
/// a signal source or a queue must be named there, and a file named there must start one.
final class ArchitectureThreadsTests: XCTestCase {
  private static let root = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
  private static let core = root.appendingPathComponent("Sources/AsyncHarness")

  /// What starts a thread, or hands work to one, in Foundation and Dispatch: patterns for
  /// whole words.
  private static let starters = [
    #"\bThread\.detachNewThread\b"#, #"\bThread \{"#, #"\bThread\(block"#, #"\bpthread_create\b"#,
    #"\bDispatchQueue\.global\("#, #"queue: \.global\(\)"#, #"\bDispatchQueue\(label"#, #"\bmakeSignalSource\b"#,
    #"\bmakeTimerSource\b"#,
  ]

  /// The files of the core module whose code (not their comments) starts a thread.
  private func startingFiles() throws -> Set<String> {
    let enumerator = try XCTUnwrap(FileManager.default.enumerator(at: Self.core, includingPropertiesForKeys: nil))
    var files: Set<String> = []
    for case let url as URL in enumerator where url.pathExtension == "swift" {
      let code = try String(contentsOf: url, encoding: .utf8).split(separator: "\n")
        .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
        .joined(separator: "\n")
      if Self.starters.contains(where: { code.range(of: $0, options: .regularExpression) != nil }) {
        files.insert(String(url.path.dropFirst(Self.core.path.count + 1)))
      }
    }
    return files
  }

  /// The files the thread table's last column names, by row.
  private func tableFiles() throws -> [String: [String]] {
    let page = try String(contentsOf: Self.root.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
    let section = try XCTUnwrap(page.components(separatedBy: "## Threads").dropFirst().first?
      .components(separatedBy: "\n## ").first)
    var rows: [String: [String]] = [:]
    for line in section.split(separator: "\n") where line.hasPrefix("| ") && !line.hasPrefix("| ---") {
      let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
      guard cells.count == 3, cells[0] != "thread" else { continue }
      rows[cells[0]] = cells[2].components(separatedBy: "`").enumerated()
        .filter { $0.offset % 2 == 1 && $0.element.hasSuffix(".swift") }.map(\.element)
    }
    return rows
  }

  func testEveryFileThatStartsAThreadIsNamedInTheThreadTableAndNoOtherIs() throws {
    let rows = try tableFiles()
    XCTAssertGreaterThanOrEqual(rows.count, 6, "the table has its rows: \(rows.keys.sorted())")
    let named = Set(rows.values.joined())
    let starting = try startingFiles()
    XCTAssertEqual(starting.subtracting(named).sorted(), [], "start a thread but are not in the table")
    XCTAssertEqual(named.subtracting(starting).sorted(), [], "are in the table but start no thread")
  }
}
