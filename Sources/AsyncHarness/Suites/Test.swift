/// One test: a name, traits and a body that receives a ``TestContext``.
///
/// ```swift
/// Test("greets with hello") { t in
///   let loaded = t.expectation("messages loaded")
///   loader.load { _ in loaded.fulfill() }
///   try t.wait(for: loaded)
/// }
/// ```
public struct Test: Sendable {
  /// What a test body is: blocking or `async`.
  public enum Body: Sendable {
    /// Runs on the runner's thread (the main thread of a suites executable), so blocking
    /// waits turn the main run loop.
    case blocking(@Sendable (TestContext) throws -> Void)
    /// Runs in a task while the runner turns the main run loop.
    case async(@Sendable (TestContext) async throws -> Void)
  }

  /// The test's name, unique within its suite: the declared one, with `#01`, `#02`, … after
  /// it when an earlier test of the suite has it too (Go's convention for repeated subtest names).
  public internal(set) var name: String
  /// The name the test was declared with.
  let declaredName: String
  /// The test's traits: skip, known issue, tags.
  public let traits: [TestTrait]
  /// The body.
  public let body: Body
  /// Where the test was declared.
  public let sourceLocation: SourceLocation
  /// The test's place among its suite's tests, counted from 0: set when the suite is built.
  var index = 0

  /// Creates a blocking test.
  public init(_ name: String, _ traits: TestTrait..., fileID: String = #fileID,
              filePath: String = #filePath, line: Int = #line, column: Int = #column,
              body: @escaping @Sendable (TestContext) throws -> Void) {
    self.init(name, traits: traits, body: .blocking(body),
              sourceLocation: SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// Creates an `async` test.
  public init(_ name: String, _ traits: TestTrait..., fileID: String = #fileID,
              filePath: String = #filePath, line: Int = #line, column: Int = #column,
              body: @escaping @Sendable (TestContext) async throws -> Void) {
    self.init(name, traits: traits, body: .async(body),
              sourceLocation: SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// Creates a blocking test from a list of traits, for traits decided at run time.
  public init(_ name: String, traits: [TestTrait], fileID: String = #fileID,
              filePath: String = #filePath, line: Int = #line, column: Int = #column,
              body: @escaping @Sendable (TestContext) throws -> Void) {
    self.init(name, traits: traits, body: .blocking(body),
              sourceLocation: SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// Creates an `async` test from a list of traits, for traits decided at run time.
  public init(_ name: String, traits: [TestTrait], fileID: String = #fileID,
              filePath: String = #filePath, line: Int = #line, column: Int = #column,
              body: @escaping @Sendable (TestContext) async throws -> Void) {
    self.init(name, traits: traits, body: .async(body),
              sourceLocation: SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  init(_ name: String, traits: [TestTrait], body: Body, sourceLocation: SourceLocation) {
    self.name = name
    declaredName = name
    self.traits = traits
    self.body = body
    self.sourceLocation = sourceLocation
  }

  /// The reason the test is skipped, if it is.
  public var skipReason: String? {
    traits.lazy.compactMap { if case .skip(let reason) = $0 { reason } else { nil } }.first
  }

  /// The known issue the test carries, if it does.
  public var knownIssue: String? {
    traits.lazy.compactMap { if case .knownIssue(let reason) = $0 { reason } else { nil } }.first
  }

  /// How many times the test runs again after a failing attempt (the ``TestTrait/retries(_:)``
  /// trait), or `nil` to follow the run's `--retries`.
  public var retries: Int? {
    traits.lazy.compactMap { if case .retries(let count) = $0 { max(0, count) } else { nil } }.first
  }

  /// The test's tags.
  public var tags: [String] {
    traits.flatMap { trait -> [String] in if case .tags(let tags) = trait { tags } else { [] } }
  }
}

/// Something that changes how a test runs or is reported.
public enum TestTrait: Sendable, Hashable {
  /// Do not run the test; report it as skipped with this reason.
  case skip(String)
  /// The test is expected to fail because of this known issue: a failure is reported as a
  /// known issue, not a failure; a pass is a failure ("known issue did not occur").
  case knownIssue(String)
  /// Labels that `--filter` matches as `tag:NAME`.
  case tags([String])
  /// Run the test again, up to this many times, after an attempt that fails or errors,
  /// whatever the run's `--retries` says (a negative count is 0). A test that passes on a
  /// retry is ``Verdict/flaky``; one that fails every attempt fails.
  case retries(Int)

  /// Labels that `--filter` matches as `tag:NAME`.
  public static func tags(_ tags: String...) -> TestTrait { .tags(tags) }
}
