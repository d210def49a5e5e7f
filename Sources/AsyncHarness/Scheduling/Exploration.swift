extension Configuration {
  /// Turns one step of the run (a test under a waiter) into the steps it runs as: the
  /// operation on the plan behind `--explore N` and `--schedule TOKEN`.
  ///
  /// - A waiter that does not order work itself: the step, once, with no schedule.
  /// - A ``ScheduledWaiter`` replaying a token (``replay``): once, under the token's schedule.
  /// - A ``ScheduledWaiter`` exploring (``explorations`` = N): N steps, under seeds 1 through N
  ///   with ``explorationPolicy``, or the waiter's default policy.
  /// - Otherwise: once, under the waiter's ``ScheduledWaiter/defaultSchedule``.
  ///
  /// Each returned ``TestID`` carries its schedule's replay token (``TestID/schedule``).
  public func scheduledSteps(_ step: TestID, under waiter: any Waiter) -> [(id: TestID, schedule: Schedule?)] {
    guard let schedules = schedules(under: waiter) else { return [(step, nil)] }
    return schedules.map { schedule in (Self.id(step, under: schedule), schedule) }
  }

  /// The schedules each test runs under with `waiter`, as ``scheduledSteps(_:under:)`` says;
  /// `nil` for a strategy that does not order work itself (each test runs once, unscheduled).
  func schedules(under waiter: any Waiter) -> [Schedule]? {
    guard let scheduled = waiter as? ScheduledWaiter else { return nil }
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
