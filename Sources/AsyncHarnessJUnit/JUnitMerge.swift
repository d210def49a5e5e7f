import AsyncHarness

/// What ``mergeJUnitReports(_:into:duplicates:expectShards:)`` does with a testcase (the same `classname`
/// and `name`) that appears more than once in its inputs. GitLab keeps only the first of
/// such testcases, so a merged report never holds two.
public enum JUnitDuplicates: String, Sendable, Hashable, CaseIterable {
  /// Refuse to merge, naming the first few duplicates and the inputs they appear in.
  case error
  /// Keep the last occurrence of each testcase (a rerun's result replaces the first run's).
  case keepLast = "keep-last"
  /// Keep every occurrence, renaming the later ones ` (2)`, ` (3)`, … past any name already
  /// used in the same classname.
  case rename
}

/// Merges JUnit reports (from shards, worker processes or separate runs) into one report.
///
/// Every top-level `<testsuite>` of every input is copied, in order, under one
/// `<testsuites>`; suites with the same name (in several inputs, or twice in one) become one
/// suite holding the testcases of each, written where the last of them was, with the
/// distinct properties of all, their times added up. Testcases that repeat (the same
/// `classname` and `name`) are handled as `duplicates` says. Counts are recomputed from the
/// testcases, on each suite and in the totals; times are rewritten with three decimals (a
/// testcase without one gets `0.000`); all text is sanitized as the reporter does and
/// attribute values are capped at 4 KiB. The inputs are read twice with libxml2's streaming
/// reader (once to find duplicates), one suite at a time; only suites that appear more than
/// once wait in memory for their last part. The output is written to a temporary file
/// renamed into place at the end, so `output` may also be one of the inputs.
///
/// With `expectShards` = N, the inputs must be the reports of one run's N shards, each
/// once: a sharded run names its report's root `AsyncHarness (shard I/N)`, so a shard
/// that crashed before writing its report, or a report given twice, is named.
///
/// ```swift
/// try mergeJUnitReports(["shard-1.xml", "shard-2.xml"], into: "junit.xml", expectShards: 2)
/// ```
///
/// - Parameters:
///   - inputs: The reports to merge, each with a `<testsuites>` or `<testsuite>` root.
///   - output: The merged report.
///   - duplicates: What to do with repeated testcases; ``JUnitDuplicates/error`` by default.
///   - expectShards: When set, the number of shards whose reports `inputs` must be.
/// - Throws: ``JUnitError/unreadableReport(path:reason:)`` naming the first input that is
///   missing, unreadable, not well-formed or not a JUnit report;
///   ``JUnitError/duplicateTestcases(count:examples:)`` for repeated testcases under
///   ``JUnitDuplicates/error``; ``JUnitError/incompleteShards(_:)`` when `inputs` are not
///   the reports of `expectShards` shards; ``JUnitError/destinationUnusable(path:reason:)``
///   when `output` cannot be written. Nothing is written then.
public func mergeJUnitReports(_ inputs: [String], into output: String, duplicates: JUnitDuplicates = .error,
                              expectShards: Int? = nil) throws {
  let document = try JUnitDocument(destination: output)
  var survey = Survey()
  let roots = try readSuites(of: inputs) { suite, input in survey.add(suite, from: input) }
  if let expectShards { try checkShards(roots, of: inputs, expected: expectShards) }
  if duplicates == .error, let error = survey.duplicatesError() { throw error }

  var merger = Merger(survey: survey, duplicates: duplicates)
  var time = 0.0
  try readSuites(of: inputs) { suite, _ in
    if let parts = merger.collect(suite) { time += try write(parts, merger: &merger, to: document) }
  }
  try document.commit(name: "AsyncHarness", time: time)
}

/// Calls `body` with each top-level `<testsuite>` of each input.
/// - Returns: each input's root element, without its children.
@discardableResult
private func readSuites(of inputs: [String], _ body: (ParsedElement, String) throws -> Void) throws -> [ParsedElement] {
  try inputs.map { input in
    let root = try XMLReader.read(input, matching: { name, depth in name == "testsuite" && depth <= 1 }) { suite in
      try body(suite, input)
    }
    guard root.name == "testsuites" || root.name == "testsuite" else {
      throw JUnitError.unreadableReport(path: input, reason: "not a JUnit report (the root element is <\(root.name)>)")
    }
    return root
  }
}

/// Checks that `roots` (of `inputs`) are the reports of shards 1 to `expected` of one run,
/// each once, from the shard their root's name gives (``JUnitReporter`` writes
/// `AsyncHarness (shard I/N)`).
private func checkShards(_ roots: [ParsedElement], of inputs: [String], expected: Int) throws {
  var reports: [Int: [String]] = [:]
  for (root, input) in zip(roots, inputs) {
    let name = root.attribute("name") ?? ""
    guard let shard = JUnitFormat.shard(fromReportName: name) else {
      throw JUnitError.incompleteShards("\(input) is not a shard's report (its root is named \"\(name)\", "
        + "not \"AsyncHarness (shard I/N)\")")
    }
    guard shard.count == expected else {
      throw JUnitError.incompleteShards("\(input) is the report of shard \(shard), not of one of \(expected) shards")
    }
    reports[shard.index, default: []].append(input)
  }
  if let (index, twice) = reports.sorted(by: { $0.key < $1.key }).first(where: { $0.value.count > 1 }) {
    throw JUnitError.incompleteShards("shard \(index)/\(expected) reported more than once: \(twice.joined(separator: ", "))")
  }
  let missing = (1...max(1, expected)).filter { reports[$0] == nil }
  guard missing.isEmpty else {
    throw JUnitError.incompleteShards(
      "no report of shard\(missing.count == 1 ? "" : "s") \(missing.map { "\($0)/\(expected)" }.joined(separator: ", ")) "
        + "(it may have ended before writing one); \(inputs.count) of \(expected) shards reported")
  }
}

/// A suite's name as written: sanitized, capped, never blank.
private func suiteName(_ suite: ParsedElement) -> XMLText {
  XMLText(attribute: suite.attribute("name") ?? "").nonBlank(or: "(unnamed suite)")
}

/// A testcase's identity as written, which dashboards use to tell testcases apart.
private struct Identity: Hashable {
  var classname: XMLText
  var name: XMLText

  /// The name leaves room for a ` (N)` suffix within ``XMLText/attributeLimit``.
  init(_ testCase: ParsedElement) {
    classname = XMLText(attribute: testCase.attribute("classname") ?? "")
    name = XMLText(attribute: testCase.attribute("name") ?? "", limit: XMLText.attributeLimit - 32)
  }
}

/// The first pass: how often each suite name and each testcase appears, and where.
private struct Survey {
  var suiteParts: [XMLText: Int] = [:]
  var occurrences: [Identity: [String]] = [:]
  /// Identities in the order first seen, for stable messages.
  var order: [Identity] = []

  mutating func add(_ suite: ParsedElement, from input: String) {
    suiteParts[suiteName(suite), default: 0] += 1
    for testCase in suite.elements(named: "testcase") {
      let identity = Identity(testCase)
      if occurrences[identity] == nil { order.append(identity) }
      occurrences[identity, default: []].append(input)
    }
  }

  func duplicatesError() -> JUnitError? {
    let repeated = order.filter { occurrences[$0]!.count > 1 }
    guard !repeated.isEmpty else { return nil }
    let examples = repeated.prefix(3).map { identity in
      let inputs = occurrences[identity]!
      let places = Set(inputs).count == 1 ? "\(inputs.count) times in \(inputs[0])" : inputs.joined(separator: ", ")
      return "\(identity.classname.string) / \(identity.name.string) (\(places))"
    }
    return JUnitError.duplicateTestcases(count: repeated.count, examples: examples)
  }
}

/// The second pass: gathers the parts of each suite and decides which testcases to keep.
private struct Merger {
  let survey: Survey
  let duplicates: JUnitDuplicates
  private var pending: [XMLText: [ParsedElement]] = [:]
  private var remaining: [Identity: Int]
  private var names: [XMLText: ReportNameSuffixer] = [:]

  init(survey: Survey, duplicates: JUnitDuplicates) {
    self.survey = survey
    self.duplicates = duplicates
    remaining = survey.occurrences.mapValues(\.count)
    if duplicates == .rename {
      let byClassname = Dictionary(grouping: survey.order, by: \.classname)
      names = byClassname.mapValues { ReportNameSuffixer(reserving: $0.map(\.name)) }
    }
  }

  /// Adds one part of a suite; returns all its parts once this was the last.
  mutating func collect(_ suite: ParsedElement) -> [ParsedElement]? {
    let name = suiteName(suite)
    let parts = pending[name, default: []] + [suite]
    guard parts.count == survey.suiteParts[name] else {
      pending[name] = parts
      return nil
    }
    pending[name] = nil
    return parts
  }

  /// The testcase as it is to be written (renamed if need be), or nil when a later
  /// occurrence replaces it.
  mutating func keep(_ testCase: ParsedElement) -> ParsedElement? {
    let identity = Identity(testCase)
    remaining[identity, default: 1] -= 1
    switch duplicates {
    case .error:
      return named(testCase, identity.name)
    case .keepLast:
      return remaining[identity] == 0 ? named(testCase, identity.name) : nil
    case .rename:
      return named(testCase, names[identity.classname, default: ReportNameSuffixer()].claim(identity.name))
    }
  }

  /// `testCase` with `name` as its name attribute.
  private func named(_ testCase: ParsedElement, _ name: XMLText) -> ParsedElement {
    var named = testCase
    named.attributes = testCase.attributes.filter { $0.name != "name" } + [ParsedAttribute(name: "name", value: name.string)]
    return named
  }
}

/// Writes the parts of one suite as one suite and returns its time in seconds.
private func write(_ parts: [ParsedElement], merger: inout Merger, to document: JUnitDocument) throws -> Double {
  var counts = JUnitCounts()
  var time = 0.0
  var properties: [ParsedElement] = []
  var testCases: [ParsedElement] = []
  var others: [ParsedNode] = []
  for part in parts {
    var casesTime = 0.0
    for child in part.children {
      guard case .element(let element) = child else { continue }
      switch element.name {
      case "properties":
        for property in element.elements where !properties.contains(property) { properties.append(property) }
      case "testcase":
        casesTime += seconds(element.attribute("time")) ?? 0
        guard let testCase = merger.keep(element) else { continue }
        counts.count(resultElement: testCase.elements.first { ["failure", "error", "skipped"].contains($0.name) }?.name)
        testCases.append(testCase)
      default:
        others.append(child)
      }
    }
    time += seconds(part.attribute("time")) ?? casesTime
  }
  let recomputed: Set = ["name", "tests", "failures", "errors", "skipped", "time", "timestamp"]
  try document.writeSuite(
    name: suiteName(parts[0]), counts: counts, time: JUnitFormat.time(time),
    timestamp: parts[0].attribute("timestamp"),
    otherAttributes: parts[0].attributes.filter { !recomputed.contains($0.name) }
  ) { writer in
    if !properties.isEmpty {
      try write(.element(ParsedElement(name: "properties", attributes: [], children: properties.map(ParsedNode.element))), to: writer)
    }
    for node in testCases.map(ParsedNode.element) + others { try write(node, to: writer) }
  }
  return time
}

/// Copies a node, normalizing the `time` of testcases and capping attribute values.
private func write(_ node: ParsedNode, to writer: XMLWriter) throws {
  switch node {
  case .text(let text):
    if !text.allSatisfy(\.isWhitespace) { try writer.text(XMLText(text)) }
  case .element(let element):
    try writer.startElement(element.name)
    for attribute in element.attributes where !(element.name == "testcase" && attribute.name == "time") {
      try writer.attribute(attribute.name, XMLText(attribute: attribute.value))
    }
    if element.name == "testcase" {
      try writer.attribute("time", XMLText(JUnitFormat.time(seconds(element.attribute("time")) ?? 0)))
    }
    for child in element.children { try write(child, to: writer) }
    try writer.endElement()
  }
}

/// A `time` attribute as seconds, when it is a number.
private func seconds(_ value: String?) -> Double? {
  value.flatMap(Double.init)
}
