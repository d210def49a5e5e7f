import Dispatch
import Synchronization

/// A scoreboard whose scores live behind a concurrent queue of its own: reads run side by
/// side, and a read sent after a write must see it. The bug records a score as an ordinary
/// block, which a later read may overtake; the fix records it as a barrier, which runs alone,
/// after the blocks sent before it and before those sent after it.
public final class Scoreboard: Sendable {
  private let scores = Mutex<[Int]>([])
  private let queue = DispatchQueue(label: "scoreboard", attributes: .concurrent)
  private let recordsAsBarriers: Bool

  /// A scoreboard that records scores as ordinary blocks (the bug), or as barriers.
  public init(recordsAsBarriers: Bool = false) {
    self.recordsAsBarriers = recordsAsBarriers
  }

  /// Records a score, in the background.
  public func record(_ score: Int) {
    queue.async(flags: recordsAsBarriers ? .barrier : []) { self.scores.withLock { $0.append(score) } }
  }

  /// Calls `completion`, on the scoreboard's queue, with the total of the scores recorded so far.
  public func total(_ completion: @escaping @Sendable (Int) -> Void) {
    queue.async { completion(self.scores.withLock { $0.reduce(0, +) }) }
  }
}

/// A report made of two parts, each loaded on a queue of its own and then filed on the
/// report's queue, with `notify` saying when both are in. The bug leaves the group as a part
/// is loaded, before it is filed, so the report may be called complete with a part missing;
/// the fix leaves once the part is filed.
public final class Report: Sendable {
  private let parts = Mutex<[String]>([])
  private let filing = DispatchQueue(label: "report.filing")
  private let leavesOnceFiled: Bool

  /// A report that leaves its group before a part is filed (the bug), or once it is.
  public init(leavesOnceFiled: Bool = false) {
    self.leavesOnceFiled = leavesOnceFiled
  }

  /// Loads the summary and the figures, and calls `completion` on the main queue with the
  /// parts filed by then.
  public func load(_ completion: @escaping @Sendable ([String]) -> Void) {
    let loaded = DispatchGroup()
    for part in ["summary", "figures"] {
      loaded.enter()
      DispatchQueue(label: "report.\(part)").async { [self] in
        if !leavesOnceFiled { loaded.leave() }
        filing.async { [self] in
          parts.withLock { $0.append(part) }
          if leavesOnceFiled { loaded.leave() }
        }
      }
    }
    loaded.notify(queue: .main) { [self] in completion(parts.withLock { $0.sorted() }) }
  }
}
