import Synchronization

/// Text written by a reporter or a command, from whichever thread writes it.
package final class WrittenText: Sendable {
  private let pieces = Mutex<[String]>([])

  package init() {}

  /// Appends a piece: pass it where a `@Sendable (String) -> Void` writer is wanted.
  package var write: @Sendable (String) -> Void { { [self] piece in pieces.withLock { $0.append(piece) } } }
  /// Every piece, in order.
  package var lines: [String] { pieces.withLock { $0 } }
  /// Everything written.
  package var text: String { lines.joined() }
}
