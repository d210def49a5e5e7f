import Empty
import XCTest

/// A class of no test: a helper, not a test method.
final class NoTestsYet: XCTestCase {
  func helper() {}
}
