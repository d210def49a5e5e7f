extension HTMLReport {
  /// The timeline: a row per lane, and per sub-track of a lane whose attempts ran side by side
  /// (`lane 1 · 2`), with a bar per attempt, placed and sized in percent of the run's length
  /// (CSS only), from the same ``RunTimeline`` as the trace, so its rows are the trace's
  /// tracks; each bar's title names the attempt, its verdict and its time. At most
  /// ``timelineLimit`` bars, the longest.
  func writeTimeline(to page: inout HTMLWriter) {
    let attempts = timeline.attempts
    let length = max(timeline.latest, 1)
    let drawn = Self.longest(attempts, limit: Self.timelineLimit)
    page.element("section", ["id": "timeline"]) { section in
      section.element("h2", text: "Timeline")
      let onTracks = Dictionary(grouping: attempts.indices) { attempts[$0].track }
      let tracks = onTracks.keys.sorted()
      guard !tracks.isEmpty else { return section.element("p", text: "No test ran.") }
      let lanes = Set(tracks.map(\.lane)).count
      var intro = "\(Self.count(attempts.count, "attempt")) in \(Self.count(lanes, "lane")) over \(Self.seconds(length))."
      if attempts.count > Self.timelineLimit {
        intro += " The \(attempts.count - Self.timelineLimit) shortest are not drawn: the page draws the \(Self.timelineLimit)"
          + " longest."
      }
      section.element("p", text: intro)
      section.element("p", ["class": "legend"]) { legend in
        for (verdict, name) in [("passed", "passed"), ("failed", "failed"), ("errored", "errored"), ("skipped", "skipped"),
                                ("knownIssue", "known issue"), ("flaky", "flaky"), ("retried", "failed, retried"),
                                ("unfinished", "unfinished")] {
          legend.element("span", ["class": "key"]) { key in
            key.element("span", ["class": "swatch \(verdict)"], text: "")
            key.text(name)
          }
        }
      }
      for track in tracks {
        let indices = onTracks[track] ?? []
        let busy = indices.reduce(Int64(0)) { $0 + attempts[$1].duration }
        section.element("div", ["class": "lane"]) { row in
          row.element("div", ["class": "lane-name"],
                      text: "\(track.name): \(Self.count(indices.count, "attempt")), busy \(Self.seconds(busy))")
          row.element("div", ["class": "track"]) { track in
            for index in indices where drawn[index] { writeBar(attempts[index], of: length, to: &track) }
          }
        }
      }
      section.element("div", ["class": "axis"]) { axis in
        for quarter in Int64(0)...4 {
          axis.element("span", ["style": "left:\(Self.percent(length * quarter / 4, of: length))"],
                       text: Self.seconds(length * quarter / 4))
        }
      }
    }
  }

  /// Which of `attempts` are the `limit` longest (at the shortest length drawn, the first
  /// ones); all of them when there are no more.
  static func longest(_ attempts: [RunTimeline.Attempt], limit: Int) -> [Bool] {
    guard attempts.count > limit else { return Array(repeating: true, count: attempts.count) }
    guard limit > 0 else { return Array(repeating: false, count: attempts.count) }
    let shortestDrawn = attempts.map(\.duration).sorted(by: >)[limit - 1]
    var equalOnesLeft = limit - attempts.count { $0.duration > shortestDrawn }
    return attempts.map { attempt in
      if attempt.duration > shortestDrawn { return true }
      guard attempt.duration == shortestDrawn, equalOnesLeft > 0 else { return false }
      equalOnesLeft -= 1
      return true
    }
  }

  private func writeBar(_ attempt: RunTimeline.Attempt, of length: Int64, to track: inout HTMLWriter) {
    let verdict = attempt.retried ? "retried" : attempt.verdict?.rawValue ?? "unfinished"
    track.element("span", [
      "class": "bar \(verdict)",
      "style": "left:\(Self.percent(attempt.start, of: length));width:\(Self.percent(attempt.duration, of: length))",
      "title": "\(attempt.test.description): \(verdict), \(Self.seconds(attempt.duration))",
    ], text: "")
  }

  /// `part` of `whole` in percent with three decimals: `12.345%`, the same on every locale.
  static func percent(_ part: Int64, of whole: Int64) -> String {
    ConsoleReporter.threeDecimals(part * 100_000 / max(whole, 1)) + "%"
  }

  /// `1 attempt`, `2 attempts`.
  static func count(_ number: Int, _ noun: String) -> String {
    "\(number) \(noun)\(number == 1 ? "" : "s")"
  }

  /// Microseconds as the console writes seconds.
  static func seconds(_ micros: Int64) -> String {
    ConsoleReporter.seconds(Double(micros) / 1_000_000)
  }
}
