import Foundation
import Synchronization

/// What a lane of the runner runs next.
enum Work: Sendable {
  /// An entry (a suite under one waiter), already announced: the lane runs it whole, in order.
  case entry(Runner.Plan.Entry)
  /// One test of an entry whose tests run in parallel, already started in plan order, with
  /// the steps to prepare the executor for: that one.
  case step(Runner.Step, Runner.StartedStep, prepare: Runner.Plan.Steps)
}

/// Hands a plan's work to the runner's lanes, in plan order: each entry whole, or, for an
/// entry whose tests run in parallel (``Suite/runsTestsInParallel(byDefault:)``) when the run
/// has several lanes, test by test to whichever lane is free.
///
/// Suites are announced (`suiteStarted`) as their first work is taken and the tests of a
/// parallel entry are started as they are taken, both under the queue's lock, so that every
/// report sees them in plan order whichever lane takes them. A parallel entry ends
/// (`suiteEnded`) when its last test does. With `--until-failure`, a parallel entry's next
/// repetition starts only once every test of the last one has ended, none failing: a lane
/// with nothing else to take waits for it.
final class WorkQueue: Sendable {
  /// An entry whose tests are being handed out one by one.
  private struct ParallelEntry {
    let entry: Runner.Plan.Entry
    var repetition = 1
    var steps: Runner.Plan.Steps
    var next = 0
    var running = 0
    var failed = false

    var hasStepsLeft: Bool { next < steps.endIndex }
  }

  private struct State {
    /// The next entry of the plan no lane has taken.
    var nextEntry = 0
    /// The parallel entries started and not ended, in plan order.
    var parallel: [ParallelEntry] = []
  }

  private let plan: Runner.Plan
  private let splitsParallelEntries: Bool
  private let progress: RunProgress
  private let events: EventSink
  private let stop: StopRequest?
  private let state = Mutex(State())
  /// Held while the state changes in a way that can give a waiting lane work; a lane waits
  /// on it for such a change.
  private let changed = NSCondition()

  /// - Parameter splitsParallelEntries: whether the tests of a parallel entry are handed out
  ///   one by one (several lanes); with one lane every entry runs whole.
  init(plan: Runner.Plan, splitsParallelEntries: Bool, progress: RunProgress, events: EventSink, stop: StopRequest?) {
    self.plan = plan
    self.splitsParallelEntries = splitsParallelEntries
    self.progress = progress
    self.events = events
    self.stop = stop
  }

  /// The most pieces of work that can run at once: lanes beyond it would have nothing to do.
  var mostAtOnce: Int {
    plan.entries.contains(where: splits) ? Int.max : plan.entries.count
  }

  private func splits(_ entry: Runner.Plan.Entry) -> Bool {
    splitsParallelEntries && entry.suite.runsTestsInParallel(byDefault: plan.configuration.parallelTests)
  }

  /// The next work, or `nil` when none is left or the run stops. A parallel entry's test is
  /// started with `start` before it is handed out; when every entry is taken but a parallel
  /// entry waits for its repetition to end, this waits for it.
  func next(starting start: (Runner.Step) -> Runner.StartedStep) -> Work? {
    changed.lock()
    defer { changed.unlock() }
    while true {
      guard stop?.signal == nil else { return nil }
      let (work, wait) = state.withLock { state -> (Work?, Bool) in
        if let work = nextStep(&state, starting: start) { return (work, false) }
        while state.nextEntry < plan.entries.count {
          let entry = plan.entries[state.nextEntry]
          state.nextEntry += 1
          events(.suiteStarted(entry.suiteRun))
          progress.start(entry.suiteRun)
          guard splits(entry) else { return (.entry(entry), false) }
          state.parallel.append(ParallelEntry(entry: entry, steps: plan.steps(of: entry, repetition: 1)))
          if let work = nextStep(&state, starting: start) { return (work, false) }
        }
        return (nil, !state.parallel.isEmpty)
      }
      guard work == nil && wait else { return work }
      changed.wait()
    }
  }

  /// The next test of the first parallel entry that has one to hand out now.
  private func nextStep(_ state: inout State, starting start: (Runner.Step) -> Runner.StartedStep) -> Work? {
    for index in state.parallel.indices {
      advance(&state.parallel[index])
      guard state.parallel[index].hasStepsLeft else { continue }
      let next = state.parallel[index].next
      let step = state.parallel[index].steps[next]
      state.parallel[index].next += 1
      state.parallel[index].running += 1
      return .step(step, start(step), prepare: state.parallel[index].steps[next..<(next + 1)])
    }
    return nil
  }

  /// Moves a parallel entry whose repetition is handed out to its next repetition, when
  /// there is one and it may start.
  private func advance(_ entry: inout ParallelEntry) {
    guard !entry.hasStepsLeft, entry.repetition < plan.repetitions else { return }
    if plan.configuration.untilFailure && (entry.running > 0 || entry.failed) { return }
    entry.repetition += 1
    entry.steps = plan.steps(of: entry.entry, repetition: entry.repetition)
    entry.next = 0
  }

  /// Counts a parallel entry's test that ended, and ends the entry when it was its last.
  func finished(_ step: Runner.Step, with result: TestResult) {
    changed.lock()
    defer { changed.unlock() }
    progress.count(result, in: step.id.suiteRun)
    state.withLock { state in
      guard let index = state.parallel.firstIndex(where: { $0.entry.suiteRun == step.id.suiteRun }) else { return }
      state.parallel[index].running -= 1
      state.parallel[index].failed = state.parallel[index].failed || result.verdict.isFailure
      advance(&state.parallel[index])
      let entry = state.parallel[index]
      guard entry.running == 0, !entry.hasStepsLeft || stop?.signal != nil else { return }
      state.parallel.remove(at: index)
      end(entry.entry)
    }
    changed.broadcast()
  }

  /// Ends the parallel entries a stopped run left open (none of their tests runs any more).
  func endStoppedEntries() {
    let open = state.withLock { state in
      defer { state.parallel = [] }
      return state.parallel
    }
    for entry in open { end(entry.entry) }
  }

  private func end(_ entry: Runner.Plan.Entry) {
    let (summary, duration) = progress.end(entry.suiteRun)
    events(.suiteEnded(entry.suiteRun, summary, duration: duration))
  }
}
