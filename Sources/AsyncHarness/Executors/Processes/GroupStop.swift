#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// When and how a poll loop stops the process group running a test: SIGTERM at the test's
/// deadline or when the run is interrupted, SIGKILL once the grace period after SIGTERM is
/// over; and, once the process ended, how the test's attempt ended.
struct GroupStop {
  let gracePeriod: Duration
  /// When the running test is stopped, or `nil` for never.
  var deadline: ContinuousClock.Instant?
  /// The last signal sent, when, and the interrupting signal when it was sent for one.
  private(set) var stopped: (signal: Int32, at: ContinuousClock.Instant, interrupt: Int32?)?

  init(gracePeriod: Duration, deadline: ContinuousClock.Instant?) {
    self.gracePeriod = gracePeriod
    self.deadline = deadline
  }

  /// Milliseconds until the next deadline (the test's, then the end of the grace period),
  /// as `poll` takes them: -1 for none.
  func timeout() -> Int32 {
    let next: ContinuousClock.Instant? = stopped.map { $0.at + gracePeriod } ?? deadline
    guard let next else { return -1 }
    let left = ContinuousClock().now.duration(to: next)
    return left <= .zero ? 0 : Int32(min(left.timeInterval * 1000 + 1, Double(Int32.max)))
  }

  /// Sends SIGTERM to the process group, or SIGKILL when its grace period after SIGTERM is
  /// over; `interrupt` is the signal that interrupted the run, when that is why.
  mutating func stop(_ process: ChildProcess, interrupt: Int32? = nil) {
    if let stopped, stopped.signal == SIGKILL { return }
    let signal = stopped == nil ? SIGTERM : SIGKILL
    process.signal(signal)
    stopped = (signal, ContinuousClock().now, interrupt ?? stopped?.interrupt)
  }

  /// How the attempt of a test that ran under `timeLimit` ended when its process ended with
  /// `exit` before the test did, with `output`, the tail of what it printed.
  func ending(_ exit: ProcessEnding, timeLimit: Duration?, output: String) -> AttemptEnd {
    if let stopped, let interrupt = stopped.interrupt { return .interrupted(signal: interrupt, output: output) }
    if let stopped {
      return .stoppedAtLimit(timeLimit ?? .zero, killed: stopped.signal == SIGKILL, gracePeriod: gracePeriod, output: output)
    }
    return .processEnded(exit, output: output)
  }
}
