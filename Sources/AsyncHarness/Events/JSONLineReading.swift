/// The harness's readers of the JSON lines a run reads by the thousand, one line each, for a
/// tool that measures them (the benchmark's part 12, reading JSON). Each reads a line as the
/// harness does and keeps nothing of it; an event line is read by the public
/// ``Event/init(jsonLine:)``.
@_spi(ForToolsIntegrationOnly) public enum JSONLineReading {
  /// Reads a worker's timeline mark (a `{"mark":…}` line) as its parent does.
  /// - Returns: whether the line is a mark (its first member is `mark`).
  /// - Throws: ``EventDecodingError`` for a mark that is not whole.
  @_spi(ForToolsIntegrationOnly) public static func mark(_ line: [UInt8]) throws -> Bool {
    try TimelineMark(line: line) != nil
  }

  /// Reads a record of a Swift Testing event stream (version 0) as `harness test` does.
  /// - Returns: the record's `kind`, `test` or `event`.
  /// - Throws: ``EventDecodingError`` when the line is not such a record.
  @_spi(ForToolsIntegrationOnly) public static func swiftTestingRecord(_ line: [UInt8]) throws -> String {
    try SwiftTestingRecord(line: line).kind
  }

  /// Reads the line's JSON value whole, as a tree, reading none of its fields: what reading
  /// a line costs before its fields are looked up.
  /// - Returns: whether the line is one JSON text.
  @_spi(ForToolsIntegrationOnly) public static func tree(_ line: [UInt8]) -> Bool {
    JSONValue.parse(line) != nil
  }
}
