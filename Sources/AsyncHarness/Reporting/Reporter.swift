/// Receives every ``Event`` of a run, in order, on the thread that runs the tests.
///
/// A reporter never reaches back into the runner. Implement it in a page: the console,
/// JSON Lines and JUnit reporters are ordinary conformers.
///
/// What a reporter can rely on: tests run one at a time, so their events never interleave;
/// a test's `issueRecorded` events come before its `testEnded`, whose ``TestResult/issues``
/// holds every one of them, except late signals, which arrive after `testEnded` (still
/// within the suite when they arrive before it ends). ``finish()`` is called once, after
/// `runEnded`, or when the run stops because a reporter threw.
public protocol Reporter: AnyObject {
  /// Handles one event. A thrown error stops the run and is reported to the user.
  func handle(_ event: Event) throws
  /// Called once after `runEnded`: flush and close whatever the reporter writes.
  func finish() throws
}

extension Reporter {
  /// Does nothing: most reporters write as they go.
  public func finish() throws {}
}
