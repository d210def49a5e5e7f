import AsyncHarness
import XCTest

/// The exact messages a user reads, with the file and line they point at.
final class FailureMessageTests: XCTestCase {
  func testTimeoutMessageNamesExpectationTimeoutAndLocations() throws {
    let result = try onlyResult(of: [Suite("Messages") {
      Test("times out") { t in
        let loaded = t.expectation("messages loaded"); let createdLine = #line
        try t.wait(for: loaded, timeout: .milliseconds(20)); let waitLine = #line
        XCTAssertEqual(createdLine + 1, waitLine)
      }
    }])
    XCTAssertEqual(result.verdict, .failed)
    let issue = try XCTUnwrap(result.issues.first)
    XCTAssertEqual(issue.kind, .waitFailed)
    let created = issue.sourceLocation!.line - 1
    XCTAssertEqual(issue.message,
                   "Exceeded timeout of 0.02 seconds, with unfulfilled expectations: \"messages loaded\" created at FailureMessageTests.swift:\(created)")
    XCTAssertEqual(issue.sourceLocation?.fileName, "FailureMessageTests.swift")
  }

  func testExpectMessageAndLocation() throws {
    let expectLine = #line + 2
    let result = try onlyResult(of: [Suite("Messages") {
      Test("expects") { t in t.expect(1 + 1 == 3, "arithmetic") }
    }])
    XCTAssertEqual(result.verdict, .failed)
    XCTAssertEqual(result.issues.map(\.description), ["Expectation failed: arithmetic (FailureMessageTests.swift:\(expectLine))"])
  }

  func testExpectEqualShowsBothValues() throws {
    let result = try onlyResult(of: [Suite("Messages") {
      Test("compares") { t in t.expectEqual("hola", "hello") }
    }])
    XCTAssertEqual(result.issues.map(\.message), ["Expected hello, got hola"])
  }

  func testRequireStopsTheTest() throws {
    let result = try onlyResult(of: [Suite("Messages") {
      Test("requires") { t in
        let value: Int? = nil
        _ = try t.require(value, "a stored image")
        t.fail("not reached")
      }
    }])
    XCTAssertEqual(result.issues.map(\.message), ["Required value of type Int was nil: a stored image"])
  }

  func testThrownErrorIsAnError() throws {
    struct Broken: Error {}
    let result = try onlyResult(of: [Suite("Messages") {
      Test("throws") { _ in throw Broken() }
    }])
    XCTAssertEqual(result.verdict, .errored)
    XCTAssertEqual(result.issues.first?.kind, .errorThrown)
    XCTAssertTrue(result.issues.first?.message.hasPrefix("Caught error: ") == true)
  }

  func testZeroFulfillmentCountIsMisuse() throws {
    let result = try onlyResult(of: [Suite("Messages") {
      Test("bad count") { t in _ = t.expectation("none", expectedFulfillmentCount: 0, requiresWait: false) }
    }])
    XCTAssertEqual(result.verdict, .errored)
    XCTAssertEqual(result.issues.map(\.message),
                   ["API violation - expectedFulfillmentCount of \"none\" must be at least 1, not 0"])
  }

  func testForeignExpectationIsMisuse() throws {
    let recorder = try runSuites([Suite("Messages") {
      Test("creates") { t in Leftover.value.withLock { $0 = t.expectation("from the first test", requiresWait: false) } }
      Test("waits on another test's expectation") { t in
        let foreign = try t.require(Leftover.value.withLock { $0 })
        try t.wait(for: foreign)
      }
    }])
    let second = try XCTUnwrap(recorder.results.last?.result)
    XCTAssertEqual(second.verdict, .errored)
    XCTAssertTrue(second.issues.first?.message.hasPrefix(
      "API violation - expectation \"from the first test\" created at FailureMessageTests.swift:") == true)
    XCTAssertTrue(second.issues.first?.message.hasSuffix("belongs to another test (Messages/creates)") == true)
  }

  func testSynchronousFallbackWarns() throws {
    var configuration = Configuration()
    configuration.waiters = .named("synchronous")
    let result = try onlyResult(of: [Suite("Messages") {
      Test("escapes") { t in
        let done = t.expectation("done")
        // The real main queue, not t.main: it runs only once the wait turns the run loop.
        DispatchQueue.main.async { done.fulfill() }
        try t.wait(for: done)
      }
    }], configure: { $0 = configuration })
    XCTAssertEqual(result.verdict, .passed)
    XCTAssertEqual(result.issues.map(\.kind), [.warning])
    XCTAssertTrue(result.issues.first?.message.hasPrefix(
      "synchronous waiter: the wait for \"done\" was not satisfied when the wait began at FailureMessageTests.swift:") == true)
  }
}

import Synchronization

enum Leftover {
  static let value = Mutex<Expectation?>(nil)
}
