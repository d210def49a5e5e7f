import Synchronization

/// What a ``Waiter`` waits for: a condition the harness evaluates, plus a way to be woken
/// when it may have changed.
///
/// The harness builds one for every wait (for expectations, a probe, or notifications).
/// A waiter's job is only to sleep its own way and return once ``isDone()`` is true or the
/// deadline has passed; the harness then decides the outcome and writes the messages.
public final class WaitCondition: Sendable {
  /// Whether the condition can change without a wake-up (a probe over plain state), so a
  /// waiter must re-evaluate it as time passes, not only when woken.
  public let isPolled: Bool
  /// What is being waited for, for messages: `expectations "a", "b"`.
  public let summary: String
  /// Where the wait was made.
  public let sourceLocation: SourceLocation
  /// The queues of the waiting test, as its strategy made them (``Waiter/makeQueues(for:)``),
  /// so that a strategy that runs their work itself finds it; `nil` for a condition made
  /// outside a test.
  public let queues: (any TestQueues)?
  /// The wait's own timeout (the deadline a waiter gets can come earlier: the test's time
  /// limit); `nil` for a condition made outside a test.
  public let timeout: Duration?

  private let evaluate: @Sendable () -> Bool
  private let warn: @Sendable (Issue) -> Void
  private let wakeHandlers = Mutex<[@Sendable () -> Void]>([])
  private let expiry = Mutex<String?>(nil)

  /// Creates a condition. Waiter authors use this in their own tests; the harness creates
  /// the conditions of real waits.
  public init(summary: String, isPolled: Bool = false,
              sourceLocation: SourceLocation = SourceLocation(), queues: (any TestQueues)? = nil,
              timeout: Duration? = nil,
              recordWarning: @escaping @Sendable (Issue) -> Void = { _ in },
              isDone: @escaping @Sendable () -> Bool) {
    self.summary = summary
    self.isPolled = isPolled
    self.sourceLocation = sourceLocation
    self.queues = queues
    self.timeout = timeout
    self.warn = recordWarning
    self.evaluate = isDone
  }

  /// Whether the wait can end: it succeeded, failed for good, or the test recorded a
  /// failing issue (fail fast). Waiters call this after each wake-up.
  public func isDone() -> Bool { isExpired || evaluate() }

  /// Ends the wait as if its timeout had passed, for a strategy that keeps its own time
  /// (the scheduled strategy's virtual clock): the wait is then judged as timed out, and a
  /// failure says what the timeout says, then `; ` and `note`.
  public func expire(because note: String) {
    expiry.withLock { $0 = $0 ?? note }
    wake()
  }

  /// Why a strategy ended the wait at its timeout in its own time, if it did.
  var expiryNote: String? { expiry.withLock { $0 } }

  private var isExpired: Bool { expiry.withLock { $0 != nil } }

  /// Registers a handler called (on any thread) whenever the condition may have changed.
  /// Register it *before* the first ``isDone()`` check so that no wake-up is lost.
  public func onWake(_ handler: @escaping @Sendable () -> Void) {
    wakeHandlers.withLock { $0.append(handler) }
  }

  /// Records a warning on the waiting test: it is reported but does not fail the test.
  public func recordWarning(_ message: String) {
    warn(Issue(kind: .warning, message: message, sourceLocation: sourceLocation))
  }

  /// Calls the wake handlers. The harness calls it on a fulfillment, a matching
  /// notification or a recorded issue.
  public func wake() {
    for handler in wakeHandlers.withLock({ $0 }) { handler() }
  }
}
