/// Text collected in pieces (a test's captured output, its notes), sanitized as it comes and
/// bounded: at most `limit` UTF-8 bytes are kept, cut at a character boundary; whatever
/// follows is dropped and counted, and ``text`` ends with a note saying how much.
struct CapturedText {
  /// The most bytes kept.
  let limit: Int
  private var kept = ""
  private var cutBytes = 0

  /// Creates empty text that keeps at most `limit` bytes.
  init(limit: Int) {
    self.limit = max(0, limit)
  }

  /// Appends `raw`, sanitized.
  mutating func append(_ raw: String) {
    let clean = XMLText.sanitized(raw)
    guard cutBytes == 0 else {
      cutBytes += clean.utf8.count
      return
    }
    let piece = XMLText.prefix(of: clean, maxBytes: limit - kept.utf8.count)
    kept += piece
    cutBytes = clean.utf8.count - piece.utf8.count
  }

  /// Whether nothing was appended but empty strings.
  var isEmpty: Bool { kept.isEmpty && cutBytes == 0 }

  /// The kept text, followed by ``XMLText/cutNote(bytes:limit:)`` when something was cut.
  var text: String {
    cutBytes == 0 ? kept : kept + XMLText.cutNote(bytes: cutBytes, limit: limit)
  }
}
