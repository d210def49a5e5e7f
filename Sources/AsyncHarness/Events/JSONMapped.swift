/// The event schema's one mapping. An event and its payloads are read from JSON by their
/// `init(json:)` and written by ``JSONText``; `Codable` goes through the same two, so
/// `JSONEncoder` writes the fields and values of ``Event/jsonLine`` (no absent optional) and `JSONDecoder` reads what ``Event/init(jsonLine:)`` reads, with
/// the same errors. `docs/EVENTS.md` documents the result, checked by a test.
protocol JSONMapped {
  /// Reads the value from its JSON object.
  init(json: JSONFields) throws
  /// Writes the value as its JSON object.
  func write(to json: inout JSONText)
}

extension JSONMapped {
  /// Reads the value from any decoder, as the event stream's reader reads it.
  init(mappedFrom decoder: any Decoder) throws {
    try self.init(json: JSONFields(JSONValue(from: decoder)))
  }

  /// Writes the value to any encoder, as the event stream's writer writes it.
  func encodeMapped(to encoder: any Encoder) throws {
    var json = JSONText()
    write(to: &json)
    // The writer's own output: always one JSON text.
    try JSONValue.parse(json.array)!.encode(to: encoder)
  }
}

extension Event: JSONMapped {
  init(json: JSONFields) throws { try self.init(json: JSONValue.object(json.fields)) }
  func write(to json: inout JSONText) { json.line(self) }
}

extension JSONValue: Encodable {
  /// Writes the value; a number is written as the integer or double its text is.
  func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    switch self {
    case .null: try container.encodeNil()
    case .bool(let value): try container.encode(value)
    case .number(let text):
      if let value = Int64(text) {
        try container.encode(value)
      } else if let value = UInt64(text) {
        try container.encode(value)
      } else {
        try container.encode(Double(text) ?? .nan)
      }
    case .string(let value): try container.encode(value)
    case .array(let values): try container.encode(values)
    case .object(let fields): try container.encode(fields.dictionary)
    }
  }
}
