import Foundation
import Ledger
import Testing

/// Swift Testing tests: pass, fail, throw, skip, known issue, parameterized, print, async,
/// display names and a nested suite.
@Suite("Ledger arithmetic") struct LedgerSuite {
  @Test func passes() {
    var ledger = Ledger()
    ledger.enter(2)
    #expect(ledger.balance == 2)
  }

  @Test func failsWithExpect() {
    var ledger = Ledger()
    ledger.enter(2)
    #expect(ledger.balance == 3, "two is not three")
  }

  @Test func throwsAnError() throws {
    throw LedgerError("thrown by a Swift Testing test")
  }

  @Test("A test with a display name") func namedTest() {
    #expect(Ledger().entries.isEmpty)
  }

  @Test(.disabled("not on this machine")) func disabled() {
    Issue.record("a disabled test ran")
  }

  @Test func knownIssue() {
    withKnownIssue("rounding is off by one") {
      #expect(Ledger().balance == 1)
    }
  }

  @Test(arguments: [1, 2, 3]) func parameterized(amount: Int) {
    var ledger = Ledger()
    ledger.enter(amount)
    #expect(ledger.balance != 2, "amount \(amount)")
  }

  @Test(arguments: ["a", "b"], [10, 20]) func twoArguments(label: String, amount: Int) {
    #expect(!label.isEmpty && amount > 0)
  }

  @Test func prints() {
    print("stdout line from prints()")
    FileHandle.standardError.write(Data("stderr line from prints()\n".utf8))
  }

  @Test func asyncPasses() async {
    var ledger = Ledger()
    ledger.enter(4)
    #expect(await ledger.settledBalance() == 4)
  }

  @Test func asyncFails() async throws {
    let balance = await Ledger().settledBalance()
    try #require(balance > 0, "an empty ledger has no balance")
  }

  @Suite struct Nested {
    @Test func insideNested() {
      #expect(Ledger().balance == 0)
    }

    @Suite("Deeper, with a display name") struct Deeper {
      @Test func insideDeeper() {}
    }
  }
}

/// Tests that run one at a time, in order.
@Suite(.serialized) struct SerializedSuite {
  @Test func first() {}
  @Test func second() {}
  @Test(arguments: 1...3) func third(step: Int) {
    #expect(step > 0)
  }
}

/// Names a suite repeats: overloads, and one display name on two tests. The ones declared
/// second fail, so a report that ran the first twice would show it.
@Suite struct Repeats {
  @Test(arguments: [1]) func overloaded(amount: Int) {
    #expect(amount == 1)
  }

  @Test(arguments: ["one"]) func overloaded(amount: String) {
    #expect(amount == "two", "the String overload")
  }

  @Test("Same words") func sameWordsFirst() {}

  @Test("Same words") func sameWordsSecond() {
    Issue.record("the second test with these words")
  }
}

/// A suite skipped whole.
@Suite(.disabled("the whole suite is off")) struct DisabledSuite {
  @Test func neverRuns() {}
}

/// Crash, fatal error, exit and hang, each only with EXISTING_TESTS_RUDE=1.
@Suite struct RudeSwiftTests {
  @Test func indexPastTheEnd() {
    guard rude else { return }
    print("indexPastTheEnd: printed before it goes")
    let ledger = Ledger()
    _ = ledger.entry(at: pastTheEnd(of: ledger.entries))
  }

  @Test func callsFatalError() {
    guard rude else { return }
    print("callsFatalError: printed before it goes")
    fatalError("fatalError in a Swift Testing test")
  }

  @Test func callsExit() {
    guard rude else { return }
    print("callsExit: printed before it goes")
    exit(3)
  }

  @Test func hangs() {
    guard rude else { return }
    print("hangs: printed before it goes")
    blockForever()
  }
}

/// A test outside any suite.
@Test func freeFunction() {
  #expect(Ledger().entries.count == 0)
}

/// A test that reads a file of the package by a relative path, as `swift test` lets it: the
/// test bundle runs in the package's directory.
@Suite struct Files {
  @Test func readsAFileByARelativePath() {
    #expect(FileManager.default.fileExists(atPath: "Tests/LedgerTests/LedgerSwiftTests.swift"),
            "run in \(FileManager.default.currentDirectoryPath)")
  }
}
