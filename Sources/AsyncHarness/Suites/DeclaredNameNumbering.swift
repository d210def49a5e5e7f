/// Names made unique the way Go's `testing` package names repeated subtests: the first of a
/// name keeps it, later ones get `#01`, `#02`, … (skipping any that is already taken). Two
/// tests of a suite (or two suites of a run) may be declared with one name, as a `for` loop
/// whose labels repeat does; each then has a name of its own in every event and report, in
/// `--list`, `--only` and `--shard`, the same in every process that builds the suites.
enum DeclaredNameNumbering {
  /// `names`, each made unique among those before it.
  static func make(_ names: [String]) -> [String] {
    var taken = Set<String>()
    var nextNumber: [String: Int] = [:]
    return names.map { name in
      guard taken.contains(name) else {
        taken.insert(name)
        return name
      }
      var number = nextNumber[name, default: 1]
      var candidate: String
      repeat {
        candidate = name + "#" + (number < 10 ? "0\(number)" : "\(number)")
        number += 1
      } while taken.contains(candidate)
      nextNumber[name] = number
      taken.insert(candidate)
      return candidate
    }
  }

  /// One line for each name given more than once (or made unique because an earlier one
  /// took it), saying what each is reported as: `suite "Math" has 2 tests named "adds 1";
  /// they are reported as "adds 1", "adds 1#01"`.
  static func warnings(for suites: [Suite]) -> [String] {
    func repeated(_ declared: [String], _ unique: [String]) -> [(name: String, reported: [String])] {
      var order: [String] = []
      var reported: [String: [String]] = [:]
      for (name, unique) in zip(declared, unique) {
        if reported[name] == nil { order.append(name) }
        reported[name, default: []].append(unique)
      }
      return order.compactMap { name in reported[name]! == [name] ? nil : (name, reported[name]!) }
    }
    func quoted(_ names: [String]) -> String { names.map { "\"\($0)\"" }.joined(separator: ", ") }
    func line(_ what: String, _ container: String, _ name: String, _ reported: [String]) -> String {
      reported.count == 1
        ? "\(container)a \(what) named \"\(name)\", a name given to another; it is reported as \(quoted(reported))"
        : "\(container)\(reported.count) \(what)s named \"\(name)\"; they are reported as \(quoted(reported))"
    }
    var lines = repeated(suites.map(\.declaredName), suites.map(\.name)).map { name, reported in
      line("suite", "the run has ", name, reported)
    }
    for suite in suites {
      lines += repeated(suite.tests.map(\.declaredName), suite.tests.map(\.name)).map { name, reported in
        line("test", "suite \"\(suite.name)\" has ", name, reported)
      }
    }
    return lines
  }
}

extension Suite {
  /// `suites`, each named uniquely (``DeclaredNameNumbering``).
  static func uniquelyNamed(_ suites: [Suite]) -> [Suite] {
    zip(suites, DeclaredNameNumbering.make(suites.map(\.name))).map { suite, name in
      var suite = suite
      suite.name = name
      return suite
    }
  }
}
