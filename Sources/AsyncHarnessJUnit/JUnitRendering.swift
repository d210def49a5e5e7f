@_spi(ForToolsIntegrationOnly) import AsyncHarness

/// Writing a finished suite of the report: its `<testsuite>` with its properties, and each
/// testcase with its result, its earlier attempts and its output, as the Surefire schema
/// orders them.
extension JUnitReport {
  /// The result element a verdict is written as; counts come from the same function.
  private static func resultElement(_ verdict: Verdict) -> String? {
    switch verdict {
    case .passed, .flaky: nil
    case .failed: "failure"
    case .errored: "error"
    case .skipped, .knownIssue: "skipped"
    }
  }

  /// Writes `suite` to `document` as one `<testsuite>` and adds its time to ``suitesTime``.
  func write(_ suite: OpenSuite, duration: Double, to document: JUnitDocument) throws {
    // First pass: the counts, and the names to reserve; the second writes the testcases.
    var counts = JUnitCounts()
    var reserved: [XMLText] = []
    try suite.forEachCase(naming: testName) { testCase in
      counts.count(resultElement: Self.resultElement(testCase.result.verdict))
      reserved.append(testCase.name.value)
    }
    suitesTime += max(0, duration)
    try document.writeSuite(
      name: suite.name.value, counts: counts, time: JUnitFormat.time(duration),
      timestamp: JUnitFormat.timestamp(suite.timestamp)
    ) { writer in
      try writer.startElement("properties")
      if !suite.waiter.isEmpty { try property("waiter", suite.waiter, to: writer) }
      if let seed = run?.seed { try property("seed", String(seed), to: writer) }
      if let seed = run?.jitterSeed { try property("jitterSeed", String(seed), to: writer) }
      if let run { try property("repetitions", String(run.repetitions), to: writer) }
      try property("harnessVersion", run?.harnessVersion ?? AsyncHarnessVersion.current, to: writer)
      try writer.endElement()
      var names = ReportNameSuffixer(reserving: reserved)
      reserved = []
      var first = true
      try suite.forEachCase(naming: testName) { testCase in
        try write(
          testCase, name: names.claim(testCase.name.value), classname: suite.classname.value,
          fullClassname: first ? suite.classname.full : nil, to: writer)
        first = false
      }
    }
  }

  private func property(_ name: String, _ value: String, to writer: XMLWriter) throws {
    try writer.startElement("property")
    try writer.attribute("name", XMLText(name))
    try writer.attribute("value", XMLText(attribute: value))
    try writer.endElement()
  }

  /// Writes one testcase; `fullClassname` (the first testcase of a suite whose name was cut)
  /// and the test's full name, when cut, start its `<system-out>`. The elements come in the
  /// order the Surefire schema requires: failure, reruns and flaky failures, skipped, error,
  /// reruns and flaky errors, output.
  private func write(
    _ testCase: TestCase, name: XMLText, classname: XMLText, fullClassname: XMLText?, to writer: XMLWriter
  ) throws {
    let result = testCase.result
    let primary = Self.primaryIssue(of: result)
    try writer.startElement("testcase")
    try writer.attribute("name", name)
    try writer.attribute("classname", classname)
    let duration = testCase.retriedAttempts.reduce(testCase.duration) { $0 + $1.duration }
    try writer.attribute("time", XMLText(JUnitFormat.time(duration)))
    if profile == .github, let location = (result.verdict.isFailure ? primary?.sourceLocation : nil)
      ?? declaration(of: testCase.test) {
      let file = XMLText(attribute: location.path)
      if !file.isBlank { try writer.attribute("file", file) }
      if location.line > 0 { try writer.attribute("line", XMLText(String(location.line))) }
    }
    // Earlier attempts: flaky ones when the last attempt passed, reruns otherwise.
    let prefix = result.verdict == .flaky ? "flaky" : "rerun"
    let (erroredAttempts, failedAttempts) = (
      testCase.retriedAttempts.filter { $0.result.verdict == .errored },
      testCase.retriedAttempts.filter { $0.result.verdict != .errored })
    if result.verdict == .failed { try writeResult(of: testCase, primary: primary, to: writer) }
    for attempt in failedAttempts { try writeAttempt(attempt, element: prefix + "Failure", to: writer) }
    if result.verdict != .failed { try writeResult(of: testCase, primary: primary, to: writer) }
    for attempt in erroredAttempts { try writeAttempt(attempt, element: prefix + "Error", to: writer) }
    // Lists made only when there is something in them: most testcases have nothing to add.
    var systemOut: [XMLText] = []
    if fullClassname != nil || testCase.name.full != nil {
      for (label, full) in [("classname", fullClassname), ("name", testCase.name.full)] where full != nil {
        systemOut.append(XMLText("[AsyncHarness: the \(label) in full]\n") + full! + XMLText("\n"))
      }
    }
    if let output = testCase.output, !output.isEmpty { systemOut.append(XMLText(output)) }
    if !systemOut.isEmpty {
      try writer.startElement("system-out")
      for text in systemOut { try writer.text(text) }
      try writer.endElement()
    }
    let notes = result.issues.isEmpty && testCase.lateIssues.isEmpty ? []
      : result.issues.filter { !$0.isFailure || result.verdict == .knownIssue } + testCase.lateIssues
    if !notes.isEmpty {
      try writer.startElement("system-err")
      try writer.text(lines(notes, labelled: true))
      try writer.endElement()
    }
    try writer.endElement()
  }

  /// Where `test` is declared, when its suite was given.
  private func declaration(of test: TestID) -> SourceLocation? {
    if declarations?.suite != test.suite {
      var locations: [String: SourceLocation] = [:]
      for declared in declaredSuites[test.suite]?.tests ?? [] { locations[declared.name] = declared.sourceLocation }
      declarations = (test.suite, locations)
    }
    return declarations?.locations[test.name]
  }

  /// The failing issue a failure or error element names: the first error of an errored test,
  /// the first failure otherwise.
  private static func primaryIssue(of result: TestResult) -> Issue? {
    let failing = result.issues.filter(\.isFailure)
    return failing.first { $0.isError == (result.verdict == .errored) } ?? failing.first
  }

  /// Writes the result element of the test's last attempt, if its verdict has one.
  private func writeResult(of testCase: TestCase, primary: Issue?, to writer: XMLWriter) throws {
    let result = testCase.result
    guard let element = Self.resultElement(result.verdict) else { return }
    let failing = result.issues.filter(\.isFailure)
    try writer.startElement(element)
    switch result.verdict {
    case .failed, .errored:
      let message = primary?.message ?? result.reason ?? "the test \(result.verdict.rawValue)"
      try writer.attribute("message", XMLText(attribute: message).nonBlank(or: "(no message)"))
      try writer.attribute("type", XMLText(primary?.kind.rawValue ?? result.verdict.rawValue))
      try writer.text(failing.isEmpty ? XMLText(message, limit: outputLimit) : lines(failing, labelled: false))
      // Issue 13: the flag that replays the schedule the test failed under.
      if let token = testCase.result.replayToken(of: testCase.test) { try writer.text(XMLText("\nreplay: --schedule \(token)")) }
    case .knownIssue:
      let message = result.reason.map { XMLText("known issue: ") + XMLText(attribute: $0, limit: XMLText.attributeLimit - 13) }
        ?? XMLText("known issue")
      try writer.attribute("message", message)
    default:
      if let reason = result.reason { try writer.attribute("message", XMLText(attribute: reason)) }
    }
    try writer.endElement()
  }

  /// Writes an earlier, failing attempt as Surefire's `<flakyFailure>`, `<rerunFailure>`,
  /// `<flakyError>` or `<rerunError>`: its message and type, its failing issues as the
  /// `<stackTrace>`, its output as `<system-out>`.
  private func writeAttempt(_ attempt: TestCase, element: String, to writer: XMLWriter) throws {
    let primary = Self.primaryIssue(of: attempt.result)
    let message = primary?.message ?? "attempt \(attempt.test.attempt) \(attempt.result.verdict.rawValue)"
    try writer.startElement(element)
    try writer.attribute("message", XMLText(attribute: "attempt \(attempt.test.attempt): " + message))
    try writer.attribute("type", XMLText(primary?.kind.rawValue ?? attempt.result.verdict.rawValue))
    try writer.startElement("stackTrace")
    try writer.text(lines(attempt.result.issues.filter(\.isFailure), labelled: false))
    try writer.endElement()
    if let output = attempt.output, !output.isEmpty {
      try writer.startElement("system-out")
      try writer.text(XMLText(output))
      try writer.endElement()
    }
    try writer.endElement()
  }

  /// One line per issue, `message path/File.swift:LINE` (the message alone when the location
  /// is unknown), after `kind: ` when `labelled`. The message and the path are sanitized on
  /// their own, so an escape sequence cut short at the end of a message keeps the location.
  private func lines(_ issues: [Issue], labelled: Bool) -> XMLText {
    var text = XMLText.captured(limit: outputLimit)
    for (index, issue) in issues.enumerated() {
      text.append((index > 0 ? "\n" : "") + (labelled ? "\(issue.kind.rawValue): " : ""))
      text.append(issue.message)
      if let location = issue.sourceLocation {
        text.append(" ")
        text.append(location.path)
        text.append(":\(location.line)")
      }
    }
    return XMLText(text)
  }
}
