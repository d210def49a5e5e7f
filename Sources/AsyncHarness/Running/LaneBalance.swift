/// The durations a run recorded (``RunRecord``), by which the next run of the same tests
/// balances its lanes (``LaneBalance``).
struct RecordedDurations: Sendable, Hashable {
  /// Each test's seconds: its attempts' durations added up, as its library timed them.
  var tests: [TestPath: Double] = [:]
  /// Each suite's seconds, from its first test's start to its last test's end (`suiteEnded`),
  /// by the suite's name.
  var suites: [String: Double] = [:]
}

/// How several lanes share a run of another package's tests (`harness test --workers N`):
/// which pieces of which entries each worker runs, and in what order they are handed out.
/// A plain function of estimates, tried without processes.
///
/// Each lane takes the next chain of pieces when it is free, and one worker of the bundle runs
/// a chain. Handed out in plan order, whole, five XCTest classes of 0.2 s over two lanes take
/// 0.6 s (three classes in one lane, two in the other) where 0.5 s is the limit; and five small
/// Swift Testing suites, each in a worker of its own, pay five starts where one worker runs
/// them side by side. So, when the last run's durations are known:
///
/// 1. Each entry's time is estimated: an XCTest class runs one test after another, so its
///    tests' durations added up; a Swift Testing suite runs its tests side by side, so its
///    own duration last time (`suiteEnded`), else its tests' added up. A test the last run
///    did not time counts as the median of those it did.
/// 2. The entries are laid end to end in plan order and cut where each lane's share of the
///    whole ends (McNaughton's wrap-around rule: at most one cut per lane boundary), between
///    two of their tests, and only where both parts last at least ``smallestPiece``. An XCTest
///    class is cut so: XCTest runs a class's tests one after another in one process, and a
///    class's `class func setUp()` and `tearDown()` then run once in each process that runs
///    some of its tests (a failure there is reported by each). So is a Swift Testing suite (or
///    a module's test functions outside any suite) known to hold no serialized test
///    (``ExistingTest/isSerialized``, from what the library preloaded into the listing says):
///    its library runs its tests side by side anyway, and two processes run its two pieces
///    side by side. A suite with a test that is, or may be, `.serialized` (the listing's
///    library said nothing) is never cut: its tests rely on running one at a time, in order,
///    in one process; the suites in it are laid right after it, whole, in its chain (Swift
///    Testing runs them one at a time with it).
/// 3. The pieces of one library laid next to each other within one lane's share are a chain,
///    which one worker runs (its lane takes them one after another), up to half a share: a
///    lane takes at least two chains, so that what the estimates missed is still evened out.
/// 4. The chains are handed out longest first (ties in plan order): whichever lane is free
///    takes the next, so a chain that takes longer or shorter than estimated is evened out by
///    the short ones at the end.
enum LaneBalance {
  /// One entry's part in the balance.
  struct Load: Sendable, Hashable {
    /// The estimated seconds of each of its tests, in run order.
    var tests: [Double]
    /// The estimated seconds of the entry run whole.
    var whole: Double
    /// The library that runs it.
    var library: TestLibrary
    /// Whether its tests may run in several processes: an XCTest class's, a Swift Testing
    /// suite's that is not serialized.
    var cuts: Bool
    /// Whether it runs in the chain of the entry before it, whole: a suite in the same
    /// serialized suite as that entry (``ExistingTest/serializedSuite``).
    var joinsPrevious = false

    /// - Parameter serialized: for a Swift Testing suite, whether one of its tests is, or may
    ///   be, `.serialized`.
    init(tests: [Double], whole: Double, library: TestLibrary, serialized: Bool = true) {
      self.tests = tests
      self.whole = whole
      self.library = library
      cuts = library == .xctest || !serialized
    }
  }

  /// A part of an entry.
  struct Piece: Sendable, Hashable {
    /// The entry's place in the plan.
    var entry: Int
    /// Its tests' places among the entry's tests.
    var tests: Range<Int>
    /// Its estimated seconds.
    var seconds: Double
  }

  /// The shortest estimated time of a piece cut from a class or a suite: a worker's start
  /// (about 20 ms for a test bundle on Linux) and the class's set-up must stay small beside it.
  static let smallestPiece = 0.05

  /// The chains of pieces of `loads` for `lanes` lanes, each in plan order, the chains longest
  /// first (ties in plan order). A load that joins the one before it goes whole into its chain.
  static func chains(of loads: [Load], lanes: Int, smallestPiece: Double = smallestPiece) -> [[Piece]] {
    let share = loads.reduce(0) { $0 + $1.whole } / Double(max(1, lanes))
    var chains: [(share: Int, library: TestLibrary, pieces: [Piece])] = []
    var laidUpTo = 0.0
    for (index, load) in loads.enumerated() {
      if load.joinsPrevious, !chains.isEmpty {
        chains[chains.count - 1].pieces.append(Piece(entry: index, tests: 0..<load.tests.count, seconds: load.whole))
        laidUpTo += load.whole
        continue
      }
      let boundaries = (1..<max(1, lanes)).map { share * Double($0) }.filter { $0 > laidUpTo && $0 < laidUpTo + load.whole }
      let starts = load.cuts ? cuts(of: load, at: boundaries.map { $0 - laidUpTo }, smallestPiece: smallestPiece) : []
      let bounds = [0] + starts + [load.tests.count]
      let scaled = scaledTimes(of: load)
      var start = laidUpTo
      for (lower, upper) in zip(bounds, bounds.dropFirst()) {
        let piece = Piece(entry: index, tests: lower..<upper, seconds: scaled[lower..<upper].reduce(0, +))
        // The lane's share that holds the piece's middle.
        let lane = share > 0 ? min(lanes - 1, Int(((start + piece.seconds / 2) / share).rounded(.down))) : 0
        if let last = chains.last, last.share == lane, last.library == load.library,
           last.pieces.reduce(piece.seconds, { $0 + $1.seconds }) <= share / 2 {
          chains[chains.count - 1].pieces.append(piece)
        } else {
          chains.append((lane, load.library, [piece]))
        }
        start += piece.seconds
      }
      laidUpTo += load.whole
    }
    let seconds = chains.map { $0.pieces.reduce(0) { $0 + $1.seconds } }
    return chains.indices.sorted { seconds[$0] != seconds[$1] ? seconds[$0] > seconds[$1] : $0 < $1 }.map { chains[$0].pieces }
  }

  /// The tests' times scaled to add up to the entry's whole time (equal shares when none is
  /// known to take any time).
  private static func scaledTimes(of load: Load) -> [Double] {
    let sum = load.tests.reduce(0, +)
    guard sum > 0 else { return load.tests.map { _ in load.whole / Double(max(1, load.tests.count)) } }
    return load.tests.map { $0 * load.whole / sum }
  }

  /// Where `load` is cut: before the test nearest to each of `offsets` (where a lane's share
  /// ends, in seconds from the entry's start, ascending), keeping every piece at least
  /// `smallestPiece` long.
  private static func cuts(of load: Load, at offsets: [Double], smallestPiece: Double) -> [Int] {
    var elapsed = [0.0]
    for seconds in scaledTimes(of: load) { elapsed.append(elapsed.last! + seconds) }
    var cuts: [Int] = []
    for offset in offsets {
      let nearest = (1..<max(1, load.tests.count)).min { abs(elapsed[$0] - offset) < abs(elapsed[$1] - offset) }
      if let nearest, elapsed[nearest] - elapsed[cuts.last ?? 0] >= smallestPiece,
         load.whole - elapsed[nearest] >= smallestPiece {
        cuts.append(nearest)
      }
    }
    return cuts
  }
}

extension LaneBalance {
  /// The chains of `plan`'s entries for `lanes` lanes, each piece an entry of some of its
  /// tests, each entry of a chain with the entries after it (``Runner/Plan/Entry/chain``), in
  /// the order they are handed out (``chains(of:lanes:smallestPiece:)``); `nil`, for entries
  /// handed out whole and in plan order, unless the plan is another package's tests (no
  /// harness suite, no schedule) over several lanes. They are balanced when the tests run once
  /// and the last run timed more than half of them (``Configuration/lastDurations``). A run
  /// with no record, after a run of a few of the tests (`--filter`; the others would all count
  /// as the median of a few), or of repeated tests (`--repeat`: each entry runs its
  /// repetitions in its lane) is planned as before, each entry a chain of its own in plan
  /// order, except that the suites in a serialized suite are in its chain, never in a worker
  /// beside it.
  static func entries(of plan: Runner.Plan, lanes: Int) -> [[Runner.Plan.Entry]]? {
    guard lanes > 1 else { return nil }
    var libraries: [TestLibrary] = []
    for entry in plan.entries {
      guard case .library(let library) = entry.host, plan.configuration.schedules(under: entry.host) == nil else { return nil }
      libraries.append(library)
    }
    let layout = layout(of: plan)
    let recorded = plan.entries.map { entry in
      entry.tests.map { plan.configuration.lastDurations?.tests[TestPath(suite: entry.group.name, name: $0.name)] }
    }
    let timed = recorded.flatMap { $0.compactMap(\.self) }
    guard plan.repetitions == 1, let durations = plan.configuration.lastDurations, timed.count * 2 > recorded.joined().count,
      let median = TestTiming.median(timed)
    else {
      // Nothing to balance by: each entry whole, in plan order, but a serialized suite's with it.
      guard layout.contains(where: \.joinsPrevious) else { return nil }
      var chains: [[(entry: Int, tests: Range<Int>)]] = []
      for (entry, joins) in layout {
        let piece = (entry: entry, tests: plan.entries[entry].tests.indices)
        if joins, !chains.isEmpty { chains[chains.count - 1].append(piece) } else { chains.append([piece]) }
      }
      return chains.map { entries(of: plan, pieces: $0) }
    }
    let loads = layout.map { index, joinsPrevious in
      let (entry, library) = (plan.entries[index], libraries[index])
      let tests = recorded[index].map { $0 ?? median }
      let added = tests.reduce(0, +)
      guard library == .swiftTesting else { return Load(tests: tests, whole: added, library: library) }
      let serialized = entry.tests.contains { item in
        guard case .existing(let test) = item.source else { return true }
        return test.isSerialized != false
      }
      var load = Load(tests: tests, whole: durations.suites[entry.group.name] ?? added, library: library, serialized: serialized)
      load.joinsPrevious = joinsPrevious
      return load
    }
    return chains(of: loads, lanes: lanes).map { chain in
      entries(of: plan, pieces: chain.map { (layout[$0.entry].entry, $0.tests) })
    }
  }

  /// The plan's entries in the order they are laid end to end: plan order, except that the
  /// entries of one serialized suite (the suite and the suites in it,
  /// ``ExistingTest/serializedSuite``) follow the first of them, each joining the one before
  /// it: Swift Testing runs their tests one at a time, in one process.
  private static func layout(of plan: Runner.Plan) -> [(entry: Int, joinsPrevious: Bool)] {
    let serializedSuites = plan.entries.map { entry -> String? in
      guard case .existing(let test)? = entry.tests.first?.source else { return nil }
      return test.serializedSuite
    }
    var laid = Set<Int>()
    var layout: [(entry: Int, joinsPrevious: Bool)] = []
    for index in serializedSuites.indices where !laid.contains(index) {
      layout.append((index, false))
      guard let suite = serializedSuites[index] else { continue }
      for mate in serializedSuites.indices.dropFirst(index + 1) where serializedSuites[mate] == suite {
        layout.append((mate, true))
        laid.insert(mate)
      }
    }
    return layout
  }

  /// A chain of `pieces` of `plan`'s entries (each an entry's place and its tests' places), each
  /// an entry of those tests, each with the entries after it (``Runner/Plan/Entry/chain``).
  private static func entries(of plan: Runner.Plan, pieces: [(entry: Int, tests: Range<Int>)]) -> [Runner.Plan.Entry] {
    var entries = pieces.map { piece in
      let entry = plan.entries[piece.entry]
      return Runner.Plan.Entry(group: entry.group, host: entry.host, tests: Array(entry.tests[piece.tests]),
                               groupIndex: entry.groupIndex)
    }
    for index in entries.indices { entries[index].chain = Array(entries[(index + 1)...]) }
    return entries
  }
}
