/// Something that went wrong (or deserves attention) while a test ran.
///
/// Failures are data: reporters decide how to show each ``Kind``.
public struct Issue: Sendable, Hashable, Codable {
  /// What kind of problem an issue describes.
  public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
    /// An `expect` or `require` did not hold, or the test called `fail`.
    case expectationFailed
    /// A wait ended without success: it timed out, an inverted expectation was fulfilled,
    /// or expectations were fulfilled out of the enforced order.
    case waitFailed
    /// The test threw an error.
    case errorThrown
    /// The harness was used in a way it does not support (a nested wait, waiting twice on an
    /// expectation, over-fulfilling, a blocking wait where the run loop cannot turn).
    case apiMisused
    /// A synchronous dispatch that would deadlock: the target queue is already waiting for
    /// the caller.
    case deadlock
    /// The test ran past its time limit (``Configuration/timeLimit``).
    case timeLimitExceeded
    /// The process running the test ended while it ran: a crash (`fatalError`, a failed
    /// precondition, a signal such as SIGSEGV) or a call to `exit`. Only a test isolated in
    /// a worker process survives to report it.
    case crashed
    /// The run was interrupted (SIGINT, SIGTERM) while the test ran, and the test was
    /// stopped.
    case interrupted
    /// A fulfillment or signal arrived after the test that created it had ended.
    case lateSignal
    /// A note that does not fail the test, such as the synchronous waiter falling back to a
    /// blocking wait.
    case warning
    /// Work the test left running in its worker process when it returned: tasks holding
    /// every thread of Swift's cooperative pool, threads it started that are still running,
    /// or child processes it did not wait for. A warning: it does not fail the test, but the
    /// worker is retired (or the children stopped) so that the next test starts clean.
    case leaked
    /// A value the test attached to itself (Swift Testing's `Attachment.record`), under
    /// `harness test`: its name in Swift Testing's words (`Attached 'log.txt' to parses()`),
    /// and the file it was saved as when the run saves attachments (`--attachments-path`).
    /// Never a failure.
    case attachment
  }

  /// What kind of problem this is.
  public var kind: Kind
  /// The message a user reads.
  public var message: String
  /// Where in the user's code the problem was detected.
  public var sourceLocation: SourceLocation?

  /// Creates an issue.
  public init(kind: Kind, message: String, sourceLocation: SourceLocation? = nil) {
    self.kind = kind
    self.message = message
    self.sourceLocation = sourceLocation
  }

  /// Reads an issue as the event stream writes it.
  /// - Throws: ``EventDecodingError`` when a field is missing or has the wrong type.
  public init(from decoder: any Decoder) throws { try self.init(mappedFrom: decoder) }

  /// Writes the issue as the event stream does: `sourceLocation` only when known.
  public func encode(to encoder: any Encoder) throws { try encodeMapped(to: encoder) }

  /// Whether this issue makes its test fail. Warnings, leaks, late signals and attachments do
  /// not.
  public var isFailure: Bool {
    switch kind {
    case .warning, .leaked, .lateSignal, .attachment: false
    default: true
    }
  }

  /// Whether reporters that separate the two (JUnit) show this issue as an error rather than
  /// a failure: a thrown error or a problem with the harness or the test's set-up, rather
  /// than an assertion about the code under test.
  public var isError: Bool {
    switch kind {
    case .errorThrown, .apiMisused, .deadlock, .timeLimitExceeded, .crashed, .interrupted: true
    default: false
    }
  }

  /// The message followed by ` (File.swift:LINE)` when the location is known.
  public var description: String {
    guard let sourceLocation else { return message }
    return "\(message) (\(sourceLocation))"
  }
}
