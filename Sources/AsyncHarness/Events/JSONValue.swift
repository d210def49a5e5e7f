/// A JSON value read from UTF-8 bytes, whole, by ``JSONReader``: the reader behind
/// ``Event/init(jsonLine:)``, a worker's requests and replies, and Swift Testing's records.
/// Numbers keep their text, so a 64-bit seed reads back exactly.
enum JSONValue: Sendable, Equatable {
  case null
  case bool(Bool)
  case number(String)
  case string(String)
  case array([JSONValue])
  case object(JSONObject)

  /// Reads one JSON text (RFC 8259), surrounding whitespace allowed.
  /// - Returns: the value, or `nil` when `bytes` is not one JSON text.
  static func parse(_ bytes: some Collection<UInt8>) -> JSONValue? {
    try? JSONReader.read(bytes) { reader in
      let value = try reader.value()
      try reader.end()
      return value
    }
  }
}

extension EventDecodingError {
  /// `missing field NAME`: a field is absent (or null).
  static func missingField(_ name: String) -> EventDecodingError { EventDecodingError(reason: "missing field \(name)") }

  /// `field NAME has the wrong type`.
  static func wrongType(_ name: String) -> EventDecodingError { EventDecodingError(reason: "field \(name) has the wrong type") }
}

/// The fields of a JSON object being read into a value, with the path to it for errors:
/// `missing field test.name`, `field issue.kind has the wrong type`.
struct JSONFields {
  let fields: JSONObject
  let path: String

  /// The fields of `value`, which must be an object.
  /// - Throws: ``EventDecodingError`` when it is not one.
  init(_ value: JSONValue, path: String = "") throws {
    guard case .object(let fields) = value else {
      throw path.isEmpty ? JSONReader.malformed : .wrongType(path)
    }
    self.fields = fields
    self.path = path
  }

  private func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

  /// The value of `key`; `nil` when absent or `null`.
  func optional(_ key: String) -> JSONValue? {
    guard let value = fields[key], value != .null else { return nil }
    return value
  }

  /// - Throws: ``EventDecodingError`` naming the field when it is absent.
  func required(_ key: String) throws -> JSONValue {
    guard let value = optional(key) else { throw EventDecodingError.missingField(name(key)) }
    return value
  }

  /// The error of `key`'s value being of the wrong type.
  func wrongType(_ key: String) -> EventDecodingError { .wrongType(name(key)) }

  func string(_ key: String) throws -> String {
    guard case .string(let text) = try required(key) else { throw wrongType(key) }
    return text
  }

  func optionalString(_ key: String) throws -> String? {
    guard optional(key) != nil else { return nil }
    return try string(key)
  }

  /// A number read as `T` (`Int`, `UInt64`, `Double`).
  func number<T: LosslessStringConvertible>(_ key: String, as type: T.Type = T.self) throws -> T {
    guard case .number(let text) = try required(key), let number = T(text) else { throw wrongType(key) }
    return number
  }

  func optionalNumber<T: LosslessStringConvertible>(_ key: String, as type: T.Type = T.self) throws -> T? {
    guard optional(key) != nil else { return nil }
    return try number(key, as: type)
  }

  func bool(_ key: String) throws -> Bool {
    guard case .bool(let value) = try required(key) else { throw wrongType(key) }
    return value
  }

  func object(_ key: String) throws -> JSONFields { try JSONFields(required(key), path: name(key)) }

  /// An object that may be missing (or null).
  func optionalObject(_ key: String) throws -> JSONFields? {
    guard let value = optional(key), value != .null else { return nil }
    return try JSONFields(value, path: name(key))
  }

  /// The elements of an array, each read by `read` with its path.
  func array<Element>(_ key: String, _ read: (JSONValue, String) throws -> Element) throws -> [Element] {
    guard case .array(let elements) = try required(key) else { throw wrongType(key) }
    return try elements.enumerated().map { try read($1, "\(name(key)).\($0)") }
  }

  /// A string that must be one of `T`'s raw values.
  func raw<T: RawRepresentable>(_ key: String, as type: T.Type = T.self) throws -> T where T.RawValue == String {
    guard let value = T(rawValue: try string(key)) else {
      throw EventDecodingError(reason: "field \(name(key)) is invalid")
    }
    return value
  }
}
