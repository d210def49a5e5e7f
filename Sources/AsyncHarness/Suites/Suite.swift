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

  /// Creates a suite.
  /// - Parameters:
  ///   - name: the suite's name, shown in reports.
  ///   - waiter: the default waiter strategy.
  ///   - setUp: runs before each test.
  ///   - tearDown: runs after each test.
  ///   - tests: the tests.
  public init(_ name: String, waiter: some Waiter = .expectation,
              setUp: (@Sendable (TestContext) throws -> Void)? = nil,
              tearDown: (@Sendable (TestContext) throws -> Void)? = nil,
              @SuiteBuilder tests: () -> [Test]) {
    self.name = name
    declaredName = name
    self.defaultWaiter = waiter
    self.setUp = setUp
    self.tearDown = tearDown
    let tests = tests()
    self.tests = zip(tests.indices, UniqueNames.make(tests.map(\.name))).map { index, name in
      var test = tests[index]
      test.index = index
      test.name = name
      return test
    }
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
