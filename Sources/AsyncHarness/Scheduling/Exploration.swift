extension Configuration {
  /// The schedules each test runs under with `host`: the operation on the plan behind
  /// `--explore N` and `--schedule TOKEN`.
  ///
  /// - A waiter that does not order work itself: `nil` (each test runs once, unscheduled).
  /// - A ``ScheduledWaiter`` replaying a token (``replay``): the token's schedule.
  /// - A ``ScheduledWaiter`` exploring (``explorations`` = N): seeds 1 through N with
  ///   ``explorationPolicy``, or the waiter's default policy.
  /// - Otherwise: the waiter's ``ScheduledWaiter/defaultSchedule``.
  /// - A testing library (another package's tests, `harness test`): the token's schedule, or
  ///   seeds 1 through N with ``explorationPolicy`` or a random walk, each run in its own
  ///   bundle with the bundle's Swift concurrency in the schedule's order; `nil` otherwise.
  ///
  /// A test's step under each schedule is identified by ``id(_:under:)``.
  func schedules(under host: Catalog.Host) -> [Schedule]? {
    let defaultSchedule: Schedule?
    switch host {
    case .library: defaultSchedule = nil
    case .waiter(let waiter):
      guard let scheduled = waiter as? ScheduledWaiter else { return nil }
      defaultSchedule = scheduled.defaultSchedule
    }
    if let replay { return [replay.schedule] }
    if let explorations {
      let policy = explorationPolicy ?? defaultSchedule?.policy ?? .randomWalk
      return (1...max(1, explorations)).map { Schedule(seed: UInt64($0), policy: policy) }
    }
    return defaultSchedule.map { [$0] }
  }

  /// `step` under `schedule`: its identity carries the schedule's replay token.
  static func id(_ step: TestID, under schedule: Schedule) -> TestID {
    var id = step
    id.schedule = schedule.token(forTestAt: step.path).description
    return id
  }
}
