/// A test's path: the test itself, the same across runs and machines, as its suite's name and
/// its own name, written as one line, `Suite/test`, by `--list` and read back by `--only`
/// and `--only-from` (the test's ID on the command line). A run of it, under one waiter,
/// repetition and attempt, is a ``TestID``.
///
/// In each of the two names a backslash is written `\\`, a slash `\/`, a line feed `\n` and
/// a carriage return `\r`; every other character (spaces and non-ASCII included) is written
/// as it is. So the first unescaped `/` always separates the suite from the test, and an ID
/// is always one line: `Parsers/splits a\/b` is the test `splits a/b` of `Parsers`.
public struct TestPath: Sendable, Hashable, Comparable, CustomStringConvertible {
  /// The suite's name.
  public var suite: String
  /// The test's name.
  public var name: String

  /// Creates the path of the test `name` of the suite `suite`.
  public init(suite: String, name: String) {
    self.suite = suite
    self.name = name
  }

  /// Reads an ID as ``description`` writes it.
  /// - Parameter id: `Suite/test`, escaped as the type's documentation says.
  /// - Throws: ``TestPathError`` naming what is wrong: no unescaped `/`, a second one,
  ///   an unknown escape, a backslash at the end.
  public init(parsing id: String) throws {
    var parts = [String(), String()]
    var part = 0
    var escaping = false
    for character in id {
      if escaping {
        escaping = false
        switch character {
        case "\\": parts[part].append("\\")
        case "/": parts[part].append("/")
        case "n": parts[part].append("\n")
        case "r": parts[part].append("\r")
        default: throw TestPathError(id: id, problem: "unknown escape \\\(character) (escapes are \\\\, \\/, \\n, \\r)")
        }
      } else if character == "\\" {
        escaping = true
      } else if character == "/" {
        guard part == 0 else { throw TestPathError(id: id, problem: "a second unescaped / (write a / inside a name as \\/)") }
        part = 1
      } else {
        parts[part].append(character)
      }
    }
    if escaping { throw TestPathError(id: id, problem: "a \\ at the end (write a \\ inside a name as \\\\)") }
    guard part == 1 else { throw TestPathError(id: id, problem: "no / between the suite and the test") }
    self.init(suite: parts[0], name: parts[1])
  }

  /// The ID: `Suite/test`, each name escaped.
  public var description: String { escapedSuite + "/" + escapedName }

  /// The suite's name as the ID writes it: the unit that suite-granularity sharding hashes.
  package var escapedSuite: String { Self.escaped(suite) }

  /// The test's name as the ID writes it.
  package var escapedName: String { Self.escaped(name) }

  /// Orders paths by their text.
  public static func < (lhs: Self, rhs: Self) -> Bool { lhs.description < rhs.description }

  private static func escaped(_ name: String) -> String {
    // Most names have nothing to escape (those four bytes are never part of another character).
    guard name.utf8.contains(where: { $0 == 0x5C || $0 == 0x2F || $0 == 0x0A || $0 == 0x0D }) else { return name }
    var text = ""
    for character in name {
      switch character {
      case "\\": text += "\\\\"
      case "/": text += "\\/"
      case "\n": text += "\\n"
      case "\r": text += "\\r"
      case "\r\n": text += "\\r\\n"
      default: text.append(character)
      }
    }
    return text
  }
}

/// A test ID that cannot be read (``TestPath/init(parsing:)``).
public struct TestPathError: Error, Equatable, CustomStringConvertible {
  /// The text that was read.
  public var id: String
  /// What is wrong with it.
  public var problem: String

  /// The message a user reads.
  public var description: String { "\"\(id)\" is not a test ID (Suite/test): \(problem)" }
}
