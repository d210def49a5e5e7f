// The order in which a schedule's queues became ready, compiled into the core (module
// AsyncHarnessShared) and, as text, into the library `harness test --explore` preloads
// (ExistingTests/BundleChannel/AsyncHarnessBundleScheduleState.swift), which is compiled
// unoptimized: so every operation here costs O(log n) however many queues are ready. A task
// group of 100,000 child tasks has that many queues ready at once, and removing each from an
// array as it ran made its exploration quadratic (40,000 tasks took 33 s, 100,000 passed the
// time limit, where `swift test` takes under a second).

/// Queues (their indices) in the order they became ready, each at most once: the `k`th is
/// found, a queue appended or removed in O(log n), through a Fenwick tree that counts the
/// slots still held. Slots of removed queues are dropped once they outnumber the queues held.
package struct ReadyOrder: RandomAccessCollection, Sendable {
  /// The queue at each slot, in the order appended; -1 once removed.
  private var slots: [Int] = []
  /// Fenwick tree over the slots (1-based): `tree[i]` counts the queues held in the slots
  /// `i - lowestBit(i) ..< i` (0-based).
  private var tree: [Int] = [0]
  /// The slot of each queue held.
  private var slotOf: [Int: Int] = [:]

  /// No queue.
  package init() {}

  /// `queues`, in their order.
  package init(_ queues: some Sequence<Int>) {
    for queue in queues { append(queue) }
  }

  package var startIndex: Int { 0 }
  package var endIndex: Int { slotOf.count }

  /// Whether `queue` is held.
  package func contains(_ queue: Int) -> Bool { slotOf[queue] != nil }

  /// The `position`th queue held, from 0.
  package subscript(position: Int) -> Int {
    precondition(position >= 0 && position < count, "no queue at \(position)")
    // The highest slot whose prefix holds `position` queues or fewer, by binary lifting.
    var slot = 0
    var left = position
    var step = 1
    while step * 2 < tree.count { step *= 2 }
    while step > 0 {
      if slot + step < tree.count && tree[slot + step] <= left {
        slot += step
        left -= tree[slot]
      }
      step /= 2
    }
    return slots[slot]
  }

  /// Appends `queue`, which is not held, as the last.
  package mutating func append(_ queue: Int) {
    precondition(slotOf[queue] == nil, "queue \(queue) is ready already")
    let index = slots.count + 1
    slots.append(queue)
    slotOf[queue] = index - 1
    // The new node counts its own slot and the ones below it that it covers.
    let lowest = index & -index
    tree.append(1 + prefix(index - 1) - prefix(index - lowest))
  }

  /// Removes `queue`, which is held.
  package mutating func remove(_ queue: Int) {
    guard let slot = slotOf.removeValue(forKey: queue) else { preconditionFailure("queue \(queue) is not ready") }
    slots[slot] = -1
    var index = slot + 1
    while index < tree.count {
      tree[index] -= 1
      index += index & -index
    }
    if slots.count > 64 && slots.count > 2 * slotOf.count { compact() }
  }

  /// Every queue held, removed, in order.
  package mutating func removeAll() -> [Int] {
    defer { self = ReadyOrder() }
    return Array(self)
  }

  /// The queues held in the first `count` slots.
  private func prefix(_ count: Int) -> Int {
    var sum = 0
    var index = count
    while index > 0 {
      sum += tree[index]
      index -= index & -index
    }
    return sum
  }

  /// Drops the slots of removed queues.
  private mutating func compact() {
    self = ReadyOrder(slots.filter { $0 >= 0 })
  }
}
