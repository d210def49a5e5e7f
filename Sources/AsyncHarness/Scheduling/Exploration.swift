extension Configuration {
  /// The schedules each test runs under with `host`: the operation on the plan behind
  /// `--explore N` and `--schedule TOKEN`.
  ///
  /// - A waiter that does not order work itself, or a testing library: `nil` (each test runs
  ///   once, unscheduled).
  /// - A ``ScheduledWaiter`` replaying a token (``replay``): the token's schedule.
  /// - A ``ScheduledWaiter`` exploring (``explorations`` = N): seeds 1 through N with
  ///   ``explorationPolicy``, or the waiter's default policy.
  /// - Otherwise: the waiter's ``ScheduledWaiter/defaultSchedule``.
  ///
  /// A test's step under each schedule is identified by ``id(_:under:)``.
  func schedules(under host: Catalog.Host) -> [Schedule]? {
    guard case .waiter(let waiter) = host, let scheduled = waiter as? ScheduledWaiter else { return nil }
    if let replay { return [replay.schedule] }
    if let explorations {
      let policy = explorationPolicy ?? scheduled.defaultSchedule.policy
      return (1...max(1, explorations)).map { Schedule(seed: UInt64($0), policy: policy) }
    }
    return [scheduled.defaultSchedule]
  }

  /// `step` under `schedule`: its identity carries the schedule's replay token.
  static func id(_ step: TestID, under schedule: Schedule) -> TestID {
    var id = step
    id.schedule = schedule.token(forTestAt: step.path).description
    return id
  }
}
