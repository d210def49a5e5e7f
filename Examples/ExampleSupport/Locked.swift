import Synchronization

/// A value shared between a test and the callbacks it waits for, behind a `Mutex`.
///
/// `Mutex` is `~Copyable`, so a closure cannot capture one directly: this class holds it.
public final class Locked<Value: Sendable>: Sendable {
  private let mutex: Mutex<Value>

  /// Creates the box with a first value.
  public init(_ value: Value) { mutex = Mutex(value) }

  /// The current value.
  public var value: Value { mutex.withLock { $0 } }

  /// Replaces the value.
  public func set(_ value: Value) { mutex.withLock { $0 = value } }

  /// Changes the value in place and returns what `body` returns.
  @discardableResult
  public func update<Result: Sendable>(_ body: (inout Value) -> Result) -> Result {
    mutex.withLock { body(&$0) }
  }
}
