import GreetingTests
import XCTest

// The bundle's entry point: XCTest runs the tests listed here, and only those.
XCTMain([testCase(GreetingXCTests.allTests)])
