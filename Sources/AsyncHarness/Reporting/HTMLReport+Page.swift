extension HTMLReport {
  /// The whole page, titled `title`: the run's summary, its failures (message, location and
  /// output), its failures outside every test (when there are some), flaky tests, the slowest
  /// tests and the timeline, in that order.
  func page(title: String) -> String {
    var page = HTMLWriter()
    page.markup("<!DOCTYPE html>\n")
    page.element("html", ["lang": "en"]) { page in
      page.element("head") { head in
        head.void("meta", ["charset": "utf-8"])
        head.void("meta", ["name": "viewport", "content": "width=device-width, initial-scale=1"])
        head.element("title", text: "\(title): AsyncHarness run")
        head.element("style") { $0.markup(HTMLReport.styleSheet) }
      }
      page.element("body") { body in
        writeHeader(title: title, to: &body)
        writeSummary(to: &body)
        writeFailures(to: &body)
        writeOutsideFailures(to: &body)
        writeFlaky(to: &body)
        writeSlowest(to: &body)
        writeTimeline(to: &body)
      }
    }
    page.markup("\n")
    return page.html
  }

  private func writeHeader(title: String, to page: inout HTMLWriter) {
    page.element("header") { header in
      header.element("h1", text: title)
      let verdict = !summary.succeeded || duration == nil ? "failed" : "passed"
      let seconds = duration ?? Double(timeline.latest) / 1_000_000
      header.element("p", ["class": "result \(verdict)"], text: summary.result(in: seconds))
      if duration == nil {
        header.element("p", ["class": "warning"],
                       text: "The run did not end (it was interrupted): this page shows what happened until then.")
      }
      var facts = ["AsyncHarness \(run?.harnessVersion ?? AsyncHarnessVersion.current)"]
      if let run {
        // A package's own tests (harness test) run under their testing libraries, not waiters.
        let libraries = run.waiters.allSatisfy { TestLibrary(named: $0) != nil }
        facts.append("\(libraries ? "libraries" : "waiters"): \(run.waiters.joined(separator: ", "))")
        if run.repetitions > 1 { facts.append("each test \(run.repetitions) times") }
        if let seed = run.seed { facts.append("shuffled with seed \(seed)") }
        if let seed = run.jitterSeed { facts.append("jittered with seed \(seed)") }
        if let shard = run.shard { facts.append("shard \(shard)") }
      }
      header.element("p", ["class": "facts"], text: facts.joined(separator: " · "))
    }
  }

  /// The counts of every test, then the table of suites × waiters, as the console ends.
  private func writeSummary(to page: inout HTMLWriter) {
    page.element("section", ["id": "summary"]) { section in
      section.element("h2", text: "Summary")
      let counts = [("passed", summary.passed), ("failed", summary.failed), ("errored", summary.errored),
                    ("skipped", summary.skipped), ("known issues", summary.knownIssues), ("flaky", summary.flaky),
                    ("failed outside tests", summary.outsideFailures)]
      writeTable([""] + counts.map(\.0), rows: [["All tests"] + counts.map { "\($0.1)" }], to: &section)
      let rows = table.rows.map { row in [row.suite] + table.waiters.map { SummaryTable.cell(row.cells[$0]) } }
      writeTable(["Suite"] + table.waiters, rows: rows, to: &section)
    }
  }

  /// A table with a header row; a cell that says `FAIL` is marked so.
  private func writeTable(_ header: [String], rows: [[String]], to page: inout HTMLWriter) {
    page.element("table") { table in
      table.element("thead") { head in
        head.element("tr") { row in
          for name in header { row.element("th", text: name) }
        }
      }
      table.element("tbody") { body in
        for cells in rows {
          body.element("tr") { row in
            row.element("th", text: cells[0])
            for cell in cells.dropFirst() {
              row.element("td", cell.hasSuffix(" FAIL") ? ["class": "fail"] : [:], text: cell)
            }
          }
        }
      }
    }
  }

  private func writeFailures(to page: inout HTMLWriter) {
    page.element("section", ["id": "failures"]) { section in
      section.element("h2", text: "Failures (\(failures.count))")
      if failures.isEmpty { section.element("p", text: "No test failed.") }
      for failure in failures {
        section.element("article", ["class": "failure"]) { article in
          let test = failure.test
          article.element("h3", text: test.path)
          var facts = [failure.result.verdict.rawValue, "\(TestLibrary(named: test.host) == nil ? "waiter" : "library") \(test.host)",
                       "attempt \(test.attempt)",
                       ConsoleReporter.seconds(failure.duration)]
          if test.repetition > 1 { facts.insert("repetition \(test.repetition)", at: 2) }
          if let token = failure.result.replayToken(of: test) { facts.append("replay: --schedule \(token)") }
          article.element("p", ["class": "facts"], text: facts.joined(separator: " · "))
          article.element("ul", ["class": "issues"]) { list in
            for issue in failure.result.issues {
              list.element("li", ["class": issue.isFailure ? "issue" : "issue note"]) { item in
                let location = issue.sourceLocation.map { "\($0.path):\($0.line)" } ?? "no location"
                item.element("span", ["class": "location"], text: location)
                item.element("span", ["class": "kind"], text: issue.kind.rawValue)
                item.element("pre", ["class": "message"], text: capped(issue.message))
              }
            }
          }
          article.element("h4", text: "Output")
          switch failure.output {
          case let output? where output.isEmpty: article.element("p", ["class": "none"], text: "No output.")
          case let output?: article.element("pre", ["class": "output"], text: output)
          case nil:
            article.element("p", ["class": "none"],
                            text: "Output not kept: the page keeps the output of the first \(Self.detailedFailures) failures.")
          }
        }
      }
    }
  }

  /// Each failure outside every test: where it happened, under which suite, what was said and
  /// the tests that ran before it. No section when there is none.
  private func writeOutsideFailures(to page: inout HTMLWriter) {
    guard !outsideFailures.isEmpty else { return }
    page.element("section", ["id": "outside-failures"]) { section in
      section.element("h2", text: "Failed outside tests (\(outsideFailures.count))")
      for failure in outsideFailures {
        section.element("article", ["class": "failure"]) { article in
          article.element("h3", text: "\(failure.suite.suite): \(failure.place.description)")
          article.element("p", ["class": "facts"], text: "\(failure.testcaseName) · \(failure.suite.host)")
          article.element("ul", ["class": "issues"]) { list in
            list.element("li", ["class": "issue"]) { item in
              let location = failure.issue.sourceLocation.map { "\($0.path):\($0.line)" } ?? "no location"
              item.element("span", ["class": "location"], text: location)
              item.element("span", ["class": "kind"], text: failure.issue.kind.rawValue)
              item.element("pre", ["class": "message"], text: capped(failure.issue.message))
            }
          }
          if let suspects = failure.suspectsSentence { article.element("p", text: suspects) }
        }
      }
    }
  }

  private func writeFlaky(to page: inout HTMLWriter) {
    page.element("section", ["id": "flaky"]) { section in
      section.element("h2", text: "Flaky tests (\(flaky.count))")
      guard !flaky.isEmpty else { return section.element("p", text: "No test was flaky.") }
      section.element("ul") { list in
        for test in flaky {
          list.element("li", text: "\(test.path) [\(test.host)]: failed, then passed on attempt \(test.attempt)")
        }
      }
    }
  }

  private func writeSlowest(to page: inout HTMLWriter) {
    page.element("section", ["id": "slowest"]) { section in
      section.element("h2", text: "Slowest tests")
      guard !slowest.isEmpty else { return section.element("p", text: "No test ran.") }
      let rows = slowest.map { [ConsoleReporter.seconds($0.duration), $0.test.description] }
      writeTable(["Time", "Test"], rows: rows, to: &section)
    }
  }
}
