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
    guard let scheduled = waiter as? ScheduledWaiter else { return [(step, nil)] }
    let schedules: [Schedule]
    if let replay {
      schedules = [replay.schedule]
    } else if let explorations {
      let policy = explorationPolicy ?? scheduled.defaultSchedule.policy
      schedules = (1...max(1, explorations)).map { Schedule(seed: UInt64($0), policy: policy) }
    } else {
      schedules = [scheduled.defaultSchedule]
    }
    return schedules.map { schedule in
      var id = step
      id.schedule = schedule.token(forTestAt: step.path).description
      return (id, schedule)
    }
  }
}
