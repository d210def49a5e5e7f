/// The issues of the attempts that have not ended yet, gathered from their `issueRecorded`
/// events, for a reporter that shows a test's issues at its end.
///
/// The event stream says each issue once, as it happens; a test's `testEnded` comes after
/// every issue of each of its attempts, and counts them (``TestAttempt/issueCount``). Give
/// every event to ``take(_:)``; at a `testEnded`, ``end(_:_:)`` hands over each attempt's
/// issues and forgets them. A late signal (an issue of kind ``Issue/Kind/lateSignal``, which
/// always comes after its attempt ended) is not kept, nor an issue of an attempt that did not
/// start here: ``take(_:)`` says so, for the reporter to place it.
public struct AttemptIssues: Sendable {
  /// The issues of each attempt that started and whose test has not ended, by its ID.
  private var open: [TestID: [Issue]] = [:]

  /// Creates an empty ledger.
  public init() {}

  /// Takes an event: a `testStarted` opens its attempt, an `issueRecorded` of an open
  /// attempt is kept.
  /// - Returns: `false` for a late signal and for an issue whose attempt is not open; `true`
  ///   for every other event.
  @discardableResult
  public mutating func take(_ event: Event) -> Bool {
    switch event.kind {
    case .testStarted(let test):
      open[test] = []
    case .issueRecorded(let test, let issue):
      guard issue.kind != .lateSignal, open[test] != nil else { return false }
      open[test]!.append(issue)
    default:
      break
    }
    return true
  }

  /// The issues of each attempt of the test that ended with `end`, whose last attempt is
  /// `test`, first attempt first; the ledger forgets them.
  public mutating func end(_ test: TestID, _ end: TestEnd) -> [[Issue]] {
    end.attempts.map { attempt in
      var id = test
      id.attempt = attempt.number
      return open.removeValue(forKey: id) ?? []
    }
  }
}
