import AsyncHarness
import Foundation

extension Event {
  /// The event with its times zeroed (its timestamp, and a test's, suite's or run's
  /// duration) and without the lane that ran it, so two runs that did the same things
  /// compare equal, whichever lane took what.
  package var withoutTimes: Event {
    var event = self
    event.lane = nil
    event.timestamp = Date(timeIntervalSince1970: 0)
    switch event.kind {
    case .testEnded(let test, let result, _): event.kind = .testEnded(test, result, duration: 0)
    case .suiteEnded(let suite, let summary, _): event.kind = .suiteEnded(suite, summary, duration: 0)
    case .runEnded(let summary, _): event.kind = .runEnded(summary, duration: 0)
    default: break
    }
    return event
  }
}
