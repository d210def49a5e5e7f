/// The tests that ended last in one worker process, latest last, at most
/// ``OutsideFailure/suspectLimit``: the suspects of what fails in it after them. Any kind of
/// worker keeps them, and says with them how it ended while none of its tests ran
/// (``OutsideFailure/endedBetweenTests(_:_:after:because:output:suite:kind:)``).
struct TestsEnded {
  /// The tests, latest last.
  private(set) var ids: [TestID] = []

  /// The test of `id` ended in the worker.
  mutating func append(_ id: TestID) {
    ids.append(id)
    if ids.count > OutsideFailure.suspectLimit { ids.removeFirst() }
  }

  /// The tests as `Suite/test`, latest last.
  var suspects: [String] { ids.map(\.path) }
}

extension OutsideFailure {
  /// How many of the tests that ended last in a process a failure names as suspects.
  static let suspectLimit = 3

  /// `; its last output:` and `output`, or that it printed nothing: the end of a message
  /// about a worker process that ended.
  static func lastOutput(_ output: String) -> String {
    output.isEmpty ? "; it printed nothing" : "; its last output:\n\(output)"
  }

  /// The failure of `process` (`The worker process`, `The test bundle`), which `how` (`ended
  /// with signal SIGILL (illegal instruction)`) while none of its tests ran, after `ended`
  /// (the last of them named), `because` of what, when that is known, with its last output.
  static func endedBetweenTests(_ process: String, _ how: String, after ended: TestsEnded, because cause: String? = nil,
                                output: String, suite: SuiteRun, kind: Issue.Kind) -> OutsideFailure {
    let after = ended.ids.last.map { "after \($0.path) returned" } ?? "before its first test started"
    return OutsideFailure(
      place: .process, suite: suite,
      issue: Issue(kind: kind, message: "\(process) \(how) while none of its tests ran, \(after)"
        + (cause.map { ": \($0)" } ?? "") + lastOutput(output)),
      suspects: ended.suspects, afterTests: !ended.ids.isEmpty)
  }
}
