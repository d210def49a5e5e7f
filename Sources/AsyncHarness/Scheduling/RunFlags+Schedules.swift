import ArgumentParser

extension RunFlags {
  /// Checks `--explore N`, `--explore-policy POLICY` and `--schedule TOKEN` on their own.
  func validateSchedules() throws {
    if let explore, explore < 1 { throw ValidationError("--explore must be at least 1, not \(explore)") }
    if let explorePolicy {
      guard explore != nil else { throw ValidationError("--explore-policy needs --explore N") }
      guard SchedulePolicy(explorePolicy) != nil else {
        throw ValidationError("--explore-policy \"\(explorePolicy)\" is not a policy: expected random or pctD with D from 1 to 9, e.g. pct3")
      }
    }
    if explore != nil, schedule != nil { throw ValidationError("--explore and --schedule cannot be combined") }
    if let schedule, ScheduleToken(schedule) == nil {
      throw ValidationError("--schedule \"\(schedule)\" is not a replay token: expected SEED:POLICY:TEST or SEED:POLICY:TEST:STEPS-FINGERPRINT, e.g. 7:pct3:9f2c1a:41-0be311")
    }
  }

  /// The flag that asks for schedules, `--explore` or `--schedule`, when one does.
  var scheduleFlag: String? {
    explore != nil ? "--explore" : schedule != nil ? "--schedule" : nil
  }

  /// For harness suites: `--explore N` and `--schedule TOKEN` run under the scheduled waiter
  /// (the one `--waiter` names, or every scheduling one of `--waiter all`; `scheduled`
  /// without `--waiter`).
  /// - Throws: ``UsageError`` when the selected strategies include no scheduling one.
  func selectScheduledWaiter(in configuration: inout Configuration, waiter: String?, registry: WaiterRegistry) throws {
    guard let flag = scheduleFlag else { return }
    let scheduling = registry.waiters.filter { $0 is ScheduledWaiter }.map(\.name)
    switch waiter {
    case nil:
      guard let name = scheduling.first else { throw UsageError("\(flag) needs the scheduled waiter, which is not registered") }
      configuration.waiters = .named(name)
    case "all":
      guard !scheduling.isEmpty else { throw UsageError("\(flag) needs the scheduled waiter, which is not registered") }
    case let name?:
      guard scheduling.contains(name) else {
        throw UsageError("\(flag) runs under the scheduled waiter, not \(name): use --waiter scheduled (or all)")
      }
    }
  }
}
