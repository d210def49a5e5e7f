/// Merges JUnit reports (from shards, worker processes or separate runs) into one report.
///
/// Every top-level `<testsuite>` of every input is copied, in order, under one
/// `<testsuites>`. Counts are recomputed from the testcases, on each suite and in the
/// totals; times are rewritten with three decimals (a testcase without one gets `0.000`),
/// and all text is sanitized as the reporter does. The inputs are read with libxml2's
/// streaming reader, one suite at a time, and the output is written to a temporary file
/// renamed into place at the end, so `output` may also be one of the inputs.
///
/// ```swift
/// try mergeJUnitReports(["shard-1.xml", "shard-2.xml"], into: "junit.xml")
/// ```
///
/// - Parameters:
///   - inputs: The reports to merge, each with a `<testsuites>` or `<testsuite>` root.
///   - output: The merged report.
/// - Throws: ``JUnitError/unreadableReport(path:reason:)`` naming the first input that is
///   missing, unreadable, not well-formed or not a JUnit report;
///   ``JUnitError/destinationUnusable(path:reason:)`` when `output` cannot be written.
public func mergeJUnitReports(_ inputs: [String], into output: String) throws {
  let document = try JUnitDocument(destination: output)
  var time = 0.0
  for input in inputs {
    let root = try XMLReader.read(input, matching: { name, depth in name == "testsuite" && depth <= 1 }) { suite in
      time += try copy(suite, to: document)
    }
    guard root == "testsuites" || root == "testsuite" else {
      throw JUnitError.unreadableReport(path: input, reason: "not a JUnit report (the root element is <\(root)>)")
    }
  }
  try document.commit(name: "AsyncHarness", time: time)
}

/// Writes `suite` with recomputed counts and returns its time in seconds.
private func copy(_ suite: ParsedElement, to document: JUnitDocument) throws -> Double {
  var counts = JUnitCounts()
  var casesTime = 0.0
  for testCase in suite.elements(named: "testcase") {
    counts.count(resultElement: testCase.elements.first { ["failure", "error", "skipped"].contains($0.name) }?.name)
    casesTime += seconds(testCase.attribute("time")) ?? 0
  }
  let time = seconds(suite.attribute("time")) ?? casesTime
  let recomputed: Set = ["name", "tests", "failures", "errors", "skipped", "time", "timestamp"]
  try document.writeSuite(
    name: XMLText(suite.attribute("name") ?? "").nonBlank(or: "(unnamed suite)"), counts: counts, time: JUnitFormat.time(time),
    timestamp: suite.attribute("timestamp"),
    otherAttributes: suite.attributes.filter { !recomputed.contains($0.name) }
  ) { writer in
    for child in suite.children { try write(child, to: writer) }
  }
  return time
}

/// Copies a node, normalizing the `time` of testcases.
private func write(_ node: ParsedNode, to writer: XMLWriter) throws {
  switch node {
  case .text(let text):
    if !text.allSatisfy(\.isWhitespace) { try writer.text(XMLText(text)) }
  case .element(let element):
    try writer.startElement(element.name)
    for attribute in element.attributes where !(element.name == "testcase" && attribute.name == "time") {
      try writer.attribute(attribute.name, XMLText(attribute.value))
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
