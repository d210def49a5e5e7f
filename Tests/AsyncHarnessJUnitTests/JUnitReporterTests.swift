import AsyncHarness
import Foundation
import HarnessTestSupport
import XCTest

@testable import AsyncHarnessJUnit

final class JUnitReporterTests: ReportTestCase {
  func testSuitesPropertiesAndCountsComeFromTheEmittedTestcases() throws {
    let failure = Issue(kind: .expectationFailed, message: "expected 3", sourceLocation: localLocation("T/A.swift", line: 3))
    let thrown = Issue(kind: .errorThrown, message: "boom", sourceLocation: localLocation("T/A.swift", line: 9))
    let report = try report(runEvents(
      suiteEvents("Pinacoteca.API", waiter: "semaphore", [
        ("loads", passed, []),
        ("fails", TestResult(verdict: .failed, issues: [failure]), []),
        ("throws", TestResult(verdict: .errored, issues: [thrown]), []),
        ("later", TestResult(verdict: .skipped, reason: "needs a server"), []),
        ("flaky", TestResult(verdict: .knownIssue, reason: "#12", issues: [failure]), []),
      ]),
      suiteEvents("Pinacoteca.API", waiter: "expectation", [("loads", passed, [])]),
      seed: 42, jitterSeed: 9, repetitions: 2))

    XCTAssertEqual(report.name, "testsuites")
    XCTAssertEqual(report.attributeMap, ["name": "AsyncHarness", "time": "1.500", "tests": "6", "failures": "1", "errors": "1"])
    let suites = report.elements(named: "testsuite")
    XCTAssertEqual(suites.map(\.name), ["testsuite", "testsuite"])
    var first = suites[0].attributeMap
    XCTAssertNotNil(first.removeValue(forKey: "timestamp").flatMap { try? Date.ISO8601FormatStyle().parse($0) })
    XCTAssertEqual(first, [
      "name": "Pinacoteca.API [semaphore]", "tests": "5", "failures": "1", "errors": "1", "skipped": "2", "time": "0.500",
    ])
    XCTAssertEqual(suites[1].attribute("name"), "Pinacoteca.API [expectation]")
    XCTAssertEqual(suites[1].attribute("tests"), "1")
    XCTAssertEqual(suites[0].elements.first?.name, "properties")
    XCTAssertEqual(
      suites[0].elements(named: "properties")[0].elements.map { "\($0.attribute("name")!)=\($0.attribute("value")!)" },
      ["waiter=semaphore", "seed=42", "jitterSeed=9", "repetitions=2", "harnessVersion=\(AsyncHarnessVersion.current)"])
    XCTAssertEqual(
      report.testCases.map { "\($0.attribute("classname")!) | \($0.attribute("name")!) | \($0.elements.map(\.name))" },
      [
        "Pinacoteca.API [semaphore] | loads | []",
        "Pinacoteca.API [semaphore] | fails | [\"failure\"]",
        "Pinacoteca.API [semaphore] | throws | [\"error\"]",
        "Pinacoteca.API [semaphore] | later | [\"skipped\"]",
        "Pinacoteca.API [semaphore] | flaky | [\"skipped\", \"system-err\"]",
        "Pinacoteca.API [expectation] | loads | []",
      ])
    XCTAssertEqual(report.testCases.map { $0.attribute("time") }, Array(repeating: "0.250", count: 6))
  }

  /// A run of no test (an empty bundle, `--allow-empty`) still has one `<testsuite>`, empty
  /// and named as the report: the Surefire schema and the dashboards' readers want one.
  func testARunOfNoTestHasOneEmptySuite() throws {
    let report = try report(runEvents())
    XCTAssertEqual(report.attributeMap, ["name": "AsyncHarness", "time": "1.500", "tests": "0", "failures": "0", "errors": "0"])
    XCTAssertEqual(report.elements.map(\.name), ["testsuite"])
    XCTAssertEqual(report.elements.first?.attributeMap, [
      "name": "AsyncHarness", "tests": "0", "failures": "0", "errors": "0", "skipped": "0", "time": "1.500",
    ])
    XCTAssertEqual(report.elements.first?.elements.count, 0)
  }

  func testAFailureUnderAScheduleEndsWithTheFlagThatReplaysIt() throws {
    let failure = Issue(kind: .expectationFailed, message: "Expected second, got first", sourceLocation: localLocation("T/A.swift", line: 18))
    let id = TestID(suite: "Race", name: "last writer wins", host: "scheduled", schedule: "1:random:3db54b")
    let run = SuiteRun(suite: "Race", host: "scheduled")
    let events = [Event(.suiteStarted(run)), Event(.testStarted(id))]
      + ended(id, TestResult(verdict: .failed, issues: [failure]), duration: 0).map { Event($0) }
      + [Event(.suiteEnded(run, Summary(), duration: 0))]
    let failureElement = try XCTUnwrap(report(runEvents(events)).testCases.first?.elements(named: "failure").first)
    XCTAssertEqual(failureElement.attribute("message"), "Expected second, got first")
    XCTAssertEqual(failureElement.text, "Expected second, got first T/A.swift:18\nreplay: --schedule 1:random:3db54b")
  }

  func testRepetitionsAndCollidingNamesStayUnique() throws {
    let suite = "S"
    let run = SuiteRun(suite: suite, host: "w")
    let events = [Event(.suiteStarted(run))]
      + [1, 2].flatMap { repetition in
        ["a\u{1}", "a␁", "", " \t\u{1B}[m"].map {
          Event(.testEnded(TestID(suite: suite, name: $0, host: "w", repetition: repetition), TestEnd(once: passed, duration: 0)))
        }
      }
      + [Event(.suiteEnded(run, Summary(), duration: 0))]
      + suiteEvents(suite, waiter: "w", [("a", passed, [])])
    let report = try report(runEvents(events))
    XCTAssertEqual(report.elements(named: "testsuite").map { $0.attribute("name")! }, ["S [w]", "S [w] (2)"])
    XCTAssertEqual(report.testCases.map { "\($0.attribute("classname")!)/\($0.attribute("name")!)" }, [
      "S [w]/a␁", "S [w]/a␁ (2)", "S [w]/(unnamed test)", "S [w]/(unnamed test) (2)",
      "S [w]/a␁ #2", "S [w]/a␁ #2 (2)", "S [w]/(unnamed test) #2", "S [w]/(unnamed test) #2 (2)",
      "S [w] (2)/a",
    ])
  }

  func testFailureListsEveryFailingIssueWithItsLocation() throws {
    let outside = SourceLocation(fileID: "Loader/Loader.swift", filePath: "/elsewhere/Loader.swift", line: 30, column: 2)
    let issues = [
      Issue(kind: .warning, message: "fell back to a blocking wait", sourceLocation: outside),
      Issue(kind: .expectationFailed, message: "expected 3 messages, got 2", sourceLocation: localLocation("Tests/LoaderTests.swift", line: 12)),
      Issue(kind: .waitFailed, message: "Exceeded timeout of 1 seconds, with unfulfilled expectations: loaded", sourceLocation: outside),
      Issue(kind: .expectationFailed, message: "no location"),
    ]
    let errorIssues = [issues[1], Issue(kind: .errorThrown, message: "URLError(-1001)", sourceLocation: outside)]
    let report = try report(runEvents(suiteEvents("S", [
      ("fails", TestResult(verdict: .failed, issues: issues), []),
      ("throws", TestResult(verdict: .errored, issues: errorIssues), []),
      ("crashed", TestResult(verdict: .errored, reason: "the worker process crashed"), []),
      ("colored", TestResult(verdict: .failed, issues: [Issue(kind: .expectationFailed, message: "\u{1B}[31m")]), []),
    ])))
    let cases = report.testCases
    let failure = cases[0].elements(named: "failure")[0]
    XCTAssertEqual(failure.attributeMap, ["message": "expected 3 messages, got 2", "type": "expectationFailed"])
    XCTAssertEqual(failure.text, """
      expected 3 messages, got 2 Tests/LoaderTests.swift:12
      Exceeded timeout of 1 seconds, with unfulfilled expectations: loaded Loader/Loader.swift:30
      no location
      """)
    XCTAssertEqual(cases[0].elements(named: "system-err")[0].text, "warning: fell back to a blocking wait Loader/Loader.swift:30")
    let error = cases[1].elements(named: "error")[0]
    XCTAssertEqual(error.attributeMap, ["message": "URLError(-1001)", "type": "errorThrown"])
    XCTAssertEqual(error.text, "expected 3 messages, got 2 Tests/LoaderTests.swift:12\nURLError(-1001) Loader/Loader.swift:30")
    let crash = cases[2].elements(named: "error")[0]
    XCTAssertEqual(crash.attributeMap, ["message": "the worker process crashed", "type": "errored"])
    XCTAssertEqual(crash.text, "the worker process crashed")
    XCTAssertEqual(cases[3].elements(named: "failure")[0].attributeMap, ["message": "(no message)", "type": "expectationFailed"])
    XCTAssertNil(cases[0].attribute("file"))
  }

  func testGitHubProfileAddsFileAndLineOfTheFirstFailure() throws {
    let issues = [Issue(kind: .expectationFailed, message: "wrong", sourceLocation: localLocation("Tests/A.swift", line: 7))]
    let events = runEvents(suiteEvents("S", [("fails", TestResult(verdict: .failed, issues: issues), []), ("passes", passed, [])]))
    let github = try report(events, profile: .github).testCases
    XCTAssertEqual(github[0].attribute("file"), "Tests/A.swift")
    XCTAssertEqual(github[0].attribute("line"), "7")
    XCTAssertEqual(github[1].attributeMap.keys.sorted(), ["classname", "name", "time"])
    XCTAssertNil(try report(events, file: "standard.xml").testCases[0].attribute("file"))
  }

  func testKnownIssueIsSkippedNotFailed() throws {
    let issue = Issue(kind: .expectationFailed, message: "still wrong", sourceLocation: localLocation("Tests/A.swift", line: 4))
    let report = try report(runEvents(suiteEvents("S", [
      ("known", TestResult(verdict: .knownIssue, reason: "server bug #12", issues: [issue]), []),
      ("known without reason", TestResult(verdict: .knownIssue), []),
    ])))
    XCTAssertEqual(report.attribute("failures"), "0")
    XCTAssertEqual(report.elements(named: "testsuite")[0].attribute("skipped"), "2")
    let cases = report.testCases
    XCTAssertEqual(cases[0].elements(named: "skipped")[0].attributeMap, ["message": "known issue: server bug #12"])
    XCTAssertEqual(cases[0].elements(named: "system-err")[0].text, "expectationFailed: still wrong Tests/A.swift:4")
    XCTAssertEqual(cases[1].elements(named: "skipped")[0].attributeMap, ["message": "known issue"])
  }

  func testTimesHaveThreeDecimalsAndNeverAnExponent() throws {
    XCTAssertEqual(
      [0.00001, 0, -2, .nan, .infinity, 1.23456, 0.9999, 12_345.6, 1e30, 0.0006, 0.01, 0.1, 7, 10.05, 99.999].map(JUnitFormat.time),
      ["0.000", "0.000", "0.000", "0.000", "0.000", "1.235", "1.000", "12345.600", "31557600000.000", "0.001", "0.010",
       "0.100", "7.000", "10.050", "99.999"])
    var events = suiteEvents("S", duration: 0.00001, [("fast", passed, [])])
    guard case .testEnded(let test, _) = events[2].kind else { return XCTFail("\(events[2])") }
    events[2].kind = .testEnded(test, TestEnd(once: passed, duration: 0.00001))
    let report = try report(events)
    XCTAssertEqual(report.testCases[0].attribute("time"), "0.000")
    XCTAssertEqual(report.elements(named: "testsuite")[0].attribute("time"), "0.000")
  }

  func testOutputIsCappedWithANoteSayingHowMuchWasCut() throws {
    let report = try report(
      runEvents(suiteEvents("S", [("chatty", passed, [output("0123456"), output("789abcdef"), output("ghi")])])),
      outputLimit: 10)
    XCTAssertEqual(
      report.testCases[0].elements(named: "system-out")[0].text,
      "0123456789\n[AsyncHarness: 9 more bytes cut here; the report keeps at most 10 bytes per text]")
  }

  func testCutNeverSplitsACharacter() {
    var text = XMLText.captured(limit: 5)
    text.append("ab€c")  // € is 3 bytes: a, b, € fit in 5; c does not
    XCTAssertEqual(text.text, "ab€\n[AsyncHarness: 1 more bytes cut here; the report keeps at most 5 bytes per text]")
    var split = XMLText.captured(limit: 3)
    split.append("ab€")
    XCTAssertEqual(split.text, "ab\n[AsyncHarness: 3 more bytes cut here; the report keeps at most 3 bytes per text]")
  }

  func testLateSignalJoinsItsTestWhileTheSuiteIsOpenAndIsIgnoredAfter() throws {
    let late = Issue(kind: .lateSignal, message: "'loaded' fulfilled after its test ended", sourceLocation: localLocation("Tests/A.swift", line: 8))
    let first = TestID(suite: "S", name: "first", host: "w")
    var events = suiteEvents("S", waiter: "w", [("first", passed, []), ("second", passed, [])])
    events.insert(contentsOf: [
      Event(.issueRecorded(first, late)), Event(.outputCaptured(first, "late output")),
    ], at: events.count - 1)
    events.append(Event(.issueRecorded(first, late)))
    let report = try report(runEvents(events))
    XCTAssertEqual(report.attribute("failures"), "0")
    XCTAssertEqual(report.testCases[0].elements.map(\.name), ["system-out", "system-err"])
    XCTAssertEqual(report.testCases[0].elements(named: "system-out")[0].text, "late output")
    XCTAssertEqual(
      report.testCases[0].elements(named: "system-err")[0].text,
      "lateSignal: 'loaded' fulfilled after its test ended Tests/A.swift:8")
    XCTAssertEqual(report.testCases[1].elements, [])
  }

  func testAttributesAndTextRoundTripSanitized() throws {
    let nasty = "a\u{1B}[31mred\u{1B}[m <b>&\"x\" ]]> \u{0}\u{7F}\u{85}\u{FFFE}\t\r\nz"
    let expected = "ared <b>&\"x\" ]]> ␀␡��\t\r\nz"
    let issue = Issue(kind: .expectationFailed, message: nasty)
    let report = try report(runEvents(suiteEvents(nasty, waiter: "w", [(nasty, TestResult(verdict: .failed, issues: [issue]), [output(nasty)])])))
    let testCase = report.testCases[0]
    XCTAssertEqual(testCase.attribute("name"), expected)
    XCTAssertEqual(testCase.attribute("classname"), expected + " [w]")
    XCTAssertEqual(testCase.elements(named: "failure")[0].attribute("message"), expected)
    XCTAssertEqual(testCase.elements(named: "failure")[0].text, expected)
    XCTAssertEqual(testCase.elements(named: "system-out")[0].text, expected)
  }

  func testSanitizingRemovesWholeEscapeSequencesAndShowsTheRest() {
    let cases: [(String, String)] = [
      ("\u{1B}[1;31mX\u{1B}[0m\u{1B}[m", "X"),
      ("\u{1B}]0;title\u{7}T\u{1B}]8;;http://x\u{1B}\\L", "TL"),
      ("\u{1B}(BA\u{1B}7B\u{1B}[?25hC", "ABC"),
      ("\u{1B}[31", "␛[31"),
      ("\u{1B}", "␛"),
      ("\u{1B}]unterminated", "␛]unterminated"),
      ("\u{0}\u{1}\u{8}\u{1F}\u{7F}", "␀␁␈␟␡"),
      ("\u{80}\u{9F}\u{A0}\u{FFFD}\u{FFFE}\u{FFFF}\u{10FFFF}", "��\u{A0}\u{FFFD}��\u{10FFFF}"),
      ("e\u{301}🇫🇷\u{301}", "e\u{301}🇫🇷\u{301}"),
    ]
    for (raw, expected) in cases {
      XCTAssertEqual(XMLText(raw).string, expected, "\(raw.unicodeScalars.map { String($0.value, radix: 16) })")
    }
  }

  func testReportAppearsOnlyWhenFinishedAndLeavesNoTemporaryFiles() throws {
    let destination = path("report.xml")
    try "old report".write(toFile: destination, atomically: true, encoding: .utf8)
    let reporter = try JUnitReporter(path: destination)
    for event in runEvents(suiteEvents("S", [("t", passed, [])])) { try reporter.handle(event) }
    XCTAssertEqual(try String(contentsOfFile: destination, encoding: .utf8), "old report")
    try reporter.finish()
    try reporter.finish()
    XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), ["report.xml"])
    XCTAssertEqual(try XMLReader.readDocument(destination).attribute("tests"), "1")
    XCTAssertThrowsError(try reporter.handle(Event(.runEnded(Summary(), duration: 0)))) {
      XCTAssertEqual("\($0)", "JUnit reporter: runEnded after finish()")
    }
  }

  func testAReporterThatIsDroppedLeavesNothingBehind() throws {
    var reporter: JUnitReporter? = try JUnitReporter(path: path("report.xml"))
    try reporter?.handle(Event(.suiteStarted(SuiteRun(suite: "S", host: "w"))))
    XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path).count, 1)
    reporter = nil
    XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), [])
  }

  func testUnusableDestinationFailsAtCreation() throws {
    let missing = path("missing/report.xml")
    XCTAssertThrowsError(try JUnitReporter(path: missing)) {
      XCTAssertEqual("\($0)", "cannot write the JUnit report to \(missing): the directory \(path("missing")) does not exist")
    }
    XCTAssertThrowsError(try JUnitReporter(path: directory.path)) {
      XCTAssertEqual("\($0)", "cannot write the JUnit report to \(directory.path): it is a directory")
    }
    try "".write(toFile: path("file"), atomically: true, encoding: .utf8)
    XCTAssertThrowsError(try JUnitReporter(path: path("file/report.xml"))) {
      XCTAssertEqual("\($0)", "cannot write the JUnit report to \(path("file/report.xml")): \(path("file")) is not a directory")
    }
  }

  func testEventsOutOfOrderAreNamed() throws {
    let reporter = try JUnitReporter(path: path("report.xml"))
    let test = TestID(suite: "S", name: "t", host: "w")
    XCTAssertThrowsError(try reporter.handle(Event(.testEnded(test, TestEnd(once: passed, duration: 0))))) {
      XCTAssertEqual("\($0)", "JUnit reporter: test S/t [w] ended outside a suite")
    }
    try reporter.handle(Event(.suiteStarted(SuiteRun(suite: "S", host: "w"))))
    XCTAssertThrowsError(try reporter.handle(Event(.suiteStarted(SuiteRun(suite: "S", host: "w"))))) {
      XCTAssertEqual("\($0)", "JUnit reporter: suite S [w] started while it is open")
    }
    XCTAssertThrowsError(try reporter.handle(Event(.suiteEnded(SuiteRun(suite: "T", host: "w"), Summary(), duration: 0)))) {
      XCTAssertEqual("\($0)", "JUnit reporter: suite T ended but none is open")
    }
  }

  /// Suites run side by side (`--workers N`) send interleaved events: each test still lands
  /// in its own suite, with its own output, suites are written in the order they started
  /// (one that ends first waits), and suites still open at the end are written.
  func testInterleavedSuitesStayGroupedInTheOrderTheyStarted() throws {
    let first = SuiteRun(suite: "S", host: "w")
    let second = SuiteRun(suite: "T", host: "w")
    func test(_ run: SuiteRun, _ name: String) -> TestID { TestID(suite: run.suite, name: name, host: run.host) }
    let events: [Event.Kind] = [
      .suiteStarted(first), .suiteStarted(second),
      .testStarted(test(first, "a")), .testStarted(test(second, "b")),
      .outputCaptured(test(second, "b"), "from b"), .outputCaptured(test(first, "a"), "from a"),
      .testEnded(test(second, "b"), TestEnd(once: passed, duration: 0)), .testEnded(test(first, "a"), TestEnd(once: passed, duration: 0)),
      .suiteEnded(second, Summary(), duration: 0),
      .testStarted(test(first, "c")), .testEnded(test(first, "c"), TestEnd(once: passed, duration: 0)),
    ]
    let report = try report(events.map { Event($0) })
    let suites = report.elements(named: "testsuite")
    XCTAssertEqual(suites.map { $0.attribute("name") }, ["S [w]", "T [w]"])
    let cases = suites.map { $0.elements(named: "testcase") }
    XCTAssertEqual(cases.map { $0.map { $0.attribute("name") } }, [["a", "c"], ["b"]])
    XCTAssertEqual(cases.map { $0.first?.elements(named: "system-out").first?.text }, ["from a", "from b"])
    XCTAssertEqual(suites.map { $0.attribute("tests") }, ["2", "1"])
  }

  /// Tests of one suite that run at once (a parallel suite) end in any order: each keeps its
  /// own output, and testcases are written in the order the tests first started, a retried
  /// test where its first attempt started.
  func testTestsOfASuiteRunningAtOnceAreWrittenInTheOrderTheyStarted() throws {
    let run = SuiteRun(suite: "P", host: "w")
    func test(_ name: String, attempt: Int = 1) -> TestID { TestID(suite: "P", name: name, host: "w", attempt: attempt) }
    let flaky = TestEnd(verdict: .flaky, attempts: [
      TestAttempt(number: 1, outcome: .failed, duration: 0, issueCount: 1), TestAttempt(number: 2, outcome: .passed, duration: 0, issueCount: 0),
    ])
    let events: [Event.Kind] = [
      .suiteStarted(run),
      .testStarted(test("a")), .testStarted(test("b")), .testStarted(test("c")),
      .outputCaptured(test("c"), "from c"), .outputCaptured(test("a"), "from a"), .outputCaptured(test("b"), "from b"),
      .issueRecorded(test("a"), Issue(kind: .expectationFailed, message: "first attempt")),
      .testEnded(test("c"), TestEnd(once: passed, duration: 0)),
      .testStarted(test("d")), .testStarted(test("a", attempt: 2)),
      .testEnded(test("d"), TestEnd(once: passed, duration: 0)), .testEnded(test("b"), TestEnd(once: passed, duration: 0)),
      .outputCaptured(test("a", attempt: 2), "from a again"),
      .testEnded(test("a", attempt: 2), flaky),
      .suiteEnded(run, Summary(), duration: 0),
    ]
    let cases = try report(events.map { Event($0) }).testCases
    XCTAssertEqual(cases.map { $0.attribute("name") }, ["a", "b", "c", "d"])
    XCTAssertEqual(cases.map { $0.elements(named: "system-out").first?.text }, ["from a again", "from b", "from c", nil])
    XCTAssertEqual(cases[0].elements.map(\.name), ["flakyFailure", "system-out"])
  }

  /// A suite far larger than what an open suite keeps in memory (its oldest ended tests go
  /// to disk): every testcase comes back in plan order, tests that ended out of order
  /// included (one ends after all the others), with its failure, output, retried attempts
  /// and replay token; a renamed
  /// duplicate still avoids a name a later test literally has; no file is left beside the
  /// report.
  func testASuiteTooLargeToKeepInMemoryIsWrittenWhole() throws {
    let run = SuiteRun(suite: "Large", host: "w")
    let count = 20_000
    func name(_ index: Int) -> String {
      switch index {
      case 10, 11: "dup"
      case 19_000: "dup (2)"
      default: "t \(index)"
      }
    }
    func test(_ index: Int, attempt: Int = 1) -> TestID {
      TestID(suite: "Large", name: name(index), host: "w", attempt: attempt, schedule: index == 1999 ? "7:random:5e1f0a" : nil)
    }
    let location = SourceLocation(fileID: "M/Large.swift", filePath: "/src/Large.swift", line: 7, column: 1)
    var events: [Event.Kind] = [.suiteStarted(run)]
    // Tests start four at a time and end in reverse, as a parallel suite's may.
    for group in stride(from: 0, to: count, by: 4) {
      let indices = Array(group..<min(group + 4, count))
      for index in indices { events.append(.testStarted(test(index))) }
      for index in indices.reversed() where index != 3 {
        if index % 1000 == 999 {
          let issue = Issue(kind: .expectationFailed, message: "fails <\(index)> & ⚠︎", sourceLocation: location)
          events.append(.outputCaptured(test(index), "output of \(index)\n"))
          var result = TestResult(verdict: .failed, issues: [issue])
          if index == 1999 { result.scheduleTrace = ScheduleTrace(steps: 12, fingerprint: 0xABCDEF) }
          events += ended(test(index), result, duration: 0.5)
        } else if index == 5 {
          let flaky = TestEnd(verdict: .flaky, attempts: [
            TestAttempt(number: 1, outcome: .failed, duration: 0.25, issueCount: 1),
            TestAttempt(number: 2, outcome: .passed, duration: 0.25, issueCount: 0),
          ])
          events += [.issueRecorded(test(5), Issue(kind: .expectationFailed, message: "first try")), .testStarted(test(5, attempt: 2)),
                     .testEnded(test(5, attempt: 2), flaky)]
        } else {
          events.append(.testEnded(test(index), TestEnd(once: passed, duration: 0.001)))
        }
      }
    }
    // Test 3 runs while every other test starts and ends.
    events.append(.outputCaptured(test(3), "the long test's output"))
    events.append(.testEnded(test(3), TestEnd(once: passed, duration: 40)))
    events.append(.outputCaptured(test(count - 2), "late output of a test that ended"))
    events.append(.suiteEnded(run, Summary(), duration: 30))

    let report = try report(events.map { Event($0) })
    let suite = try XCTUnwrap(report.elements(named: "testsuite").first)
    XCTAssertEqual(suite.attribute("tests"), "20000")
    XCTAssertEqual(suite.attribute("failures"), "20")
    let cases = report.testCases
    XCTAssertEqual(cases.count, count)
    XCTAssertEqual(cases.map { $0.attribute("name")! }, (0..<count).map { index in
      index == 11 ? "dup (3)" : name(index)
    })
    let failing = cases.indices.filter { !cases[$0].elements(named: "failure").isEmpty }
    XCTAssertEqual(failing, (0..<20).map { $0 * 1000 + 999 })
    XCTAssertEqual(cases[999].elements(named: "failure").first?.attribute("message"), "fails <999> & ⚠︎")
    XCTAssertEqual(cases[999].elements(named: "failure").first?.text, "fails <999> & ⚠︎ M/Large.swift:7")
    XCTAssertEqual(cases[999].elements(named: "system-out").first?.text, "output of 999\n")
    XCTAssertEqual(cases[1999].elements(named: "failure").first?.text.hasSuffix("\nreplay: --schedule 7:random:5e1f0a:12-abcdef"),
                   true, cases[1999].elements(named: "failure").first?.text ?? "")
    XCTAssertEqual(cases[5].elements.map(\.name), ["flakyFailure"])
    XCTAssertEqual(cases[3].elements(named: "system-out").first?.text, "the long test's output")
    XCTAssertEqual(cases[3].attribute("time"), "40.000")
    XCTAssertEqual(cases[5].attribute("time"), "0.500")
    XCTAssertEqual(cases[count - 2].elements(named: "system-out").first?.text, "late output of a test that ended")
    XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), ["report.xml"])
  }

  func testAnInterruptedRunStillWritesTheEndedTests() throws {
    let events = Array(suiteEvents("S", [("ended", passed, []), ("running", passed, [])]).dropLast(2))
    let report = try report(events)
    XCTAssertEqual(report.testCases.map { $0.attribute("name") }, ["ended"])
    XCTAssertEqual(report.attribute("tests"), "1")
  }
}

/// Issue 49: a failure outside every test is a testcase of its own, errored, named as Maven
/// Surefire names one, under the classname of the suite where it happened.
final class JUnitOutsideFailureTests: ReportTestCase {
  private let crash = Issue(kind: .crashed, message: "The test bundle ended with signal SIGILL (illegal instruction)",
                            sourceLocation: localLocation("T/Ledger.swift", line: 12))

  /// Found after its suite was written (a class's tear-down crashes after its last test), it
  /// goes in a `<testsuite>` of its own whose testcase keeps the suite's classname.
  func testOneFoundAfterItsSuiteEndedGetsASuiteOfItsOwnUnderTheSameClassname() throws {
    let failure = OutsideFailure(place: .classTearDown, suite: SuiteRun(suite: "M.Ledger", host: "xctest"), issue: crash,
                                 suspects: ["M.Ledger/testA"], afterTests: true)
    let report = try report(runEvents(suiteEvents("M.Ledger", waiter: "xctest", [("testA", passed, [])]),
                                      [Event(.outsideFailure(failure))]))
    XCTAssertEqual(report.attribute("tests"), "2")
    XCTAssertEqual(report.attribute("errors"), "1")
    XCTAssertEqual(report.elements(named: "testsuite").map { $0.attribute("name") }, ["M.Ledger [xctest]", "M.Ledger [xctest] (2)"])
    XCTAssertEqual(report.testCases.map { "\($0.attribute("classname")!) | \($0.attribute("name")!)" },
                   ["M.Ledger [xctest] | testA", "M.Ledger [xctest] | executionError"])
    let error = try XCTUnwrap(report.testCases.last?.elements(named: "error").first)
    XCTAssertEqual(error.attribute("message"), "In class func tearDown(): The test bundle ended with signal SIGILL (illegal "
      + "instruction)\nThe tests that ran last in that process before it: M.Ledger/testA")
    XCTAssertTrue(error.text.contains("T/Ledger.swift:12"), error.text)
    try assertCheckerPasses(path("report.xml"), ["--expect-tests", "2", "--expect-failures", "0", "--expect-errors", "1",
                                                 "--expect-skipped", "0"])
  }

  /// Found while its suite is open, it joins the suite; a second one in the same suite is
  /// numbered, so that no two testcases share a classname and a name.
  func testOnesFoundWhileTheirSuiteRunsJoinItNumbered() throws {
    let run = SuiteRun(suite: "M.Broken", host: "swift-testing")
    let failure = OutsideFailure(place: .suite, suite: run, issue: crash, afterTests: false)
    var events = suiteEvents("M.Broken", waiter: "swift-testing", [("first()", passed, [])])
    events.insert(contentsOf: [Event(.outsideFailure(failure)), Event(.outsideFailure(failure))], at: 1)
    let report = try report(runEvents(events))
    XCTAssertEqual(report.elements(named: "testsuite").count, 1)
    XCTAssertEqual(report.testCases.map { $0.attribute("name")! }, ["initializationError", "initializationError #2", "first()"])
    XCTAssertEqual(report.testCases.map { $0.elements.map(\.name) }, [["error"], ["error"], []])
    try assertCheckerPasses(path("report.xml"), ["--expect-tests", "3", "--expect-failures", "0", "--expect-errors", "2",
                                                 "--expect-skipped", "0"])
  }
}
