import AsyncHarness
import Foundation

extension Event {
  /// The event with its times zeroed (its timestamp, and a test's attempts', suite's or run's
  /// duration) and without the lanes that ran it, so two runs that did the same things
  /// compare equal, whichever lane took what.
  package var withoutTimes: Event {
    var event = self
    event.lane = nil
    event.timestamp = Date(timeIntervalSince1970: 0)
    switch event.kind {
    case .testEnded(let test, var end):
      for index in end.attempts.indices {
        (end.attempts[index].duration, end.attempts[index].lane) = (0, nil)
        if end.attempts[index].started != nil { end.attempts[index].started = Date(timeIntervalSince1970: 0) }
      }
      event.kind = .testEnded(test, end)
    case .suiteEnded(let suite, let summary, _): event.kind = .suiteEnded(suite, summary, duration: 0)
    case .runEnded(let summary, _): event.kind = .runEnded(summary, duration: 0)
    default: break
    }
    return event
  }
}

extension EventRecorder {
  /// A recorder holding the events of a JSON Lines stream (`--json`), read as
  /// ``EventStream`` reads them: its ``results`` give each test's verdict with its last
  /// attempt's issues.
  package convenience init(jsonLines text: String) throws {
    self.init()
    var stream = EventStream()
    for line in text.split(separator: "\n") {
      for event in try stream.read(line: line) { handle(event) }
    }
  }
}

/// The events that end a test's one attempt with `result`, as the runner sends them: an
/// `issueRecorded` for each of its issues, then its `testEnded`.
package func ended(_ test: TestID, _ result: TestResult, duration: Double) -> [Event.Kind] {
  result.issues.map { .issueRecorded(test, $0) } + [.testEnded(test, TestEnd(once: result, duration: duration))]
}
