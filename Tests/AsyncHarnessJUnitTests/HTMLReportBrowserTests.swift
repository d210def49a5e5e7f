import AsyncHarness
import Foundation
import XCTest

/// Issue 33: the page of the hostile run (``ReportTestCase/hostileRun(to:extra:)``) as a
/// person meets it, in Debian's `chromium` run headless: the names that would change the
/// page's title if their markup ran show as text and the title is unchanged; printed to PDF
/// (read back by `pdftotext`), it shows the sections and the names as written; and the page
/// is valid HTML to html5lib's strict parser. `.ci/install-browser` installs the three tools:
/// without them a test is skipped, except in CI (`CI=true`), where it fails.
final class HTMLReportBrowserTests: ReportTestCase {
  private static let validator = """
    import sys
    try:
        import html5lib
    except ImportError:
        sys.exit(3)
    try:
        html5lib.HTMLParser(strict=True).parse(open(sys.argv[1], "rb").read())
    except Exception as error:
        print(error)
        sys.exit(1)
    """

  func testChromiumShowsHostileNamesAsTextAndRunsNoScript() throws {
    let chromium = try installed("/usr/bin/chromium", by: "chromium")
    XCTAssertEqual(hostileRun(to: path("report.html")).status, 1)
    let run = try runToEnd(chromium, headless + ["--dump-dom", URL(fileURLWithPath: path("report.html")).absoluteString], limit: 120)
    XCTAssertEqual(run.status, 0, run.errors)
    let dom = run.output
    XCTAssertTrue(dom.contains("<title>\(URL(fileURLWithPath: CommandLine.arguments[0]).lastPathComponent): AsyncHarness run</title>"),
                  "a script in a test's name would have set the title: \(dom.prefix(300))")
    XCTAssertNil(dom.range(of: "<script", options: .caseInsensitive), "no script element")
    XCTAssertNil(dom.range(of: "<img", options: .caseInsensitive), "no image element")
    XCTAssertTrue(dom.contains("<h3>Hostile/&lt;script&gt;document.title=\"pwned\"&lt;/script&gt;</h3>"), dom)
    XCTAssertTrue(dom.contains("<h3>Hostile/&lt;img src=x onerror=\"document.title='pwned'\"&gt;</h3>"), dom)
    XCTAssertTrue(dom.contains("<pre class=\"message\">&lt;/pre&gt;&lt;script&gt;document.title='pwned'&lt;/script&gt; &amp; \"quoted\"</pre>"))
  }

  func testThePrintedPageShowsTheSectionsAndTheNamesAsWritten() throws {
    let chromium = try installed("/usr/bin/chromium", by: "chromium")
    let pdftotext = try installed("/usr/bin/pdftotext", by: "poppler-utils")
    XCTAssertEqual(hostileRun(to: path("report.html")).status, 1)
    let printed = try runToEnd(chromium, headless + ["--no-pdf-header-footer", "--print-to-pdf=\(path("report.pdf"))",
                                                     URL(fileURLWithPath: path("report.html")).absoluteString], limit: 120)
    XCTAssertEqual(printed.status, 0, printed.errors)
    let read = try runToEnd(pdftotext, [path("report.pdf"), "-"])
    XCTAssertEqual(read.status, 0, read.errors)
    let lines = read.output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }  // a page starts with \f
    let seen = ["Summary", "Failures (2)", "Hostile/<script>document.title=\"pwned\"</script>",
                "Hostile/<img src=x onerror=\"document.title='pwned'\">", "Flaky tests (1)", "Slowest tests", "Timeline",
                "lane 1: 7 attempts, busy"].map { heading in lines.firstIndex { $0.hasPrefix(heading) } }
    XCTAssertEqual(seen.compactMap(\.self).count, seen.count, "every heading is printed: \(read.output)")
    XCTAssertEqual(seen.compactMap(\.self), seen.compactMap(\.self).sorted(), "in the page's order: \(read.output)")
  }

  func testThePageIsValidHTMLToAStrictParser() throws {
    let python = try installed("/usr/bin/python3", by: "python3-html5lib")
    XCTAssertEqual(hostileRun(to: path("report.html")).status, 1)
    let run = try runToEnd(python, ["-c", Self.validator, path("report.html")])
    if run.status == 3 { try missing("html5lib", by: "python3-html5lib") }
    XCTAssertEqual(run.status, 0, run.output + run.errors)
    // The parser does refuse what the page must never hold: a control character, a stray end tag.
    for broken in ["<p>a\u{07}</p>", "<p>a</b></p>"] {
      try Data("<!DOCTYPE html><html><head><title>t</title></head><body>\(broken)</body></html>".utf8).write(to: URL(fileURLWithPath: path("broken.html")))
      XCTAssertEqual(try runToEnd(python, ["-c", Self.validator, path("broken.html")]).status, 1, broken)
    }
  }

  /// Headless, in a profile of this test's own.
  private var headless: [String] {
    ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=\(path("profile"))"]
  }

  /// The executable at `path`, which Debian's `package` installs.
  private func installed(_ path: String, by package: String) throws -> URL {
    if !FileManager.default.isExecutableFile(atPath: path) { try missing(path, by: package) }
    return URL(fileURLWithPath: path)
  }

  /// Skips the test for want of `tool`, or fails it in CI.
  private func missing(_ tool: String, by package: String) throws -> Never {
    let message = "\(tool) is not installed: bash .ci/install-browser installs Debian's \(package)"
    if ProcessInfo.processInfo.environment["CI"] == "true" { throw MissingTool(description: message + " (CI=true: required)") }
    throw XCTSkip(message)
  }

  private struct MissingTool: Error, CustomStringConvertible {
    var description: String
  }
}
