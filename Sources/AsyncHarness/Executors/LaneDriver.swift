/// What an executor's lane decides, as a plain value with no process, descriptor, clock or
/// thread: told what happened, it answers with what to do. A harness workers' lane
/// (``WorkerLaneMachine``) and a test bundle's (``BundleLaneMachine``) are machines.
protocol LaneMachine {
  /// What happened in the lane: the runner's requests, the answers to commands, what a wait
  /// for a worker found.
  associatedtype Event
  /// What the lane's driver does.
  associatedtype Command
  /// What to do now that `event` happened. A command that can fail (start a worker, send a
  /// request it may refuse, wait for a worker) is the last of its list, and its driver answers
  /// it with the next event.
  mutating func handle(_ event: Event) -> [Command]
}

/// The lane that holds the processes its machine decides for and carries out its commands:
/// ``WorkerLane`` and ``BundleLane``. The loop that feeds the machine is written once, here.
protocol LaneDriver {
  associatedtype Machine: LaneMachine
  /// What the lane decides.
  var machine: Machine { get set }
  /// Carries out one of the machine's commands; returns its answer when it has one.
  mutating func carryOut(_ command: Machine.Command) -> Machine.Event?
}

extension LaneDriver {
  /// Tells the machine `event` and carries out what it asks, answering each command that can
  /// fail with the next event, until a list of commands ends with none awaiting an answer.
  /// Returns whether the machine asked for anything.
  @discardableResult
  mutating func drive(_ event: Machine.Event) -> Bool {
    var commands = machine.handle(event)
    let asked = !commands.isEmpty
    while !commands.isEmpty {
      var answer: Machine.Event?
      for command in commands { answer = carryOut(command) }
      guard let answer else { break }
      commands = machine.handle(answer)
    }
    return asked
  }
}
