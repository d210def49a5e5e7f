import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes every ``Event`` as one JSON object a line (schema ``Event/schemaVersion``, see
/// ``Event/jsonLine``), for tools that read a run's events. Keys are sorted and timestamps
/// are ISO 8601, so the stream is stable and diffable. (A worker process does not use it: its
/// channel writes each event through the same mapping, as ``Event/jsonLine`` does.)
///
/// Lines reach a file whole: a reader following the file never sees half a line, and a run
/// that stops early (a crash, Ctrl-C, a reporter error) leaves every event up to then and no
/// `runEnded`. A line that test code may follow is written at once, with one `write` call:
/// `testStarted` (the test runs next: if it crashes the process, the stream names it),
/// what a running test records (`issueRecorded`, `outputCaptured`, `testSlow`, `waitEnded`,
/// `scheduleStep`) and `runEnded`. The lines between one test and the next (`workerReplaced`, `testEnded`,
/// `suiteEnded`, `suiteStarted`, `runStarted`), made while only the harness runs, are held and written
/// with the next line written at once, or by a timer 0.1 s after the first of them:
/// one `write` a test instead of two, which is most of what the stream costs
/// (Benchmarks/README.md, part 7). The one line this can lose is the `testEnded` of a test
/// whose callback, on another thread, crashes the process after the test ended and before the
/// next one starts. A stream written through a closure gets each line in a call of its own,
/// as its event happens.
///
/// Output is bounded like the JUnit report's: each test keeps at most `outputLimit` bytes of
/// captured output, after which its `outputCaptured` events are dropped and one last
/// `outputCaptured` event says how many bytes were cut; each issue message keeps at most
/// `outputLimit` bytes too.
public final class JSONLinesReporter: Reporter {
  /// The most UTF-8 bytes kept of each test's output and of each issue message.
  public let outputLimit: Int
  /// The longest a line between two tests waits in a file stream for the next line that is
  /// written at once (a test in another worker process may run for long).
  static let fileHoldLimit: Duration = .milliseconds(100)
  /// Held lines are written once they reach this many bytes, whatever comes next.
  private static let heldBytesLimit = 64 * 1024

  private let write: @Sendable (UnsafeBufferPointer<UInt8>) throws -> Void
  private let close: @Sendable () throws -> Void
  private let state: Mutex<State>
  /// How long the lines between two tests may be held; nil: every line is written as its
  /// event happens.
  private let holdLimit: Duration?
  /// Writes held lines that no line written at once has carried out within `holdLimit`.
  private let holdTimer: SendableBox<any DispatchSourceTimer>?

  private struct State: ~Copyable {
    /// The output kept so far of each test that produced output and has not ended (tests of
    /// several worker processes run at once).
    var output: [TestID: CappedText] = [:]
    /// The lines not written yet; the storage is kept from one write to the next.
    var lines: JSONText
    /// Whether the hold timer will fire.
    var timerArmed = false
    /// Why the timer's last write failed, thrown by the next call.
    var failure: (any Error)?
    /// Whether ``finish()`` ran: the descriptor is closed, nothing more is written.
    var finished = false
  }

  /// Creates a reporter writing lines through `write`, one line a call, as each event happens.
  public convenience init(outputLimit: Int = ReportDefaults.outputLimit, write: @escaping @Sendable (String) -> Void) {
    self.init(outputLimit: outputLimit, holdLimit: nil, write: { write(String(decoding: $0, as: UTF8.self)) },
              close: {})
  }

  /// Creates a reporter handing its bytes to `write`: one line a call, or, with a `holdLimit`,
  /// the lines between two tests held (at most that long) and handed over with the next.
  init(outputLimit: Int, holdLimit: Duration?, write: @escaping @Sendable (UnsafeBufferPointer<UInt8>) throws -> Void,
       close: @escaping @Sendable () throws -> Void) {
    self.outputLimit = max(0, outputLimit)
    state = Mutex(State(lines: JSONText(messageLimit: self.outputLimit)))
    self.write = write
    self.close = close
    self.holdLimit = holdLimit
    holdTimer = holdLimit == nil ? nil : SendableBox(DispatchSource.makeTimerSource(queue: .global()))
    if let timer = holdTimer?.value {
      timer.setEventHandler { [weak self] in self?.writeHeldLines() }
      timer.activate()
    }
  }

  /// Creates a reporter writing to a new file at `path` (an existing file is replaced), each
  /// line written whole, the lines between two tests held until the next test starts (at most
  /// 0.1 s).
  /// - Throws: ``ReportFileError`` when the file cannot be written (the path names a
  ///   directory, the directory is missing or cannot hold a file, the name is too long),
  ///   before any test runs.
  public convenience init(path: String, outputLimit: Int = ReportDefaults.outputLimit) throws {
    if let reason = ReportDestination.problem(with: path) { throw ReportFileError(path: path, reason: reason) }
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else { throw ReportFileError(path: path, reason: ReportDestination.systemError()) }
    self.init(descriptor: descriptor, name: path, outputLimit: outputLimit, closing: true, holdsLines: true)
  }

  /// Creates a reporter writing to an open file descriptor, named `name` in errors; `closing`
  /// closes it in ``finish()``. `holdsLines` holds the lines between two tests (see the type's
  /// documentation); without it, every line is written as its event happens.
  convenience init(descriptor: Int32, name: String, outputLimit: Int = ReportDefaults.outputLimit, closing: Bool,
                   holdsLines: Bool = false) {
    var close: @Sendable () throws -> Void = {}
    if closing { close = { try closeFile(descriptor, path: name) } }
    self.init(outputLimit: outputLimit, holdLimit: holdsLines ? Self.fileHoldLimit : nil,
              write: { try writeWhole(UnsafeRawBufferPointer($0), to: descriptor, path: name) }, close: close)
  }

  deinit {
    holdTimer?.value.cancel()
  }

  /// Writes one event as one whole line: at once, or held with the lines between two tests.
  /// Events after ``finish()`` are dropped: the descriptor is closed, and its number may
  /// already name another file.
  /// - Parameter event: The event.
  /// - Throws: ``ReportFileError`` when lines cannot be written (this event's, or held ones
  ///   the timer could not write).
  public func handle(_ event: Event) throws {
    try state.withLock { state in
      guard !state.finished else { return }
      if let failure = state.failure {
        state.failure = nil
        throw failure
      }
      // Output is kept per test up to the limit; issue messages are cut as they are written.
      switch event.kind {
      case .outputCaptured, .outputShared:
        guard let (test, pieces) = event.kind.printedOutput else { return }
        var given = 0
        let kept = pieces.map { piece in
          given += piece.utf8.count
          return state.output[test, default: CappedText(limit: outputLimit)].append(piece)
        }.joined()
        guard !kept.isEmpty || given == 0 else { return }
        // What was kept is a prefix of the text: as long as it, it is all of it.
        let whole = kept.utf8.count == given
        try add(whole ? event : Event(.outputCaptured(test, kept), timestamp: event.timestamp), to: &state)
      case .testEnded(let test, let end):
        // Each attempt's note of what its output lost, just before its test's end.
        for attempt in end.attempts where !state.output.isEmpty {
          var id = test
          id.attempt = attempt.number
          if let cut = state.output.removeValue(forKey: id)?.cutBytes, cut > 0 {
            let note = CappedText.cutNote(bytes: cut, limit: outputLimit)
            try add(Event(.outputCaptured(id, note), timestamp: event.timestamp), to: &state)
          }
        }
        try add(event, to: &state)
      default:
        try add(event, to: &state)
      }
      guard let holdLimit, let timer = holdTimer?.value else { return }
      if Self.writesAtOnce(event.kind) || state.lines.count >= Self.heldBytesLimit {
        try writeLines(&state)
      } else if !state.timerArmed {
        state.timerArmed = true
        timer.schedule(deadline: .now() + holdLimit.timeInterval)
      }
    }
  }

  /// Adds `event`'s line to the lines not written yet; without a hold limit, writes it now, in
  /// a call of its own.
  private func add(_ event: Event, to state: inout State) throws {
    state.lines.line(event)
    if holdLimit == nil { try writeLines(&state) }
  }

  /// Writes the held lines and closes the stream.
  /// - Throws: ``ReportFileError`` when the lines cannot be written or the file closed.
  public func finish() throws {
    try state.withLock { state in
      guard !state.finished else { return }
      state.finished = true
      holdTimer?.value.cancel()
      if let failure = state.failure {
        state.failure = nil
        throw failure
      }
      try writeLines(&state)
    }
    try close()
  }

  /// Whether an event's line is written at once: test code may run next (a test starts, or
  /// one is running) or the run ends. The other lines come between two tests, from the
  /// harness alone, and can wait for the next.
  private static func writesAtOnce(_ kind: Event.Kind) -> Bool {
    switch kind {
    case .testStarted, .issueRecorded, .outputCaptured, .outputShared, .testSlow, .waitEnded, .scheduleStep, .runEnded,
         .outsideFailure: true
    case .runStarted, .suiteStarted, .workerReplaced, .testEnded, .suiteEnded: false
    }
  }

  /// Writes the lines not written yet, with one `write` call.
  private func writeLines(_ state: inout State) throws {
    guard state.lines.count > 0 else { return }
    defer { state.lines.removeAll() }
    try state.lines.withUnsafeBytes(write)
  }

  /// The hold timer's work: writes what is still held, keeping a failure for the next call.
  private func writeHeldLines() {
    state.withLock { state in
      state.timerArmed = false
      guard !state.finished, state.failure == nil else { return }
      do { try writeLines(&state) } catch { state.failure = error }
    }
  }
}

private func closeFile(_ descriptor: Int32, path: String) throws {
  guard close(descriptor) == 0 else { throw ReportFileError(path: path, reason: ReportDestination.systemError()) }
}

/// A report file that cannot be written.
public struct ReportFileError: Error, Equatable, CustomStringConvertible {
  /// The path that was asked for.
  public var path: String
  /// Why it cannot be written.
  public var reason: String
  /// What the file is, as the message names it: `the JSON Lines stream`, `the trace`.
  public var report: String

  /// Creates the error.
  public init(path: String, reason: String, report: String = "the JSON Lines stream") {
    self.path = path
    self.reason = reason
    self.report = report
  }

  /// The message a user reads.
  public var description: String {
    "cannot write \(report) to \(path): \(reason)"
  }
}
