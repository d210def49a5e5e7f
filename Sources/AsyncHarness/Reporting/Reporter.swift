/// Receives every ``Event`` of a run, in order, and writes it somewhere.
///
/// A reporter never reaches back into the runner, and only consumes events. Implement it in
/// a page: the console, JSON Lines and JUnit reporters are ordinary conformers. The runner
/// calls every reporter from one thread of its own, the run's dispatcher, one event at a time,
/// in the order the events happened, whatever thread they happened on (an issue recorded by a
/// callback on a background queue only enqueues its event): a slow reporter delays the
/// reports, never the tests. Reporters are `Sendable` because the dispatcher is not the thread
/// that made them, and ``finish()`` is called once the dispatcher delivered every event.
///
/// What a reporter can rely on: a test's events come between its `testStarted` and its
/// `testEnded`, and the `testEnded` result holds every issue the test recorded while it ran;
/// issues recorded after a test ended (late signals) come later, as `issueRecorded` events
/// with kind ``Issue/Kind/lateSignal``, possibly while another test runs. ``finish()`` is
/// called once, after `runEnded` or when the run stops early (a reporter threw, the run was
/// interrupted); events that arrive after it are not delivered.
public protocol Reporter: Sendable {
  /// Handles one event. A thrown error stops the run and is reported to the user.
  func handle(_ event: Event) throws
  /// Called once at the end: flush and close whatever the reporter writes.
  func finish() throws
}

extension Reporter {
  /// Does nothing: most reporters write as they go.
  public func finish() throws {}
}

/// Where the events of a run go as they happen: an executor sends a test's events through
/// it, and a test's record sends each issue and line of output the moment it is recorded.
@_spi(ForToolsIntegrationOnly) public struct EventSink: Sendable {
  private let deliver: @Sendable (Event) -> Void
  private let waitForDelivery: (@Sendable () -> Void)?

  /// Creates a sink that hands each event to `deliver`.
  @_spi(ForToolsIntegrationOnly) public init(_ deliver: @escaping @Sendable (Event) -> Void) {
    self.deliver = deliver
    waitForDelivery = nil
  }

  /// Creates a sink that hands each event to `deliver`, and whose ``flush()`` calls `flush`.
  init(deliver: @escaping @Sendable (Event) -> Void, flush: @escaping @Sendable () -> Void) {
    self.deliver = deliver
    waitForDelivery = flush
  }

  /// Waits until the events sent so far reached the reporters (a run's reporting channel
  /// delivers them from a thread of its own); returns at once for a sink that delivers as it
  /// is called.
  @_spi(ForToolsIntegrationOnly) public func flush() {
    waitForDelivery?()
  }

  /// Sends an event that happens now.
  @_spi(ForToolsIntegrationOnly) public func callAsFunction(_ kind: Event.Kind) {
    deliver(Event(kind))
  }

  /// Sends an event as it is, with its own timestamp (an event relayed from a worker).
  @_spi(ForToolsIntegrationOnly) public func send(_ event: Event) {
    deliver(event)
  }
}
