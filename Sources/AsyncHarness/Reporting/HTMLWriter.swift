/// HTML written a piece at a time, in which text can only ever be text: tags, attribute names
/// and the style sheet are static strings of the harness, and every other string (a test's
/// name, a message, output, a number) goes through ``escaped(_:)``. So whatever a test's
/// name or output holds, `<script>` or a NUL, it shows as those characters and the page
/// stays valid HTML, and well-formed XML too (void elements are closed with `/>`).
struct HTMLWriter {
  /// The page so far, in UTF-8: appending bytes costs a copy, where appending interpolated
  /// strings cost a 2,000-bar timeline more than the rest of the page.
  private var bytes: [UInt8] = []

  /// The page so far.
  var html: String { String(decoding: bytes, as: UTF8.self) }

  /// Writes markup of the harness's own as it is: the doctype, the style sheet.
  mutating func markup(_ markup: StaticString) {
    markup.withUTF8Buffer { bytes.append(contentsOf: $0) }
  }

  /// Writes `text`, escaped.
  mutating func text(_ text: String) {
    bytes.append(contentsOf: Self.escaped(text).utf8)
  }

  /// Writes an element holding `text`.
  mutating func element(_ tag: StaticString, _ attributes: KeyValuePairs<StaticString, String> = [:], text: String) {
    element(tag, attributes) { $0.text(text) }
  }

  /// Writes an element whose content `body` writes.
  mutating func element(_ tag: StaticString, _ attributes: KeyValuePairs<StaticString, String> = [:],
                        _ body: (inout HTMLWriter) -> Void) {
    start(tag, attributes)
    markup(">")
    body(&self)
    markup("</")
    markup(tag)
    markup(">")
    if !Self.isSpan(tag) { markup("\n") }  // a line a block, so the source reads too
  }

  /// Writes a void element (`<meta … />`).
  mutating func void(_ tag: StaticString, _ attributes: KeyValuePairs<StaticString, String>) {
    start(tag, attributes)
    markup("/>")
  }

  private mutating func start(_ tag: StaticString, _ attributes: KeyValuePairs<StaticString, String>) {
    markup("<")
    markup(tag)
    for (name, value) in attributes {
      markup(" ")
      markup(name)
      markup("=\"")
      text(value)
      markup("\"")
    }
  }

  /// `text` as HTML text or a quoted attribute value: `&`, `<`, `>`, `"` and `'` as character
  /// references; a C0 control other than tab, line feed and carriage return as its Unicode
  /// control picture (U+2400 to U+241F: `␀`, `␇`, `␛`), DEL as `␡`; a C1 control or a
  /// noncharacter (which HTML calls parse errors and XML partly forbids) as U+FFFD.
  static func escaped(_ text: String) -> String {
    guard mayNeedEscaping(text), text.unicodeScalars.contains(where: needsEscaping) else { return text }
    var result = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
      switch scalar.value {
      case 0x26: result.append(contentsOf: "&amp;".unicodeScalars)
      case 0x3C: result.append(contentsOf: "&lt;".unicodeScalars)
      case 0x3E: result.append(contentsOf: "&gt;".unicodeScalars)
      case 0x22: result.append(contentsOf: "&quot;".unicodeScalars)
      case 0x27: result.append(contentsOf: "&#39;".unicodeScalars)
      case 0x09, 0x0A, 0x0D: result.append(scalar)
      case 0x00..<0x20: result.append(Unicode.Scalar(0x2400 + scalar.value)!)
      case 0x7F: result.append("\u{2421}")
      case _ where needsEscaping(scalar): result.append("\u{FFFD}")
      default: result.append(scalar)
      }
    }
    return String(result)
  }

  /// Whether `tag` is `span`, the one element the page writes inline.
  private static func isSpan(_ tag: StaticString) -> Bool {
    tag.withUTF8Buffer { $0.elementsEqual("span".utf8) }
  }

  /// Whether `text` holds a byte ``needsEscaping(_:)`` may change: a control, a markup
  /// character, or any byte of a scalar past ASCII. Most texts hold none, and a byte is
  /// quicker to test than a scalar.
  private static func mayNeedEscaping(_ text: String) -> Bool {
    text.utf8.contains { byte in
      switch byte {
      case 0x22, 0x26, 0x27, 0x3C, 0x3E, 0x00..<0x20, 0x7F...: true
      default: false
      }
    }
  }

  /// Whether ``escaped(_:)`` changes `scalar`.
  private static func needsEscaping(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x09, 0x0A, 0x0D: false
    case 0x00..<0x20, 0x22, 0x26, 0x27, 0x3C, 0x3E, 0x7F...0x9F, 0xFDD0...0xFDEF: true
    case let value: value & 0xFFFE == 0xFFFE
    }
  }
}
