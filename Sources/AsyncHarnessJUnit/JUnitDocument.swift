import AsyncHarness
import Foundation

/// A JUnit report being written, shared by ``JUnitReporter`` and ``mergeJUnitReports(_:into:)``.
///
/// `<testsuites>` carries totals, which are known only at the end, while memory must stay
/// flat: so suites stream into a temporary body file as they complete, and ``commit(name:time:)``
/// writes the final temporary file (declaration, `<testsuites>` with the totals, the body) and
/// renames it onto the destination. Until then the destination is untouched, so a crash
/// never leaves a torn report; the temporary files are removed when the document goes away.
final class JUnitDocument {
  /// Where the report goes.
  let destination: String
  /// The totals of the suites written so far.
  private(set) var counts = JUnitCounts()
  /// How many suites were written so far.
  private var suites = 0
  /// The directory the report and its temporary files are written in.
  let directory: String
  private let fileName: String
  private let body: XMLWriter

  /// Checks that `destination` can be written and opens the body file next to it.
  /// - Throws: ``JUnitError/destinationUnusable(path:reason:)`` when `destination` ends in
  ///   `/` or is a directory, its directory is missing, not a directory or cannot hold a new
  ///   file, or its name is too long for the temporary file beside it.
  init(destination: String) throws {
    // Absolute from the start: a test that changes directory cannot move the report.
    let url = URL(fileURLWithPath: RunDirectory.absolute(destination))
    directory = url.deletingLastPathComponent().path
    fileName = url.lastPathComponent
    self.destination = destination
    let bodyName = fileName + ".body"
    let stagingBytes = XMLWriter.temporaryName(for: bodyName).utf8.count - fileName.utf8.count
    if let reason = ReportDestination.problem(with: destination, stagingBytes: stagingBytes) {
      throw JUnitError.destinationUnusable(path: destination, reason: reason)
    }
    TemporaryFiles.removeStale(of: [bodyName, fileName], in: directory, olderThan: Date())
    body = try XMLWriter(temporaryFileIn: directory, named: bodyName, for: destination)
    // Declaring the encoding keeps libxml2 from writing non-ASCII characters in attributes as
    // character references; commit(name:time:) copies the body without this declaration.
    try body.startDocument()
  }

  /// Writes one `<testsuite>`: its attributes, then whatever `contents` writes (properties and
  /// testcases), and adds `counts` to the totals.
  func writeSuite(
    name: XMLText, counts: JUnitCounts, time: String, timestamp: String?,
    otherAttributes: [ParsedAttribute] = [], contents: (XMLWriter) throws -> Void
  ) throws {
    try body.startElement("testsuite")
    try body.attribute("name", name)
    try body.attribute("tests", XMLText(String(counts.tests)))
    try body.attribute("failures", XMLText(String(counts.failures)))
    try body.attribute("errors", XMLText(String(counts.errors)))
    try body.attribute("skipped", XMLText(String(counts.skipped)))
    try body.attribute("time", XMLText(time))
    if let timestamp { try body.attribute("timestamp", XMLText(timestamp)) }
    for attribute in otherAttributes {
      try body.attribute(attribute.name, XMLText(attribute: attribute.value))
    }
    try contents(body)
    try body.endElement()
    self.counts.add(counts)
    suites += 1
  }

  /// Writes the report and renames it onto the destination. A report of no suite (a run of no
  /// test) gets one, empty and named as the report: the Surefire schema and the dashboards'
  /// readers want at least one `<testsuite>`.
  func commit(name: String, time: Double) throws {
    if suites == 0 {
      try writeSuite(name: XMLText(attribute: name), counts: JUnitCounts(), time: JUnitFormat.time(time), timestamp: nil) { _ in }
    }
    try body.closeFile()
    let report = try XMLWriter(temporaryFileIn: directory, named: fileName, for: destination)
    try report.startDocument()
    try report.startElement("testsuites")
    try report.attribute("name", XMLText(name))
    try report.attribute("time", XMLText(JUnitFormat.time(time)))
    try report.attribute("tests", XMLText(String(counts.tests)))
    try report.attribute("failures", XMLText(String(counts.failures)))
    try report.attribute("errors", XMLText(String(counts.errors)))
    try report.appendContents(afterDeclarationOf: body)
    try report.endDocument()
    try report.closeFile()
    try report.moveInto(place: directory + "/" + fileName)
  }
}
