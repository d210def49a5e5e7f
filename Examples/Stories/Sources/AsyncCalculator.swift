import AsyncHarness

/// The calculator of the first story: it answers through a completion on a main queue,
/// and its `add` is wrong.
///
/// A naive test calls `add` and asserts inside the completion without waiting: the test
/// ends before the completion runs, so the assertion never fails. With a wait, it must
/// fail under every strategy.
public final class AsyncCalculator: Sendable {
  private let delivery: any Dispatching

  /// Creates a calculator that answers on `delivery`.
  public init(delivery: any Dispatching) {
    self.delivery = delivery
  }

  /// Should deliver `a + b`; delivers `a - b` (the story's bug).
  public func add(_ a: Int, _ b: Int, completion: @escaping @Sendable (Int) -> Void) {
    delivery.async { completion(a - b) }
  }

  /// Delivers `a * b`.
  public func multiply(_ a: Int, _ b: Int, completion: @escaping @Sendable (Int) -> Void) {
    delivery.async { completion(a * b) }
  }
}
