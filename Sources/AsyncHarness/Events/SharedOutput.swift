/// Output a test printed while it ran in a worker beside other tests, held as the pieces its
/// worker's output was stored in, once for every test that ran then: the text of
/// ``Event/Kind/outputCaptured(_:_:)``, without a copy for each test. A line printed while
/// several tests ran starts with `[shared] ` (it may be any of theirs).
///
/// The event stream writes it as an `outputCaptured` event whose `output` is ``text``.
public struct SharedOutput: Sendable, Hashable {
  /// The pieces, in order; the text is their concatenation.
  public let pieces: [String]

  /// Output made of `pieces`, in order.
  public init(pieces: [String]) {
    self.pieces = pieces
  }

  /// The whole text. A reporter that keeps a bounded part of each test's output reads
  /// ``pieces`` instead, and stops copying at its bound.
  public var text: String { pieces.joined() }
}

extension Event.Kind {
  /// The test and the pieces of output an `outputCaptured` or `outputShared` event carries,
  /// in order; `nil` for every other event.
  public var printedOutput: (test: TestID, pieces: [String])? {
    switch self {
    case .outputCaptured(let test, let text): (test, [text])
    case .outputShared(let test, let output): (test, output.pieces)
    default: nil
    }
  }
}
