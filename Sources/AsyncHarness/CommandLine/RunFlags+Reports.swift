import Foundation

extension RunFlags {
  /// Makes the reporters for `--json`, `--trace`, `--report-html` and `--junit`, checking every
  /// destination before any file is opened, so a bad path is a usage error before the first
  /// test and never empties an existing report.
  ///
  /// The JSON Lines, trace and HTML destinations are checked first (the trace and the page are
  /// written only when the run ends); the JUnit reporter then checks its own (and its profile)
  /// and creates only a temporary file beside it; the JSON Lines file is opened last.
  /// - Throws: ``UsageError``, ``ReportFileError`` or what `junit` throws.
  func fileReporters(junit factory: JUnitReporterFactory?, catalog: Catalog) throws -> [any Reporter] {
    if junitProfile != nil, junit == nil { throw UsageError("--junit-profile needs --junit PATH") }
    let named = [("--json", json), ("--trace", trace), ("--report-html", reportHTML), ("--junit", junit)]
      .compactMap { flag, path in path.map { (flag, $0) } }
    for (index, (flag, path)) in named.enumerated() {
      if let (other, first) = named[..<index].first(where: { URL(fileURLWithPath: $1).standardized == URL(fileURLWithPath: path).standardized }) {
        throw UsageError("\(other) and \(flag) name the same file \(first)")
      }
    }
    if let json, let reason = ReportDestination.problem(with: json) { throw ReportFileError(path: json, reason: reason) }
    // With both, one timeline: the trace places each event, the page reads its attempts at the end.
    let timeline = trace != nil && reportHTML != nil ? SharedTimeline(keepingAttempts: true) : nil
    let traceReporter: (any Reporter)? = try trace.map { path in
      try timeline.map { try TraceReporter(path: path, processName: HarnessOptions.executableName, timeline: $0) }
        ?? TraceReporter(path: path, processName: HarnessOptions.executableName)
    }
    let htmlReporter: (any Reporter)? = try reportHTML.map { path in
      try timeline.map { try HTMLReporter(path: path, title: HarnessOptions.executableName, sharing: $0) }
        ?? HTMLReporter(path: path, title: HarnessOptions.executableName)
    }
    let junitReporter = try junit.map { path in
      guard let factory else {
        throw UsageError("--junit needs the AsyncHarnessJUnit product: call HarnessMain.run(suites, junit: JUnitReporter.factory)")
      }
      return try factory(path, junitProfile ?? "standard", catalog)
    }
    let jsonReporter: (any Reporter)? = try json.map { try JSONLinesReporter(path: $0) }
    return [jsonReporter, traceReporter, htmlReporter, junitReporter].compactMap(\.self)
  }
}
