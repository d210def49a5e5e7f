@testable import AsyncHarness
import Foundation
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
                   "Exceeded timeout of 0.02 seconds, with unfulfilled expectations: \"messages loaded\" created at Tests/AsyncHarnessTests/FailureMessageTests.swift:\(created)")
    XCTAssertEqual(issue.sourceLocation?.fileName, "FailureMessageTests.swift")
  }

  func testExpectMessageAndLocation() throws {
    let expectLine = #line + 2
    let result = try onlyResult(of: [Suite("Messages") {
      Test("expects") { t in t.expect(1 + 1 == 3, "arithmetic") }
    }])
    XCTAssertEqual(result.verdict, .failed)
    XCTAssertEqual(result.issues.map(\.description), ["Expectation failed: arithmetic (Tests/AsyncHarnessTests/FailureMessageTests.swift:\(expectLine))"])
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

  func testThrownErrorIsAnErrorWrittenAsTheUserWroteIt() throws {
    struct Broken: Error {}
    let testLine = #line + 2
    let result = try onlyResult(of: [Suite("Messages") {
      Test("throws") { _ in throw Broken() }
    }])
    XCTAssertEqual(result.verdict, .errored)
    XCTAssertEqual(result.issues.map(\.kind), [.errorThrown])
    XCTAssertEqual(result.issues.map(\.description),
                   ["Caught error: Broken() (Tests/AsyncHarnessTests/FailureMessageTests.swift:\(testLine))"])
  }

  func testErrorsReadWithoutModuleOrUnknownContext() {
    struct Boom: Error {}
    final class Failure: Error {}
    XCTAssertEqual(Issue.describe(Boom()), "Boom()")
    XCTAssertEqual(Issue.describe(LoaderError.notFound(id: 3)), "LoaderError.notFound(id: 3)")
    XCTAssertEqual(Issue.describe(LoaderError.offline), "LoaderError.offline")
    XCTAssertEqual(Issue.describe(Failure()), "Failure")
    XCTAssertEqual(Issue.describe(Described()), "the disk is full")
    XCTAssertEqual(Issue.describe(CancellationError()), "CancellationError()")
    XCTAssertEqual(Issue.describe(NSError(domain: "Loader", code: 7)), "Error Domain=Loader Code=7 \"(null)\"")
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
    let createLine = #line + 2
    let recorder = try runSuites([Suite("Messages") {
      Test("creates") { t in Leftover.value.withLock { $0 = t.expectation("from the first test", requiresWait: false) } }
      Test("waits on another test's expectation") { t in
        let foreign = try t.require(Leftover.value.withLock { $0 })
        try t.wait(for: foreign)
      }
    }])
    let second = try XCTUnwrap(recorder.results.last?.result)
    XCTAssertEqual(second.verdict, .errored)
    XCTAssertEqual(second.issues.map(\.description), [
      "API violation - expectation \"from the first test\" created at Tests/AsyncHarnessTests/FailureMessageTests.swift:\(createLine) belongs to another test (Messages/creates) (Tests/AsyncHarnessTests/FailureMessageTests.swift:\(createLine + 3))",
    ])
  }

  func testSynchronousFallbackWarns() throws {
    var configuration = Configuration()
    configuration.waiters = .named("synchronous")
    let waitLine = #line + 6
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
    XCTAssertEqual(result.issues.map(\.description), [
      "synchronous waiter: the wait for \"done\" was not satisfied when the wait began at Tests/AsyncHarnessTests/FailureMessageTests.swift:\(waitLine); work escaped the test's queues, so it fell back to a blocking wait (Tests/AsyncHarnessTests/FailureMessageTests.swift:\(waitLine))",
    ])
  }
}

import Synchronization

enum Leftover {
  static let value = Mutex<Expectation?>(nil)
}

private enum LoaderError: Error {
  case notFound(id: Int)
  case offline
}

private struct Described: Error, CustomStringConvertible {
  var description: String { "the disk is full" }
}
