/// An XML element read back by ``XMLReader``: plain Swift values, no libxml2 types.
struct ParsedElement: Hashable {
  /// The element's name.
  var name: String
  /// Its attributes, in document order.
  var attributes: [ParsedAttribute]
  /// Its element and text children, in document order (comments and the like are dropped).
  var children: [ParsedNode]

  /// The value of the attribute `name`, if present.
  func attribute(_ name: String) -> String? {
    attributes.first { $0.name == name }?.value
  }

  /// The child elements.
  var elements: [ParsedElement] {
    children.compactMap { if case .element(let element) = $0 { element } else { nil } }
  }

  /// The child elements named `name`.
  func elements(named name: String) -> [ParsedElement] {
    elements.filter { $0.name == name }
  }

  /// The text of the element's direct text children, concatenated.
  var text: String {
    children.map { if case .text(let text) = $0 { text } else { "" } }.joined()
  }
}

/// One attribute of a ``ParsedElement``.
struct ParsedAttribute: Hashable {
  var name: String
  var value: String
}

/// A child of a ``ParsedElement``.
enum ParsedNode: Hashable {
  case element(ParsedElement)
  case text(String)
}
