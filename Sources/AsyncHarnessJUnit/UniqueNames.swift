/// Hands out names that are unique among those it handed out before: a name already taken
/// gets the first free suffix ` (2)`, ` (3)`, …
///
/// Sanitizing can make different names equal (`"a\u{1}"` and `"a␁"`), and dashboards keep
/// only the first of several testcases with the same `classname` and `name`.
struct UniqueNames {
  private var used: Set<XMLText> = []
  private var nextSuffix: [XMLText: Int] = [:]

  /// Returns `name`, or `name (N)` when `name` is taken.
  mutating func claim(_ name: XMLText) -> XMLText {
    if used.insert(name).inserted { return name }
    var suffix = nextSuffix[name, default: 2]
    while !used.insert(XMLText("\(name.string) (\(suffix))")).inserted { suffix += 1 }
    nextSuffix[name] = suffix + 1
    return XMLText("\(name.string) (\(suffix))")
  }
}
