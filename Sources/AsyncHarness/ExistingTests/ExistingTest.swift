/// A test that a package already has, as its test bundle lists it: an XCTest test method or
/// a Swift Testing test function (a parameterized one is one test). `harness test` (issue 32)
/// lists these and hands them to worker processes of the package's own test bundle; see
/// docs/RUNNING-EXISTING-TESTS.md for the bundle's formats.
///
/// Neither listing says whether a Swift Testing suite is `.serialized` or a test
/// `.disabled` (and why): a disabled test is known only when the tests run, from the event
/// stream's `testSkipped`, and an XCTest skip from its channel's record; whether a Swift
/// Testing test is serialized, from what the preloaded library says during the listing
/// (``withSerialization(_:of:)``).
struct ExistingTest: Sendable, Equatable, Codable {
  /// The library the test belongs to; one worker process runs one library's tests.
  var library: TestLibrary
  /// The test's suite: the XCTest class (`LedgerTests.BalanceXCTests`), or the Swift Testing
  /// suite's ID (`LedgerTests.LedgerSuite/Nested`), or for a Swift Testing function outside
  /// any suite its module (`LedgerTests`).
  var suite: String
  /// The suite's display name (`@Suite("Ledger arithmetic")`), when it has one.
  var suiteDisplayName: String?
  /// The test's name as its library shows it: `testEmptyBalance`, `parameterized(amount:)`.
  var name: String
  /// The test's display name (`@Test("A test with a display name")`), when it has one.
  var displayName: String?
  /// What selects exactly this test: `Module.Class/method` for XCTest, the full Swift Testing
  /// ID (`Module.Suite/name()/File.swift:line:column`) for Swift Testing.
  var id: String
  /// Whether a Swift Testing test takes arguments (`@Test(arguments:)`); never for XCTest.
  var isParameterized: Bool
  /// Where the test is declared; unknown for XCTest.
  var sourceLocation: SourceLocation?
  /// Whether a Swift Testing test runs one at a time with the others of its suite: it, or a
  /// suite around it, carries `.serialized`. `nil` when not known (XCTest, or a listing whose
  /// library said nothing).
  var isSerialized: Bool?
  /// The outermost suite around a Swift Testing test that carries `.serialized`, by its ID:
  /// Swift Testing runs every test in it, in the suites in it too, one at a time, so they
  /// run in one process. `nil` when there is none, or it is not known.
  var serializedSuite: String?
}

/// A listing that is not what a test bundle prints.
struct ExistingTestsListingError: Error, CustomStringConvertible {
  /// The line, counted from 1, and what is wrong with it.
  var reason: String

  var description: String { reason }
}
