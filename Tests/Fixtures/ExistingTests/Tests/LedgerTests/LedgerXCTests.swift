import Foundation
import Ledger
import XCTest

/// Plain XCTest tests: pass, fail, throw, skip, print, async.
final class LedgerXCTests: XCTestCase {
  func testPasses() {
    var ledger = Ledger()
    ledger.enter(2)
    ledger.enter(3)
    XCTAssertEqual(ledger.balance, 5)
  }

  func testFailsWithXCTAssert() {
    var ledger = Ledger()
    ledger.enter(2)
    XCTAssertEqual(ledger.balance, 3, "two is not three")
  }

  func testThrows() throws {
    throw LedgerError("thrown by an XCTest")
  }

  func testSkipped() throws {
    throw XCTSkip("not on this machine")
  }

  func testPrints() {
    print("stdout line from testPrints")
    FileHandle.standardError.write(Data("stderr line from testPrints\n".utf8))
  }

  func testAsyncPasses() async {
    var ledger = Ledger()
    ledger.enter(7)
    let balance = await ledger.settledBalance()
    XCTAssertEqual(balance, 7)
  }

  func testAsyncFails() async throws {
    let balance = await Ledger().settledBalance()
    XCTAssertGreaterThan(balance, 0, "an empty ledger has no balance")
  }
}

/// A second class, to list and select by class.
final class BalanceXCTests: XCTestCase {
  func testEmptyBalance() {
    XCTAssertEqual(Ledger().balance, 0)
  }

  func testTwoFailuresInOneTest() {
    XCTAssertTrue(false, "first")
    XCTFail("second")
  }
}

/// Crash, fatal error, exit and hang, each only with EXISTING_TESTS_RUDE=1; the test after
/// them shows which tests a crash kept from running.
final class RudeXCTests: XCTestCase {
  func testA_IndexPastTheEnd() {
    guard rude else { return }
    print("testA_IndexPastTheEnd: printed before it goes")
    let ledger = Ledger()
    _ = ledger.entry(at: pastTheEnd(of: ledger.entries))
  }

  func testB_FatalError() {
    guard rude else { return }
    print("testB_FatalError: printed before it goes")
    fatalError("fatalError in an XCTest")
  }

  func testC_Exit() {
    guard rude else { return }
    print("testC_Exit: printed before it goes")
    exit(3)
  }

  func testD_Hangs() {
    guard rude else { return }
    print("testD_Hangs: printed before it goes")
    blockForever()
  }

  func testE_AfterTheRudeOnes() {
    XCTAssertTrue(true)
  }
}

/// A test that reads a file of the package by a relative path, as `swift test` lets it: the
/// test bundle runs in the package's directory.
final class FilesXCTests: XCTestCase {
  func testReadsAFileByARelativePath() {
    XCTAssertTrue(FileManager.default.fileExists(atPath: "Tests/LedgerTests/LedgerXCTests.swift"),
                  "run in \(FileManager.default.currentDirectoryPath)")
  }
}
