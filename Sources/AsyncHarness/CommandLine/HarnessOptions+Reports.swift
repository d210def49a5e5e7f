import Foundation

extension HarnessOptions {
  /// Makes the reporters for `--json` and `--junit`, checking every destination before any
  /// file is opened, so a bad path is a usage error before the first test and never empties
  /// an existing report.
  ///
  /// The JSON Lines destination is checked first; the JUnit reporter then checks its own
  /// (and its profile) and creates only a temporary file beside it; the JSON Lines file is
  /// opened last.
  /// - Throws: ``UsageError``, ``ReportFileError`` or what `junit` throws.
  func fileReporters(junit factory: JUnitReporterFactory?, suites: [Suite]) throws -> [any Reporter] {
    if junitProfile != nil, junit == nil { throw UsageError("--junit-profile needs --junit PATH") }
    if let json, let junit, URL(fileURLWithPath: json).standardized == URL(fileURLWithPath: junit).standardized {
      throw UsageError("--json and --junit name the same file \(json)")
    }
    if let json, let reason = ReportDestination.problem(with: json) { throw ReportFileError(path: json, reason: reason) }
    let junitReporter = try junit.map { path in
      guard let factory else {
        throw UsageError("--junit needs the AsyncHarnessJUnit product: call HarnessMain.run(suites, junit: JUnitReporter.factory)")
      }
      return try factory(path, junitProfile ?? "standard", suites)
    }
    let jsonReporter: (any Reporter)? = try json.map { try JSONLinesReporter(path: $0) }
    return [jsonReporter, junitReporter].compactMap(\.self)
  }
}
