/// A named group of tests with a default waiter strategy and per-test set-up and
/// tear-down, built with a result builder.
///
/// ```swift
/// let loaderSuite = Suite("MessageLoader", waiter: .semaphore) {
///   Test("greets with hello") { t in … }
/// }
/// ```
///
/// The same suite runs unchanged under any waiter: `--waiter NAME`, `--waiter all`, or
/// this default.
public struct Suite: Sendable {
  /// The suite's name: the declared one, with `#01`, `#02`, … after it when an earlier suite
  /// of the run has it too (Go's convention for repeated subtest names).
  public internal(set) var name: String
  /// The name the suite was declared with.
  let declaredName: String
  /// The waiter strategy used unless the configuration chooses another.
  public let defaultWaiter: any Waiter
  /// The tests, in declaration order.
  public let tests: [Test]
  /// Runs before each test, with that test's context.
  public let setUp: (@Sendable (TestContext) throws -> Void)?
  /// Runs after each test (also after a failing one), with that test's context.
  public let tearDown: (@Sendable (TestContext) throws -> Void)?
  /// How the suite's tests may be run: ``SuiteTrait/parallel``, ``SuiteTrait/serialized``.
  public let traits: [SuiteTrait]

  /// Creates a suite.
  /// - Parameters:
  ///   - name: the suite's name, shown in reports.
  ///   - traits: how its tests may run: ``SuiteTrait/parallel`` when they are independent.
  ///   - waiter: the default waiter strategy.
  ///   - setUp: runs before each test.
  ///   - tearDown: runs after each test.
  ///   - tests: the tests.
  public init(_ name: String, _ traits: SuiteTrait..., waiter: some Waiter = .expectation,
              setUp: (@Sendable (TestContext) throws -> Void)? = nil,
              tearDown: (@Sendable (TestContext) throws -> Void)? = nil,
              @SuiteBuilder tests: () -> [Test]) {
    self.init(name, traits: traits, waiter: waiter, setUp: setUp, tearDown: tearDown, tests: tests)
  }

  /// Creates a suite from a list of traits, for traits decided at run time.
  /// - Parameters:
  ///   - name: the suite's name, shown in reports.
  ///   - traits: how its tests may run: ``SuiteTrait/parallel`` when they are independent.
  ///   - waiter: the default waiter strategy.
  ///   - setUp: runs before each test.
  ///   - tearDown: runs after each test.
  ///   - tests: the tests.
  public init(_ name: String, traits: [SuiteTrait], waiter: some Waiter = .expectation,
              setUp: (@Sendable (TestContext) throws -> Void)? = nil,
              tearDown: (@Sendable (TestContext) throws -> Void)? = nil,
              @SuiteBuilder tests: () -> [Test]) {
    self.name = name
    declaredName = name
    self.defaultWaiter = waiter
    self.setUp = setUp
    self.tearDown = tearDown
    self.traits = traits
    let tests = tests()
    self.tests = zip(tests.indices, DeclaredNameNumbering.make(tests.map(\.name))).map { index, name in
      var test = tests[index]
      test.index = index
      test.name = name
      return test
    }
  }
}

/// How a suite's tests may be run.
///
/// By default a suite runs whole, in order, in one worker: a test may rely on what the test
/// before it left behind. A suite whose tests are independent says so with ``parallel``, and
/// with `--workers N` its tests then spread over the N workers, several at once; `--parallel`
/// does the same for every suite that does not say ``serialized``.
public enum SuiteTrait: Sendable, Hashable {
  /// The suite's tests are independent: with `--workers N` they run in parallel, each in
  /// whichever worker is free (reports keep the declared order).
  case parallel
  /// The suite's tests run in order in one worker, even with `--parallel`.
  case serialized
}

extension Suite {
  /// Whether the suite's tests spread over the workers: it is ``SuiteTrait/parallel``, or
  /// `runDefault` (`--parallel`) is on and it is not ``SuiteTrait/serialized``.
  func runsTestsInParallel(byDefault runDefault: Bool) -> Bool {
    if traits.contains(.serialized) { return false }
    return runDefault || traits.contains(.parallel)
  }
}

/// Builds a suite's list of tests; supports `if`, `for` and arrays of tests.
@resultBuilder
public enum SuiteBuilder {
  /// Part of the result builder: one test.
  public static func buildExpression(_ test: Test) -> [Test] { [test] }
  /// Part of the result builder: tests made by a function.
  public static func buildExpression(_ tests: [Test]) -> [Test] { tests }
  /// Part of the result builder: the tests of a block, in order.
  public static func buildBlock(_ parts: [Test]...) -> [Test] { parts.flatMap { $0 } }
  /// Part of the result builder: the tests of a `for` loop.
  public static func buildArray(_ parts: [[Test]]) -> [Test] { parts.flatMap { $0 } }
  /// Part of the result builder: the tests of an `if` without `else`.
  public static func buildOptional(_ part: [Test]?) -> [Test] { part ?? [] }
  /// Part of the result builder: the first branch of an `if`–`else`.
  public static func buildEither(first part: [Test]) -> [Test] { part }
  /// Part of the result builder: the second branch of an `if`–`else`.
  public static func buildEither(second part: [Test]) -> [Test] { part }
}
