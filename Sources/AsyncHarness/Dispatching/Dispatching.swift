import Foundation

/// The queue abstraction code under test takes instead of a `DispatchQueue`, so tests can
/// choose real queues (``AsyncQueue``), inline execution (``SyncQueue``), or queues whose
/// work a waiter strategy runs itself (`ScheduledQueue`).
///
/// Both detect the classic deadlock, a synchronous dispatch onto a queue that is already
/// waiting for the caller (main → background → main, or a queue onto itself), and record
/// an issue naming the queues instead of hanging; the work then runs inline so the test
/// can go on to report it.
public protocol Dispatching: Sendable {
  /// The queue's identity, which names it in messages and detects dispatch cycles.
  var identity: QueueIdentity { get }
  /// Runs `work` later (``AsyncQueue``) or now (``SyncQueue``).
  func async(_ work: @escaping @Sendable () -> Void)
  /// Runs `work` on the queue once `delay` has passed: on the real clock for real and
  /// inline queues, on the test's virtual clock for scheduled ones.
  ///
  /// Queues from outside the harness get a default: a dispatch timer that hands `work` to
  /// ``async(_:)`` when the delay is over.
  func asyncAfter(_ delay: Duration, _ work: @escaping @Sendable () -> Void)
  /// Runs `work` on the queue and waits for it.
  func sync<T>(_ work: () throws -> T) rethrows -> T
}

/// A queue's identity for cycle detection: two queue values with the same identity are the
/// same serial queue (e.g. ``QueueIdentity/main``).
public final class QueueIdentity: Sendable, CustomStringConvertible {
  /// The queue's label, as messages show it.
  public let label: String

  /// Creates an identity; each call makes a distinct queue.
  public init(label: String) { self.label = label }

  /// The main queue's identity, shared by every queue value standing for it.
  public static let main = QueueIdentity(label: "main")

  /// The queue's label.
  public var description: String { label }

  /// The queue whose work is running on the caller: the innermost queue the harness's
  /// queues entered, or the main queue on the main thread; `nil` elsewhere.
  public static var current: QueueIdentity? { DispatchChain.current.last }
}

extension Dispatching {
  /// Runs `work` on this queue once `delay` has passed.
  public func asyncAfter(_ delay: Duration, _ work: @escaping @Sendable () -> Void) {
    sendAfter(delay, work)
  }

  /// Hands `work` to ``async(_:)`` once `delay` has passed, from a dispatch timer.
  func sendAfter(_ delay: Duration, _ work: @escaping @Sendable () -> Void) {
    DispatchQueue.global().asyncAfter(deadline: .now() + delay.dispatchInterval) { self.async(work) }
  }

  /// Whether the caller runs inside work sent to this queue (or, for the main queue, on
  /// the main thread): lets a test check that a completion arrived on the queue it asked
  /// for, whether the queue is real or inline.
  public var isCurrent: Bool { QueueIdentity.current === identity }
}

extension Duration {
  /// The duration as a dispatch interval, in whole nanoseconds (none below zero).
  var dispatchInterval: DispatchTimeInterval { .nanoseconds(max(0, nanoseconds)) }
}

/// The queues a thread is running work for: the last is the one it runs on; the ones
/// before it are blocked in a `sync` call, waiting for the next.
enum DispatchChain {
  @TaskLocal static var frames: [QueueIdentity] = []

  /// The chain in effect on this thread; on the main thread, with nothing recorded, the
  /// main queue.
  static var current: [QueueIdentity] {
    let frames = frames
    if frames.isEmpty && Thread.isMainThread { return [.main] }
    return frames
  }

  /// Prepares a synchronous dispatch onto `target`: returns the chain the work runs with,
  /// and whether the dispatch closes a cycle. A cycle is recorded as a deadlock issue; the
  /// caller then runs the work inline instead of hanging.
  static func enter(_ target: QueueIdentity, issues: IssueSink) -> (chain: [QueueIdentity], isCycle: Bool) {
    let chain = current
    let newChain = chain + [target]
    guard chain.contains(where: { $0 === target }) else { return (newChain, false) }
    let path = newChain.map(\.label).joined(separator: " → ")
    let from = chain.last.map(\.label) ?? "?"
    issues.record(Issue(
      kind: .deadlock,
      message: "Deadlock: synchronous dispatch onto \"\(target.label)\" from \"\(from)\" while \"\(target.label)\" is waiting for it (\(path))"))
    return (newChain, true)
  }
}

/// Where a queue records the issues it detects: the test that created it, else the test
/// running on the current task, else the test running now (a queue the user made with
/// ``AsyncQueue/init(_:label:)`` has no owner, and its work runs off the test's task);
/// standard error only when no test is running at all.
struct IssueSink: Sendable {
  let record: TestRecord?

  func record(_ issue: Issue) {
    let owners = record.map { [$0] } ?? TestRecord.owners
    guard !owners.isEmpty else {
      FileHandleOutput.standardError.write("AsyncHarness: \(issue.message)\n")
      return
    }
    for owner in owners { owner.record(issue) }
  }
}
