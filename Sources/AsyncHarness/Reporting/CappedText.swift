/// Defaults shared by the reporters that write files.
public enum ReportDefaults {
  /// The most UTF-8 bytes the JUnit and JSON Lines reporters keep of each test's output (and
  /// of each text): 1 MiB, well under the 10 MB text nodes that libxml2-based readers accept.
  public static let outputLimit = 1_048_576
}

/// Text collected in pieces and bounded: at most ``limit`` UTF-8 bytes are kept, cut at a
/// character boundary; whatever follows is dropped and counted, and ``text`` ends with a note
/// saying how much. The JUnit and JSON Lines reporters bound each test's output with it.
///
/// The count is of the bytes the user gave: a `prepare` function (the JUnit reporter's
/// sanitizer) may change the text it keeps, but reports how many of the given bytes it used.
package struct CappedText: Sendable {
  /// Turns a piece into the text kept of it, at most `maxBytes` UTF-8 bytes, and says how many
  /// bytes of the piece that used.
  package typealias Prepare = @Sendable (_ piece: String, _ maxBytes: Int) -> (text: String, usedBytes: Int)

  /// The most bytes kept.
  package let limit: Int
  /// The text kept so far, without the note.
  package private(set) var kept = ""
  /// The bytes given but not kept.
  package private(set) var cutBytes = 0
  private let prepare: Prepare

  /// Creates empty text that keeps at most `limit` bytes, prepared by `prepare` (by default
  /// kept as given).
  package init(limit: Int, prepare: @escaping Prepare = { piece, maxBytes in
    let text = CappedText.prefix(of: piece, maxBytes: maxBytes)
    return (text, text.utf8.count)
  }) {
    self.limit = max(0, limit)
    self.prepare = prepare
  }

  /// Appends `piece` and returns the part of it that was kept.
  @discardableResult
  package mutating func append(_ piece: String) -> String {
    guard cutBytes == 0 else {
      cutBytes += piece.utf8.count
      return ""
    }
    let (text, used) = prepare(piece, limit - kept.utf8.count)
    kept += text
    cutBytes = piece.utf8.count - used
    return text
  }

  /// Whether nothing was appended but empty strings.
  package var isEmpty: Bool { kept.isEmpty && cutBytes == 0 }

  /// The kept text, followed by ``cutNote(bytes:limit:)`` when something was cut.
  package var text: String {
    cutBytes == 0 ? kept : kept + Self.cutNote(bytes: cutBytes, limit: limit)
  }

  /// The note that ends text that was cut to `limit` bytes.
  package static func cutNote(bytes: Int, limit: Int) -> String {
    "\n[AsyncHarness: \(bytes) more bytes cut here; the report keeps at most \(limit) bytes per text]"
  }

  /// `text` whole when it fits in `limit` UTF-8 bytes; else its longest prefix that does,
  /// followed by ``cutNote(bytes:limit:)``.
  package static func capped(_ text: String, limit: Int) -> String {
    guard text.utf8.count > limit else { return text }
    var capped = CappedText(limit: limit)
    capped.append(text)
    return capped.text
  }

  /// The longest prefix of `text` that fits in `maxBytes` UTF-8 bytes without splitting a
  /// character's encoding.
  package static func prefix(of text: String, maxBytes: Int) -> String {
    let utf8 = text.utf8
    guard utf8.count > maxBytes else { return text }
    var end = utf8.index(utf8.startIndex, offsetBy: max(0, maxBytes))
    while end > utf8.startIndex, UTF8.isContinuation(utf8[end]) {
      utf8.formIndex(before: &end)
    }
    return String(decoding: utf8[..<end], as: UTF8.self)
  }
}
