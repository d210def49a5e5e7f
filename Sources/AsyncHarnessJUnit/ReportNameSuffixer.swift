/// Hands out names that are unique among those it handed out before: a name already taken
/// gets the first free suffix ` (2)`, ` (3)`, … that is neither taken nor reserved.
///
/// Sanitizing and cutting can make different names equal (`"a\u{1}"` and `"a␁"`), and
/// dashboards keep only the first of several testcases with the same `classname` and `name`.
/// Reserving the names known in advance (every test of a suite, every testcase of the
/// reports being merged) keeps a renamed duplicate from taking the name of a test literally
/// called `dup (2)`: that test keeps its name, and the duplicate becomes `dup (3)`.
///
/// The reserved names are looked up only when renaming, so they become a set only then: a
/// suite without duplicates (the usual one) never hashes them.
struct ReportNameSuffixer {
  private var used: Set<XMLText> = []
  private var reserving: [XMLText]
  private var reserved: Set<XMLText>?
  private var nextSuffix: [XMLText: Int] = [:]

  /// Creates names that avoid `reserved` when renaming.
  init(reserving reserved: some Sequence<XMLText> = []) {
    reserving = Array(reserved)
    used.reserveCapacity(reserving.count)
  }

  /// Returns `name`, or `name (N)` when `name` is taken.
  mutating func claim(_ name: XMLText) -> XMLText {
    if used.insert(name).inserted { return name }
    if reserved == nil {
      reserved = Set(reserving)
      reserving = []
    }
    var suffix = nextSuffix[name, default: 2]
    var candidate: XMLText { name + XMLText(" (\(suffix))") }
    while reserved!.contains(candidate) || !used.insert(candidate).inserted { suffix += 1 }
    nextSuffix[name] = suffix + 1
    return candidate
  }
}
