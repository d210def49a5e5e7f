import Foundation
import Greeting
import XCTest

public final class GreetingXCTests: XCTestCase {
  /// The tests Tests/LinuxMain.swift hands XCTMain.
  public static let allTests = [
    ("testGreets", testGreets),
    ("testFailsWhenAsked", testFailsWhenAsked),
  ]

  func testGreets() {
    XCTAssertEqual(greeting(for: "Ada"), "Hello, Ada")
  }

  func testFailsWhenAsked() {
    if ProcessInfo.processInfo.environment["OWN_ENTRY_POINT_FAIL"] == "1" {
      XCTFail("asked to fail by OWN_ENTRY_POINT_FAIL")
    }
  }

  /// Not in `allTests`: the entry point never runs it.
  func testLeftOutOfTheEntryPoint() {
    XCTFail("Tests/LinuxMain.swift does not list this test")
  }
}
