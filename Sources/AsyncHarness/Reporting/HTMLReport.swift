import Foundation

/// What the HTML report (`--report-html`, ``HTMLReporter``) shows of a run, collected from its
/// events and bounded: each text keeps at most `outputLimit` bytes (``CappedText``), only the
/// first ``detailedFailures`` failures keep their output, the slowest list keeps
/// ``slowestCount`` attempts and the timeline draws at most ``timelineLimit`` bars.
struct HTMLReport: EndOfRunContents {
  /// The most failures whose output the page keeps.
  static let detailedFailures = 100
  /// How many of the slowest attempts the page lists.
  static let slowestCount = 10
  /// The most attempts the timeline draws (the longest ones); the page says how many it left out.
  static let timelineLimit = 2000

  /// A test whose last attempt failed or errored.
  struct Failure {
    /// The last attempt.
    var test: TestID
    /// How it ended: its verdict, its last attempt's issues and schedule.
    var result: TestResult
    /// How long its last attempt ran, in seconds.
    var duration: Double
    /// What it printed; nil past the first ``HTMLReport/detailedFailures`` failures.
    var output: String?
  }

  /// The most UTF-8 bytes kept of each text.
  let outputLimit: Int
  /// The run's facts, from `runStarted`.
  private(set) var run: RunInfo?
  /// The counts of the tests that ended (their last attempts).
  private(set) var summary = Summary()
  /// The run's duration, from `runEnded`; nil when the run did not end (it was interrupted).
  private(set) var duration: Double?
  /// Each suite's counts under each waiter.
  private(set) var table = SummaryTable()
  private(set) var failures: [Failure] = []
  /// The failures outside every test, in the order they were found.
  private(set) var outsideFailures: [OutsideFailure] = []
  /// The flaky tests, by the attempt that passed.
  private(set) var flaky: [TestID] = []
  /// The slowest attempts, slowest first.
  private(set) var slowest: [(test: TestID, duration: Double)] = []
  /// The run's timeline, as the trace has it, and whether this page places the events on it
  /// (else the trace does).
  let sharedTimeline: SharedTimeline
  private let feeds: Bool
  /// The attempts in time and the latest time seen, read from the timeline when the run ends.
  private(set) var timeline: (attempts: [RunTimeline.Attempt], latest: Int64) = ([], 0)
  /// What each running attempt printed so far.
  private var output: [TestID: CappedText] = [:]
  /// The issues of each running attempt so far.

  /// An empty report keeping at most `outputLimit` bytes of each text, drawing `timeline`
  /// (placing the events on it itself when it `feeds` it).
  init(outputLimit: Int, timeline: SharedTimeline = SharedTimeline(), feeds: Bool = true) {
    self.outputLimit = max(0, outputLimit)
    sharedTimeline = timeline
    self.feeds = feeds
  }

  /// Keeps what the page shows of `event`.
  mutating func record(_ event: Event) {
    switch event.kind {
    case .waitEnded, .scheduleStep: return  // the page draws the attempts, not what happened inside them
    default: if feeds { sharedTimeline.record(event) }
    }
    switch event.kind {
    case .runStarted(let info):
      run = info
      table.waiters = info.waiters
    case .suiteStarted(let suite):
      table.start(suite)
    case .outputCaptured, .outputShared:
      guard let (test, pieces) = event.kind.printedOutput else { return }
      for piece in pieces { output[test, default: CappedText(limit: outputLimit)].append(piece) }
    case .testEnded(let test, let end):
      var printed: CappedText?
      for attempt in end.attempts {
        var id = test
        id.attempt = attempt.number
        printed = output.isEmpty ? nil : output.removeValue(forKey: id)
        keepSlowest(id, attempt.duration)
      }
      let issues = end.lastAttempt.issues
      summary.count(end.verdict)
      if end.verdict == .flaky { flaky.append(test) }
      if end.verdict.isFailure {
        let output = failures.count < Self.detailedFailures ? printed?.text ?? "" : nil
        let result = TestResult(verdict: end.verdict, reason: end.reason, issues: issues, scheduleTrace: end.lastAttempt.scheduleTrace)
        failures.append(Failure(test: test, result: result, duration: end.lastAttempt.duration, output: output))
      }
    case .suiteEnded(let suite, let counts, _):
      table.record(counts, of: suite)
    case .runEnded(_, let duration):
      self.duration = duration
    case .outsideFailure(let failure):
      summary.outsideFailures += 1
      outsideFailures.append(failure)
    case .testStarted, .issueRecorded, .testSlow, .waitEnded, .scheduleStep, .workerReplaced:
      break
    }
  }

  /// Ends what is still open on the timeline (the run was interrupted), and reads it.
  mutating func close() {
    sharedTimeline.close()
    timeline = sharedTimeline.attemptsAndLatest
  }

  /// `text` cut to the output limit, with the note saying how much was cut.
  func capped(_ text: String) -> String {
    CappedText.capped(text, limit: outputLimit)
  }

  private mutating func keepSlowest(_ test: TestID, _ duration: Double) {
    guard slowest.count < Self.slowestCount || duration > slowest[slowest.count - 1].duration else { return }
    let index = slowest.firstIndex { $0.duration < duration } ?? slowest.endIndex
    slowest.insert((test, duration), at: index)
    if slowest.count > Self.slowestCount { slowest.removeLast() }
  }
}
