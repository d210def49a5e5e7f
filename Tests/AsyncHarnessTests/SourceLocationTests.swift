@testable import AsyncHarness
import Foundation
import XCTest

/// How reports name a file: by its path from the working directory, which a terminal or an
/// editor can open, else by its file ID.
final class SourceLocationTests: XCTestCase {
  private func location(_ filePath: String) -> SourceLocation {
    SourceLocation(fileID: "LoaderSuites/main.swift", filePath: filePath, line: 15, column: 3)
  }

  func testAFileInsideTheDirectoryIsNamedByItsRelativePath() {
    let inside = location("/work/app/Sources/LoaderSuites/main.swift")
    XCTAssertEqual(inside.path(relativeTo: "/work/app"), "Sources/LoaderSuites/main.swift")
    XCTAssertEqual(inside.path(relativeTo: "/work/app/"), "Sources/LoaderSuites/main.swift")
    XCTAssertEqual(inside.path(relativeTo: "/"), "work/app/Sources/LoaderSuites/main.swift")
  }

  func testAFileOutsideTheDirectoryIsNamedByItsFileID() {
    XCTAssertEqual(location("/elsewhere/main.swift").path(relativeTo: "/work/app"), "LoaderSuites/main.swift")
    // A sibling directory sharing the name's beginning is outside.
    XCTAssertEqual(location("/work/app-2/main.swift").path(relativeTo: "/work/app"), "LoaderSuites/main.swift")
    XCTAssertEqual(location("/work/app").path(relativeTo: "/work/app"), "LoaderSuites/main.swift")
  }

  func testDescriptionIsThePathFromTheWorkingDirectoryAndTheLine() {
    let here = SourceLocation()
    XCTAssertEqual(here.description, "Tests/AsyncHarnessTests/SourceLocationTests.swift:\(here.line)")
    XCTAssertEqual(location("/elsewhere/main.swift").description, "LoaderSuites/main.swift:15")
  }
}
