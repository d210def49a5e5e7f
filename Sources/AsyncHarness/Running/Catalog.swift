/// The tests a run chooses from, in groups, each test keyed by its path (its group's
/// name and its own, both unique in the run: ``TestPath``), with what planning,
/// filtering, sharding and judging need of it. Two front ends make one: harness suites
/// (``init(suites:)``), and the tests another package's test bundle lists (`harness test`),
/// which are neither harness suites nor tests with a body this process could run: their
/// bundle runs them under their own library.
@_spi(ForToolsIntegrationOnly) public struct Catalog: Sendable {
  /// A group of tests: a harness suite, or a suite of another package's tests (an XCTest
  /// class, a Swift Testing suite).
  @_spi(ForToolsIntegrationOnly) public struct Group: Sendable {
    /// Where a group comes from.
    enum Source: Sendable {
      /// A harness suite: its tests run under waiter strategies, with its set-up and tear-down.
      case suite(Suite)
      /// A suite of another package's tests, which its testing library runs.
      case library(TestLibrary)
    }

    /// The group's name, unique in the run.
    @_spi(ForToolsIntegrationOnly) public let name: String
    /// The tests, in declaration order (their library's, for another package's tests).
    @_spi(ForToolsIntegrationOnly) public let tests: [Item]
    let source: Source

    /// Whether the group's tests spread over the lanes: a harness suite that is
    /// ``SuiteTrait/parallel``, or any not ``SuiteTrait/serialized`` when `runDefault`
    /// (`--parallel`) is on; never another package's suite, whose library decides how its
    /// tests run beside each other.
    func runsTestsInParallel(byDefault runDefault: Bool) -> Bool {
      guard case .suite(let suite) = source else { return false }
      return suite.runsTestsInParallel(byDefault: runDefault)
    }

    /// What the group's tests run under with `configuration`: each waiter strategy it
    /// selects for a harness suite, the library for another package's suite.
    /// - Throws: ``RunnerError/unknownWaiter(_:known:)`` for a waiter name not in `registry`.
    func hosts(configuration: Configuration, registry: WaiterRegistry) throws -> [Host] {
      switch (source, configuration.waiters) {
      case (.library(let library), _): return [.library(library)]
      case (.suite(let suite), .suiteDefault): return [.waiter(suite.defaultWaiter)]
      case (.suite, .all): return registry.waiters.map(Host.waiter)
      case (.suite, .named(let name)):
        guard let waiter = registry.waiter(named: name) else { throw RunnerError.unknownWaiter(name, known: registry.names) }
        return [.waiter(waiter)]
      }
    }
  }

  /// One test of a group.
  @_spi(ForToolsIntegrationOnly) public struct Item: Sendable {
    /// Where a test comes from.
    enum Source: Sendable {
      /// A harness test, with its body.
      case test(Test)
      /// A test of another package's bundle, which only that bundle can run.
      case existing(ExistingTest)
    }

    /// The test's name, unique in its group.
    @_spi(ForToolsIntegrationOnly) public let name: String
    /// The test's place among its group's tests, counted from 0.
    @_spi(ForToolsIntegrationOnly) public let index: Int
    /// Where the test is declared (for another package's XCTest test, which no listing
    /// places, its module).
    @_spi(ForToolsIntegrationOnly) public let sourceLocation: SourceLocation
    let source: Source

    /// The reason the test is skipped without running, if it is (``TestTrait/skip(_:)``);
    /// another package's test says so only when its library runs it.
    @_spi(ForToolsIntegrationOnly) public var skipReason: String? { harnessTest?.skipReason }
    /// The known issue the test carries (``TestTrait/knownIssue(_:)``); another package's
    /// tests carry theirs in their own library's records.
    @_spi(ForToolsIntegrationOnly) public var knownIssue: String? { harnessTest?.knownIssue }
    /// How many times the test runs again after a failing attempt, or `nil` to follow the run.
    @_spi(ForToolsIntegrationOnly) public var retries: Int? { harnessTest?.retries }
    /// The test's tags, which `--filter tag:NAME` selects.
    @_spi(ForToolsIntegrationOnly) public var tags: [String] { harnessTest?.tags ?? [] }

    /// The harness test, when the item is one.
    var harnessTest: Test? {
      guard case .test(let test) = source else { return nil }
      return test
    }

    /// Whether the test's body is `async`: one that runs side by side with others in a
    /// worker, under a strategy that allows it.
    var isAsync: Bool {
      guard case .async = harnessTest?.body else { return false }
      return true
    }
  }

  /// What a group's tests run under, named in each test's identity (`TestID.host`): a
  /// harness suite's waiter strategy, or another package's testing library.
  @_spi(ForToolsIntegrationOnly) public enum Host: Sendable {
    /// A waiter strategy, for a harness suite's tests.
    case waiter(any Waiter)
    /// A testing library, for another package's tests, which run in their own bundle.
    case library(TestLibrary)

    /// The strategy's or the library's name: `expectation`, `xctest`, `swift-testing`.
    @_spi(ForToolsIntegrationOnly) public var name: String {
      switch self {
      case .waiter(let waiter): waiter.name
      case .library(let library): library.name
      }
    }

    /// Whether `async` tests may run side by side under it (``Waiter/runsTestsSideBySide``);
    /// a library runs its tests as it does itself.
    var runsTestsSideBySide: Bool {
      guard case .waiter(let waiter) = self else { return false }
      return waiter.runsTestsSideBySide
    }
  }

  /// The groups, in run order.
  @_spi(ForToolsIntegrationOnly) public let groups: [Group]
  /// What failed while the tests were listed (another package's listing that crashed): each a
  /// failure outside every test, which the run reports as it starts, and which fails it.
  var listingFailures: [OutsideFailure] = []

  /// The catalog of harness suites: `suites` in order, each named uniquely (a repeated
  /// suite name gets `#01`, `#02`, …), each test as its suite numbered it.
  @_spi(ForToolsIntegrationOnly) public init(suites: [Suite]) {
    groups = Suite.uniquelyNamed(suites).map { suite in
      Group(name: suite.name, tests: suite.tests.map { test in
        Item(name: test.name, index: test.index, sourceLocation: test.sourceLocation, source: .test(test))
      }, source: .suite(suite))
    }
  }

  /// The catalog of another package's tests, as its bundle listed them: one group per test
  /// suite of each library, in first-seen order (a suite name both libraries use is numbered,
  /// as a repeated harness suite name is). A test is named by its display name when it has
  /// one (`@Test("Adds two amounts")`), else as its library names it; names a group repeats
  /// (overloads, display names) are numbered as in harness suites (`f(x:)#01`).
  init(existing tests: [ExistingTest], listingFailures: [OutsideFailure] = []) {
    self.listingFailures = listingFailures
    struct Key: Hashable {
      let library: TestLibrary
      let suite: String
    }
    var order: [Key] = []
    var bySuite: [Key: [ExistingTest]] = [:]
    for test in tests {
      let key = Key(library: test.library, suite: test.suite)
      if bySuite[key] == nil { order.append(key) }
      bySuite[key, default: []].append(test)
    }
    groups = zip(order, DeclaredNameNumbering.make(order.map(\.suite))).map { key, name in
      let members = bySuite[key]!
      let names = DeclaredNameNumbering.make(members.map { $0.displayName ?? $0.name })
      return Group(name: name, tests: members.indices.map { index in
        let test = members[index]
        let module = String(test.suite.prefix { $0 != "." && $0 != "/" })
        return Item(name: names[index], index: index,
                    sourceLocation: test.sourceLocation ?? SourceLocation(fileID: module, filePath: module, line: 0, column: 0),
                    source: .existing(test))
      }, source: .library(key.library))
    }
  }

  /// The harness suites of the catalog, in order.
  var suites: [Suite] {
    groups.compactMap { group in
      guard case .suite(let suite) = group.source else { return nil }
      return suite
    }
  }

  /// Every test's path.
  var testPaths: Set<TestPath> {
    Set(groups.lazy.flatMap { group in group.tests.lazy.map { TestPath(suite: group.name, name: $0.name) } })
  }
}

/// A testing library whose tests `harness test` runs in their own test bundle.
@_spi(ForToolsIntegrationOnly) public enum TestLibrary: Sendable, Hashable, CaseIterable, Codable {
  /// XCTest: an `XCTestCase` method, run by `<bundle> Module.Class/method,…`.
  case xctest
  /// Swift Testing: a `@Test` function, run by `<bundle> --testing-library swift-testing`.
  case swiftTesting

  /// The library's name in reports and in a test's identity (`TestID.host`), where a harness
  /// suite names its waiter: `xctest`, `swift-testing`.
  @_spi(ForToolsIntegrationOnly) public var name: String {
    switch self {
    case .xctest: "xctest"
    case .swiftTesting: "swift-testing"
    }
  }

  /// The library named `name` in reports, if one is.
  @_spi(ForToolsIntegrationOnly) public init?(named name: String) {
    guard let library = Self.allCases.first(where: { $0.name == name }) else { return nil }
    self = library
  }
}
