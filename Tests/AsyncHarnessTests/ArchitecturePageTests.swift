import Foundation
import XCTest

/// docs/ARCHITECTURE.md is the page a newcomer reads first, and the READMEs it links beside the
/// code hold the detail. This keeps them short and true: the page stays at most 300 lines; every
/// file path either names in backticks exists; every relative link resolves; every type a
/// "where things live" table names is declared; the page's picture of a lane names each worker
/// `WorkerExecutor` holds; the executors' README names every way an attempt ends; and every
/// README beside the code is excluded from the build.
final class ArchitecturePageTests: XCTestCase {
  private static let root = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
  private static let page = root.appendingPathComponent("docs/ARCHITECTURE.md")
  private static let core = root.appendingPathComponent("Sources/AsyncHarness")

  private func text(_ url: URL) throws -> String { try String(contentsOf: url, encoding: .utf8) }

  /// The page and the READMEs it links to.
  private func pages() throws -> [URL] {
    let links = try relativeLinks(in: Self.page).map(\.url).filter { $0.lastPathComponent == "README.md" }
    XCTAssertGreaterThanOrEqual(links.count, 6, "the page links the READMEs beside the code")
    return [Self.page] + Set(links.map(\.standardizedFileURL)).sorted { $0.path < $1.path }
  }

  /// `markdown` without its fenced code blocks.
  private func prose(_ markdown: String) -> String {
    markdown.replacingOccurrences(of: #"(?ms)^```.*?^```[^\n]*$"#, with: "", options: .regularExpression)
  }

  /// The code spans of `markdown`'s prose and tables.
  private func codeSpans(_ markdown: String) -> [String] {
    prose(markdown).components(separatedBy: "`").enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
  }

  /// The section of `markdown` under the heading `heading`, up to the next heading of its level.
  private func section(_ heading: String, of markdown: String) throws -> String {
    let start = try XCTUnwrap(markdown.range(of: "\n\(heading)\n"), "no section \(heading)")
    let end = markdown.range(of: "\n## ", range: start.upperBound..<markdown.endIndex)?.lowerBound ?? markdown.endIndex
    return String(markdown[start.upperBound..<end])
  }

  /// The relative links of `file`'s prose (not `http:`, `https:`, `mailto:`), resolved, with
  /// their anchors.
  private func relativeLinks(in file: URL) throws -> [(target: String, url: URL, anchor: String?)] {
    let markdown = prose(try text(file))
    let links = markdown.matches(of: /\]\(([^)\s]+)\)/).map { String($0.1) }
    return links.filter { !$0.contains(":") }.map { link in
      let parts = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
      let url = parts[0].isEmpty ? file : file.deletingLastPathComponent().appendingPathComponent(parts[0])
      return (link, url, parts.count > 1 ? parts[1] : nil)
    }
  }

  /// Every Swift source of the package's modules, as one text.
  private func sources() throws -> String {
    let sources = Self.root.appendingPathComponent("Sources")
    let enumerator = try XCTUnwrap(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
    var all = ""
    for case let url as URL in enumerator where url.pathExtension == "swift" { all += try text(url) + "\n" }
    return all
  }

  func testThePageIsAtMost300Lines() throws {
    let lines = try text(Self.page).split(separator: "\n", omittingEmptySubsequences: false).count
    XCTAssertLessThanOrEqual(lines, 300, "docs/ARCHITECTURE.md is read first: move detail to the READMEs beside the code")
  }

  /// Issue 52: a source file holds one concern a reader takes in at once, at most 400 lines.
  func testNoSourceFileIsOver400Lines() throws {
    let sources = Self.root.appendingPathComponent("Sources")
    let enumerator = try XCTUnwrap(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
    var long: [String] = []
    for case let url as URL in enumerator where url.pathExtension == "swift" {
      let lines = try text(url).split(separator: "\n", omittingEmptySubsequences: false).count
      if lines > 400 { long.append("\(url.path.dropFirst(sources.path.count + 1)): \(lines) lines") }
    }
    XCTAssertEqual(long, [], "split these by concern")
  }

  /// A code span that names a file or a folder of the package (`Running/Runner.swift`,
  /// `Executors/Worker/`, `WorkerExecutor.swift`) names one that exists: from the page's folder,
  /// the package's root, the core module's folder or `docs/`. A system path (`/proc`), a
  /// placeholder (`api/<Module>.txt`) and a span with a space are not file paths of the package.
  func testEveryFilePathThePagesNameExists() throws {
    var checked = 0
    for page in try pages() {
      let bases = [page.deletingLastPathComponent(), Self.root, Self.core, Self.root.appendingPathComponent("docs")]
      for span in Set(codeSpans(try text(page))) {
        guard span.contains("/") || span.hasSuffix(".swift") || span.hasSuffix(".md"),
              !span.hasPrefix("/"), !span.hasPrefix("-"), !span.contains(" "),
              span.rangeOfCharacter(from: CharacterSet(charactersIn: "<>{}\"(…")) == nil else { continue }
        checked += 1
        XCTAssertTrue(bases.contains { exists(span, in: $0) }, "\(page.lastPathComponent) in \(page.deletingLastPathComponent().lastPathComponent)/ names `\(span)`, which is not a file of the package")
      }
    }
    XCTAssertGreaterThan(checked, 30, "the pages name files")
  }

  /// Whether `path` names a file or folder under `base`; a `*` in its last component matches any characters.
  private func exists(_ path: String, in base: URL) -> Bool {
    guard path.contains("*") else { return FileManager.default.fileExists(atPath: base.appendingPathComponent(path).path) }
    let folder = base.appendingPathComponent(path).deletingLastPathComponent()
    let pattern = "^" + NSRegularExpression.escapedPattern(for: (path as NSString).lastPathComponent)
      .replacingOccurrences(of: "\\*", with: ".*") + "$"
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
    return names.contains { $0.range(of: pattern, options: .regularExpression) != nil }
  }

  func testEveryRelativeLinkOfThePagesResolves() throws {
    for page in try pages() {
      for link in try relativeLinks(in: page) {
        XCTAssertTrue(FileManager.default.fileExists(atPath: link.url.path), "\(page.path): the link \(link.target) names no file")
        guard let anchor = link.anchor, link.url.pathExtension == "md" else { continue }
        let headings = try text(link.url).split(separator: "\n").compactMap { $0.wholeMatch(of: /#{1,6} +(.+)/)?.1 }.map { title in
          String(title).lowercased().filter { $0.isLetter || $0.isNumber || $0 == " " || $0 == "-" }
            .replacingOccurrences(of: " ", with: "-")
        }
        XCTAssertTrue(headings.contains(anchor), "\(page.path): the link \(link.target) names no heading")
      }
    }
  }

  /// The rule for type names: a code span in a "where things live" table (the page's, and each
  /// README's table of files) or in the page's "Where this is going" that reads as a type
  /// (`WorkerWatch`), a member of one (`OutputTail.tail`, `Catalog.Host`) or a call of one
  /// (`Catalog(existing:)`): each capitalised name is declared as a type somewhere in
  /// `Sources/` (or, alone, is a target of the package: a module), and the member, when there
  /// is one, as a property, function or case.
  func testEveryTypeTheTablesNameIsDeclared() throws {
    let page = try text(Self.page)
    var spans = try tableRows(section("## Where things live", of: page)).flatMap(codeSpans)
    spans += codeSpans(try section("## Where this is going", of: page))
    for readme in try pages().dropFirst() {
      let markdown = try text(readme)
      guard let table = markdown.range(of: "\n| file | what it holds |\n") else { continue }
      spans += tableRows(String(markdown[table.lowerBound...])).flatMap(codeSpans)
    }
    let code = try sources()
    let manifest = try text(Self.root.appendingPathComponent("Package.swift"))
    var checked = 0
    for span in Set(spans) {
      guard !span.hasSuffix(".swift"), !span.hasSuffix(".md"),
            let name = span.wholeMatch(of: /([A-Z][A-Za-z0-9]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(?:\(.*\))?/)?.1 else { continue }
      checked += 1
      // A module (`AsyncHarnessShared`) is a target of the package.
      if !name.contains("."), manifest.contains("name: \"\(name)\"") { continue }
      for part in name.split(separator: ".") {
        let declaration = part.first!.isUppercase ? "(struct|class|enum|protocol|actor|typealias)" : "(var|let|func|case)"
        XCTAssertNotNil(code.range(of: #"\b\#(declaration)\s+\#(part)\b"#, options: .regularExpression),
                        "`\(span)` is named in a table of where things live, but `\(part)` is declared nowhere in Sources/")
      }
    }
    XCTAssertGreaterThan(checked, 50, "the tables name types")
  }

  /// The rows of the first table in `markdown`, header and rule left out.
  private func tableRows(_ markdown: String) -> [String] {
    let lines = markdown.split(separator: "\n").drop { !$0.hasPrefix("|") }.prefix { $0.hasPrefix("|") }
    return lines.dropFirst(2).map(String.init)
  }

  /// The page's picture of a lane names each slot a `WorkerExecutor`'s lane holds a worker in
  /// (each case of `WorkerLaneMachine.Slot`), and each part of a worker: the driver's
  /// (`WorkerConnection`) and the machine's (`WorkerLaneMachine.WorkerState`).
  func testThePictureOfALaneNamesEachWorkerTheExecutorHolds() throws {
    let picture = try XCTUnwrap(section("## A lane and its workers", of: text(Self.page)).components(separatedBy: "```").dropFirst().first)
    let events = try text(Self.core.appendingPathComponent("Executors/Worker/WorkerLaneMachine+Events.swift"))
    let slots = try XCTUnwrap(events.components(separatedBy: "enum Slot").dropFirst().first?.components(separatedBy: "\n  }").first)
    let workers = Set(slots.matches(of: /\n    case (\w+)/).map { String($0.1) })
    XCTAssertGreaterThanOrEqual(workers.count, 3, "the lane's slots: \(workers)")
    let drawn = Set(picture.matches(of: /[├└]─ (\w+) ─+ WorkerConnection/).map { String($0.1) })
    XCTAssertEqual(drawn, workers, "the lane's picture draws a worker in each slot of the lane")
    var parts: [String] = []
    for (file, type) in [("WorkerConnection.swift", "struct WorkerConnection {"), ("WorkerLaneMachine+Workers.swift", "struct WorkerState {")] {
      let source = try text(Self.core.appendingPathComponent("Executors/Worker/\(file)"))
      let body = try XCTUnwrap(source.components(separatedBy: type).dropFirst().first?.components(separatedBy: "\n    init(").first?
        .components(separatedBy: "\n  init(").first)
      parts += body.split(separator: "\n").compactMap { $0.wholeMatch(of: /\ +(?:let|var) \w+: (Worker\w+)/)?.1 }.map(String.init)
    }
    XCTAssertGreaterThanOrEqual(parts.count, 4, "a worker's parts: \(parts)")
    for part in parts { XCTAssertTrue(picture.contains("─ \(part) "), "the lane's picture shows a worker's \(part)") }
  }

  /// The executors' README has a row for each case of `AttemptEnd`, with its labels.
  func testTheExecutorsREADMENamesEveryWayAnAttemptEnds() throws {
    let readme = try text(Self.core.appendingPathComponent("Executors/README.md"))
    let rows = try tableRows(section("## How an attempt ends", of: readme))
    let named = Set(rows.compactMap { codeSpans($0).first })
    let source = try text(Self.core.appendingPathComponent("Executors/TestExecutor.swift"))
    let enumBody = try XCTUnwrap(source.components(separatedBy: "enum AttemptEnd").dropFirst().first?.components(separatedBy: "\n}").first)
    let cases = Set(enumBody.split(separator: "\n").compactMap { $0.wholeMatch(of: /\ \ case (\w+)\((.*)\)/) }.map { match in
      let labels = match.2.split(separator: ",").map { parameter in
        let words = parameter.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
        return words.count == 2 && !words[0].contains(" ") ? "\(words[0]):" : "_:"
      }
      return "\(match.1)(\(labels.joined()))"
    })
    XCTAssertGreaterThanOrEqual(cases.count, 6, "AttemptEnd's cases: \(cases)")
    XCTAssertEqual(named, cases, "Executors/README.md's table of how an attempt ends")
  }

  /// SwiftPM warns of a file in a target's folder it does not handle: each README beside the
  /// core module's code is in its target's `exclude`.
  func testEveryREADMEBesideTheCodeIsExcludedFromTheBuild() throws {
    let manifest = try text(Self.root.appendingPathComponent("Package.swift"))
    let enumerator = try XCTUnwrap(FileManager.default.enumerator(at: Self.core, includingPropertiesForKeys: nil))
    var found = 0
    for case let url as URL in enumerator where url.lastPathComponent == "README.md" {
      let path = String(url.standardizedFileURL.path.dropFirst(Self.core.standardizedFileURL.path.count + 1))
      guard !path.hasPrefix("Shared/") else { continue }
      found += 1
      XCTAssertTrue(manifest.contains("\"\(path)\""), "Package.swift does not exclude \(path) from AsyncHarness")
    }
    XCTAssertGreaterThanOrEqual(found, 6)
  }
}
