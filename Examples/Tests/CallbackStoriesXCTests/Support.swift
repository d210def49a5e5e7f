/// What the callback-story tests share: a box for what a callback delivered, real serial
/// queues that can tell whether a callback runs on them, and the fixture image.
///
/// The tests in this target are plain XCTest, written as an app team would write them for
/// its callback code: expectations awaited with `fulfillment(of:timeout:)` in `async` test
/// methods, real `DispatchQueue`s (wrapped in `AsyncQueue` where the code takes
/// `any Dispatching`), `DispatchQueue.main` deliveries and real notification centers. CI runs
/// them under `harness test --explore 20` (issue 50), where the blocks they send to Dispatch
/// are ordered by each seed's schedule.
import AsyncHarness
import Dispatch
import Foundation
import PinacotecaCore
import Synchronization

/// A value a callback delivers and the test reads once it has waited, behind a `Mutex`.
final class Box<Value: Sendable>: Sendable {
  private let mutex: Mutex<Value>

  init(_ value: Value) { mutex = Mutex(value) }

  var value: Value { mutex.withLock { $0 } }

  func set(_ value: Value) { mutex.withLock { $0 = value } }

  func update(_ body: (inout Value) -> Void) { mutex.withLock { body(&$0) } }
}

/// A real serial `DispatchQueue`, handed to code that takes `any Dispatching` as an
/// `AsyncQueue`, and marked with a queue-specific value so a callback can check with
/// Dispatch itself that it runs there.
struct SerialQueue: Sendable {
  let label: String
  let dispatchQueue: DispatchQueue
  /// What the code under test gets.
  let queue: AsyncQueue

  init(_ label: String) {
    self.label = label
    dispatchQueue = DispatchQueue(label: label)
    dispatchQueue.setSpecific(key: queueLabelKey, value: label)
    queue = AsyncQueue(dispatchQueue, label: label)
  }

  /// Whether the caller runs on this queue, as Dispatch says.
  var isCurrent: Bool { DispatchQueue.getSpecific(key: queueLabelKey) == label }
}

/// The key of the label each ``SerialQueue`` carries as its queue-specific value.
private let queueLabelKey = DispatchSpecificKey<String>()

extension Image {
  /// The image the fixture `images/1.json` describes.
  static let monaLisa = Image(
    id: 1, title: "Mona Lisa", artist: "Leonardo da Vinci", year: 1503,
    imageURL: URL(string: "https://images.example.org/mona-lisa.jpg"), width: 77, height: 53,
    lastUpdated: Date(timeIntervalSince1970: 1_714_557_600))  // 2024-05-01T10:00:00Z
}

/// How long a test waits for a callback: far longer than any of them takes.
let callbackTimeout: TimeInterval = 10
