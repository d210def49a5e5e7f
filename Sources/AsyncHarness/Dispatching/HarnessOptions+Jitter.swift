import ArgumentParser

extension HarnessOptions {
  /// Checks `--jitter SEED` against the other options: the scheduled strategy that
  /// `--explore` and `--schedule` run under orders work itself and has no real queue to
  /// jitter.
  func validateJitter() throws {
    guard jitter != nil, let flag = run.scheduleFlag else { return }
    throw ValidationError("--jitter and \(flag) cannot be combined: \(flag) runs under the scheduled waiter, which orders work itself on queues --jitter does not delay")
  }
}
