/// One shard of a run, as `--shard INDEX/COUNT` names it.
public struct Shard: Sendable, Hashable, Codable, CustomStringConvertible {
  /// The shard, counted from 1.
  public var index: Int
  /// How many shards there are.
  public var count: Int

  /// Creates shard `index` of `count`.
  /// - Parameters:
  ///   - index: the shard, from 1 to `count`.
  ///   - count: how many shards there are, at least 1.
  public init(index: Int, count: Int) {
    self.index = index
    self.count = count
  }

  /// `INDEX/COUNT`, e.g. `2/3`.
  public var description: String { "\(index)/\(count)" }
}
